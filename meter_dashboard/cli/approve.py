"""``meter-dashboard approve``: approve or deny each modification of a trace (Feng et al.).

No Panel import here (the CLI runs in CI pipelines).
"""
from __future__ import annotations

import math

from .._validation import InputError, check_int, check_number, raw
from ._common import add_format_option, emit, table

METHOD_CHOICES = ("naive", "bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp", "pres-srgp")

_FLAGS = {
    "alpha": "--alpha",
    "success_weight": "--success-weight",
    "margin": "--margin",
    "margin_step": "--margin-step",
    "seed": "--seed",
    "steps": "--steps",
    "method": "--method",
    "failure_threshold": "--failure-threshold",
    "pres_share": "--pres-share",
    "max_conditioning": "--max-conditioning",
    "prespecified": "--prespecified",
}


def register(sub) -> None:
    p = sub.add_parser(
        "approve",
        help="approve/deny each modification of a trace with Bonferroni or an SRGP (test-set reuse)",
        description=(
            "Sequentially test modifications of a model on one reused test set, releasing only approve/deny "
            "(Feng et al., 'Sequential algorithmic modification with test data reuse'). Test j: does "
            "modification j lower the expected loss by more than the margin delta_j (one-sided z-test on the "
            "per-example loss differences)? The family-wise rate of approving an unacceptable modification "
            "stays below --alpha for every procedure but 'naive'. TRACE.csv: header of names; one row per "
            "test example; first column the original model's per-example loss, then one column per "
            "modification in the order tested."
        ),
        epilog="example: meter-dashboard approve trace.csv --method fs-srgp --alpha 0.1 --margin-step 0.01",
    )
    p.add_argument("trace", metavar="TRACE.csv", help="per-example losses: original model first, then modifications")
    p.add_argument("--method", default="bonf-srgp", metavar="{" + ",".join(METHOD_CHOICES) + "}",
                   help="the approval procedure (default bonf-srgp)")
    p.add_argument("--alpha", default="0.1", help="family-wise error rate to control (default 0.1)")
    p.add_argument("--success-weight", default="0.8",
                   help="SRGP edge weight to the test right after an approval; later edges get this share of "
                        "what is left (default 0.8)")
    p.add_argument("--margin", default="0", help="delta_1: improvement in loss units to beat (default 0)")
    p.add_argument("--margin-step", default="0", help="added to the margin after each approval (default 0)")
    p.add_argument("--prespecified", default=None, metavar="PRES.csv",
                   help="the prespecified procedure's modifications, same shape as TRACE.csv (pres-srgp)")
    p.add_argument("--seed", default="0", help="seed of the multivariate normal integration (default 0)")
    p.add_argument("--steps", default=None,
                   help="T, the number of tests planned (default: the number of modifications in the trace)")
    p.add_argument("--failure-threshold", default="3",
                   help="weighted-bonferroni: histories with at most this many denials share half of alpha")
    p.add_argument("--pres-share", default="0.9", help="pres-srgp: share of alpha on the prespecified nodes")
    p.add_argument("--max-conditioning", default="6",
                   help="fs-srgp/pres-srgp: earlier tests each threshold conditions on, at most (default 6)")
    add_format_option(p)
    p.set_defaults(run=run)






def _renamed(exc: InputError) -> InputError:
    name = _FLAGS.get(exc.parameter, exc.parameter)
    return InputError(name, exc.rule, exc.got, location=exc.location)


def run(args) -> int:
    from ..models import approve as _approve  # numpy/scipy/param only
    from ..bounds.srgp import METHOD_LABELS

    method = str(args.method).strip().lower()
    if method not in METHOD_CHOICES:
        raise InputError("--method", "one of " + ", ".join(METHOD_CHOICES), args.method)
    options = dict(
        alpha=check_number("--alpha", args.alpha),
        success_weight=check_number("--success-weight", args.success_weight),
        margin=check_number("--margin", args.margin),
        margin_step=check_number("--margin-step", args.margin_step),
        seed=check_int("--seed", args.seed),
        failure_threshold=check_int("--failure-threshold", args.failure_threshold),
        pres_share=check_number("--pres-share", args.pres_share),
        max_conditioning=check_int("--max-conditioning", args.max_conditioning),
    )
    if args.steps is not None:
        options["steps"] = check_int("--steps", args.steps)
    trace = _approve.read_modification_trace(args.trace)
    prespecified = None
    if args.prespecified is not None:
        prespecified = _approve.read_modification_trace(args.prespecified, parameter="--prespecified")
    elif method == "pres-srgp":
        raise InputError("--prespecified", "a CSV of the prespecified procedure's modifications (pres-srgp needs it)",
                         raw("no file"))
    try:
        result = _approve.approve(trace, method, prespecified=prespecified, **options)
    except InputError as exc:
        raise _renamed(exc) from None
    payload = result.to_dict()
    payload["trace"] = trace.source
    rows = []
    for j, name in enumerate(result.names):
        rows.append([
            j + 1,
            name,
            float(result.estimates[j]),
            float(result.margins[j]),
            float(result.z[j]),
            _sci(result.p_values[j]),
            _sci(result.levels[j]),
            "APPROVED" if result.approved[j] else "denied",
        ])
    text = (
        f"{METHOD_LABELS[method]} at alpha = {options['alpha']:g} on {trace.source} "
        f"({trace.examples:,} test examples, T = {result.steps}): "
        f"{result.approvals} of {len(result.approved)} approved\n\n"
        + table(["test", "modification", "improvement", "margin", "z", "p-value", "level", "decision"], rows,
                align="rlrrrrrl")
    )
    emit(args, payload, text)
    return 0


def _sci(value: float) -> str:
    value = float(value)
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "—"
    return f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}"
