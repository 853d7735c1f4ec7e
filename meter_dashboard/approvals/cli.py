"""``meter-dashboard approve``: approve or deny each modification of a trace (Feng et al.).

No Panel import here (the CLI runs in CI pipelines).
"""
from __future__ import annotations

import argparse
import math
from typing import Any

from ..core.cli import add_format_option, add_slide_option, add_verb, check_slide_path, write_slide, emit, file_or_example, input_file, table
from ..core.validation import InputError, check_int, check_number, raw

METHOD_CHOICES = ("naive", "bonferroni", "weighted-bonferroni", "bonf-srgp", "fs-srgp", "pres-srgp")
#: The largest T accepted (the same bound as ``meter_dashboard.bounds.srgp.MAX_STEPS``, checked in a test).
MAX_STEPS = 10_000

#: the flags whose defaults are ApprovalSettings' parameters (argparse destinations = parameter names)
#: Runnable examples shown by ``--help`` (tests/cli/test_help_examples.py runs each one).
EXAMPLES = (
    "meter-dashboard approve --example refits --method fs-srgp --alpha 0.1 --margin-step 0.01",
    "meter-dashboard approve --example adversary --method naive --fail-on-approval",
)

_SETTINGS = ("alpha", "success_weight", "margin", "margin_step", "seed", "failure_threshold", "pres_share",
             "pres_first_share", "max_conditioning")


def _defaults() -> dict:
    """The settings' defaults, read from the model the page and notebooks use (defined once there)."""
    from .model import ApprovalSettings

    return {name: ApprovalSettings.param[name].default for name in ApprovalSettings.SETTINGS}


class _ModelDefaultsHelp(argparse.RawDescriptionHelpFormatter):
    """Names each setting's default in ``--help``, read from the model only when help is printed.

    (Building the parser for any verb must not import the SRGP models: ``plan`` starts fast.)
    """

    def _get_help_string(self, action):
        text = action.help or ""
        if action.dest in _SETTINGS:
            value = _defaults()[action.dest]
            text += f" (default {value:g})" if isinstance(value, float) else f" (default {value})"
        return text


#: ``meter-dashboard approve --help``: what the verb does (the settings' defaults are named by the formatter).
DESCRIPTION = (
    "Sequentially test modifications of a model on one reused test set, releasing only approve/deny "
    "(Feng et al., 'Sequential algorithmic modification with test data reuse'). Test j: does "
    "modification j lower the expected loss by more than the margin delta_j (one-sided z-test on the "
    "per-example loss differences)? The family-wise rate of approving an unacceptable modification "
    "stays below --alpha for every procedure but 'naive'. TRACE.csv: header of names; one row per "
    "test example; first column the original model's per-example loss, then one column per "
    "modification in the order tested. The defaults are the paper's (Section 3) and the /approve "
    "page's."
)

#: The gates of a pipeline: each flag makes the command exit with status 1 when ...
GATES = {
    "--fail-on-approval": "any modification is approved (a gate: e.g. nothing may ship without review)",
    "--fail-on-denial": "any modification is denied (a gate: every change must be an approved improvement)",
}


def register(sub) -> None:
    """Add ``meter-dashboard approve``; every setting's default is the model's (:class:`ApprovalSettings`)."""
    p = add_verb(sub, "approve", description=DESCRIPTION, examples=EXAMPLES, formatter_class=_ModelDefaultsHelp,
                 help="approve/deny each modification of a trace with Bonferroni or an SRGP (test-set reuse)",
                 note="The second exits with status 1: the naive procedure approves modifications that overfit the "
                      "reused test set (--fail-on-approval).")
    p.add_argument("trace", metavar="TRACE.csv", nargs="?", default=None,
                   help="per-example losses: original model first, then modifications (- for standard input)")
    p.add_argument("--example", default=None, metavar="{refits,adversary}",
                   help="a shipped example trace instead of a file (with its prespecified companion for pres-srgp)")
    p.add_argument("--method", default="bonf-srgp", metavar="{" + ",".join(METHOD_CHOICES) + "}",
                   help="the approval procedure (default bonf-srgp)")
    p.add_argument("--alpha", help="family-wise error rate to control")
    p.add_argument("--success-weight",
                   help="SRGP edge weight to the test right after an approval; later edges get this share of "
                        "what is left")
    p.add_argument("--margin", help="delta_1: improvement in loss units to beat")
    p.add_argument("--margin-step",
                   help="added to the margin after each approval (Eq. 7 of the paper, on the AUC; with 0 an "
                        "equally good modification is approved again and again)")
    p.add_argument("--prespecified", default=None, metavar="PRES.csv",
                   help="the prespecified procedure's modifications, same shape as TRACE.csv (pres-srgp)")
    p.add_argument("--seed", help="seed of the multivariate normal integration")
    p.add_argument("--steps", default=None,
                   help="T, the number of tests planned (default: the number of modifications in the trace; "
                        f"at most {MAX_STEPS:,})")
    p.add_argument("--failure-threshold",
                   help="weighted-bonferroni: histories with at most this many denials share half of alpha")
    p.add_argument("--pres-share", help="pres-srgp: share of alpha on the prespecified nodes")
    p.add_argument("--pres-first-share", help="pres-srgp: the first prespecified node's share of that")
    p.add_argument("--max-conditioning", help="fs-srgp/pres-srgp: earlier tests each threshold conditions on, at most")
    for flag, when in GATES.items():
        p.add_argument(flag, action="store_true", help=f"exit with status 1 when {when}")
    add_format_option(p)
    add_slide_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..bounds.srgp import METHOD_LABELS
    from . import model as approve_models

    defaults = _defaults()
    for name in _SETTINGS:
        if getattr(args, name) is None:
            setattr(args, name, defaults[name])
    method = str(args.method).strip().lower()
    if method not in METHOD_CHOICES:
        raise InputError("--method", "one of " + ", ".join(METHOD_CHOICES), args.method)
    options: dict[str, Any] = dict(
        alpha=check_number("--alpha", args.alpha),
        success_weight=check_number("--success-weight", args.success_weight),
        margin=check_number("--margin", args.margin),
        margin_step=check_number("--margin-step", args.margin_step),
        seed=check_int("--seed", args.seed),
        failure_threshold=check_int("--failure-threshold", args.failure_threshold, minimum=0, maximum=MAX_STEPS),
        pres_share=check_number("--pres-share", args.pres_share),
        pres_first_share=check_number("--pres-first-share", args.pres_first_share),
        max_conditioning=check_int("--max-conditioning", args.max_conditioning, minimum=0, maximum=40),
    )
    check_slide_path(args)
    if args.steps is not None:  # bounded before anything is allocated (1e10 tests would need 75 GiB)
        options["steps"] = check_int("--steps", args.steps, minimum=1, maximum=MAX_STEPS)
    from .trace import EXAMPLES as SHIPPED

    trace, shipped_prespecified = file_or_example(
        args, "trace", "TRACE.csv", _example(SHIPPED, approve_models.load_example),
        lambda source: (approve_models.read_modification_trace(source), None))
    prespecified = shipped_prespecified
    if args.prespecified is not None:
        prespecified = approve_models.read_modification_trace(input_file(args.prespecified), parameter="--prespecified")
    elif method == "pres-srgp" and prespecified is None:
        raise InputError("--prespecified", "a CSV of the prespecified procedure's modifications (pres-srgp needs it)",
                         raw("no file"))
    # a model's InputError names its parameter (``steps``); the CLI shows the flag (``--steps``)
    result = approve_models.approve(trace, method, prespecified=prespecified, **options)
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
    payload["lead"] = result.lead()
    text += "\n\n" + payload["lead"]
    written = write_slide(args, result.slide)
    if written is not None:
        payload["slide"] = written
        text += f"\n\nslide: {written}"
    emit(args, payload, text)
    if (args.fail_on_approval and result.approvals) or (args.fail_on_denial and result.approvals < len(result.approved)):
        return 1
    return 0


def _example(shipped, load):
    """``--example NAME``: the shipped trace and its prespecified companion; an unknown name lists them."""
    def load_example(name):
        if name not in shipped:
            raise InputError("example", "one of " + ", ".join(shipped), name)
        return load(name)
    return load_example


def _sci(value: float) -> str:
    value = float(value)
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "—"
    return f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}"
