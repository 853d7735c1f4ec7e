"""``meter-dashboard simulate``: the Monte Carlo check of a plan (does its test set keep the meter's promise?).

Simulates a developer (the boosting-attack adversary, or an honest hill-climber) against a
test set of ``--labels`` labels for T steps of the regular or incremental meter, and
estimates the probability that some released model's |test - true| reaches the tolerance
of its signal, with its interval, beside delta.  ``--labels`` is a number, or a variant
whose planned count (under ``--bound``) to check, by default ``--meter``'s own:
``--labels single_model`` is the naive count that should fail against the adversary.

JSON (``--format json``): ``failure_rate``, ``ci``, ``replicates`` (plus ``failures``,
``labels``, ``within_delta``, ``failed_by_step``, the settings).  Progress goes to stderr
only when stderr is a terminal; Ctrl-C stops and prints the runs done so far.
"""
from __future__ import annotations

import sys

from ..core.cli import add_format_option, emit, epsilon_for_signals, table
from ..core.validation import InputError, check_int, check_probability, parse_number_list
from .cli import add_bound_options, bound_values, plan_parser
from .defaults import DEFAULT_RANGES

EXAMPLE = ("meter-dashboard simulate --epsilon 0.02,0.04,0.06 --delta 0.1 --steps 10 --meter regular "
           "--labels single_model --replicates 512")
EXAMPLE_PLANNED = ("meter-dashboard simulate --epsilon 0.02,0.04,0.06 --delta 0.1 --steps 10 --meter regular "
                   "--bound binomial --replicates 512")
#: At most this many replicates from the command line (each is T steps over the whole test set).
MAX_REPLICATES = 100_000
_VARIANTS = ("single_model", "no_adaptivity", "regular", "incremental")
DESCRIPTION = (
    "Monte Carlo check of a meter plan: developers against a test set of n labels for T steps; the "
    "estimated probability that a released model's |test - true| reaches its signal's eps, with its "
    "interval, beside delta (ease.ml/meter Thms 1-2; the adversary is the Ladder paper's boosting attack).  "
    "JSON keys: failure_rate, ci, replicates.")
EPILOG = (f"example (the naive single_model count against the adversary: fails, about 0.21 > 0.1):\n  {EXAMPLE}"
          f"\n\nexample (the planned regular count, exact binomial bound: within delta):\n  {EXAMPLE_PLANNED}")


def register(sub) -> None:
    p = plan_parser(sub, "simulate", help="check a plan by simulation (failure rate vs delta)",
                    description=DESCRIPTION, epilog=EPILOG, delta="the plan's failure probability in (0, 1)",
                    steps="T, steps per simulated development (at most 10,000)", signals="m, when one eps is given")
    p.add_argument("--ranges", default=None, help="m + 1 boundaries 0,...,1 (default "
                   + ",".join(f"{r:g}" for r in DEFAULT_RANGES) + " resized to m)")
    p.add_argument("--meter", choices=("incremental", "regular"), default="incremental",
                   help="the meter releasing the signals (default incremental)")
    p.add_argument("--developer", choices=("adversary", "honest"), default="adversary",
                   help="adversary (boosting attack, default) or honest (hill-climber)")
    p.add_argument("--labels", default=None, metavar="N|VARIANT",
                   help="test-set size: a number, or a variant whose planned count to check "
                        "(single_model, no_adaptivity, regular, incremental; default: --meter's)")
    add_bound_options(p)
    p.add_argument("--replicates", default="1000", help=f"independent runs (default 1000, at most {MAX_REPLICATES:,})")
    p.add_argument("--seed", default="0", help="random seed (default 0): the same seed gives the same numbers")
    p.add_argument("--confidence", default="0.95", help="confidence of the interval (default 0.95)")
    p.add_argument("--interval", choices=("wilson", "clopper-pearson"), default="wilson",
                   help="interval for the failure rate (default wilson)")
    add_format_option(p)
    p.set_defaults(run=run)


def _settings(args) -> dict:
    from .model import resize_ranges, validate_ranges

    epsilon = parse_number_list("--epsilon", args.epsilon)
    epsilon = epsilon_for_signals(epsilon, args.signals)
    ranges = (validate_ranges(parse_number_list("--ranges", args.ranges), len(epsilon)) if args.ranges is not None
              else resize_ranges(DEFAULT_RANGES, len(epsilon)))
    return {"epsilon": epsilon, "ranges": ranges, "delta": check_probability("--delta", args.delta),
            "steps": check_int("--steps", args.steps, minimum=1, maximum=10_000),
            "replicates": check_int("--replicates", args.replicates, minimum=1, maximum=MAX_REPLICATES),
            "seed": check_int("--seed", args.seed, minimum=0, maximum=2**63 - 1),
            "confidence": check_probability("--confidence", args.confidence)}


def _labels(args, s: dict) -> tuple[int, str]:
    """``(n, where it came from)``: a number given, or the planned count of a variant."""
    text = (args.labels or args.meter).strip()
    if text not in _VARIANTS:
        try:
            return check_int("--labels", text, minimum=1, maximum=10**8), "given"
        except InputError:
            raise InputError("--labels", "a whole number in [1, 1e8] or one of " + ", ".join(_VARIANTS),
                             args.labels) from None
    from ..bounds import meter

    bound, rate = bound_values(args)
    n = meter.labels(text, s["epsilon"], s["delta"], s["steps"], bound=bound, max_error_rate=rate)
    return int(n), f"the {text} count under {'Hoeffding' if bound == 'hoeffding' else 'the exact binomial'} bound"


def run(args) -> int:
    from ..bounds.meter_simulation import iter_simulate

    s = _settings(args)
    labels, source = _labels(args, s)
    progress = sys.stderr.isatty()
    result, interrupted = None, False
    try:
        for result in iter_simulate(labels, s["epsilon"], s["steps"], ranges=s["ranges"], meter=args.meter,
                                    developer=args.developer, replicates=s["replicates"], seed=s["seed"],
                                    confidence=s["confidence"], interval=args.interval, delta=s["delta"]):
            if progress:
                sys.stderr.write(f"\r{result.replicates:,} of {result.total:,} runs, "
                                 f"failure rate so far {result.failure_rate:.4g}")
                sys.stderr.flush()
    except KeyboardInterrupt:
        if result is None:
            raise
        interrupted = True  # the runs so far are printed, then the exit status says Ctrl-C (130)
    finally:
        if progress:
            sys.stderr.write("\n")
    assert result is not None  # iter_simulate yields at least once (replicates >= 1)
    cancelled = result.replicates < result.total
    within = result.ci[0] <= s["delta"]
    payload = {
        "failure_rate": result.failure_rate, "ci": list(result.ci), "replicates": result.replicates,
        "failures": result.failures, "labels": labels, "labels_from": source, "delta": s["delta"],
        "within_delta": within, "steps": s["steps"], "meter": args.meter, "developer": args.developer,
        "epsilon": s["epsilon"], "ranges": s["ranges"], "seed": s["seed"], "confidence": result.confidence,
        "interval": result.interval, "failed_by_step": result.failed_by_step.tolist(), "cancelled": cancelled,
    }
    verdict = ("consistent with a failure probability <= delta" if within
               else "ABOVE delta: this test set does not keep the meter's promise against this developer")
    text = table(["labels", "runs", "failures", "failure rate", f"{result.confidence:.0%} interval", "delta"],
                 [[labels, result.replicates, result.failures, result.failure_rate,
                   "[{:.4g}, {:.4g}]".format(*(0.0 if abs(v) < 1e-12 else v for v in result.ci)), s["delta"]]])
    text += (f"\n\n{labels:,} labels ({source}), {args.developer} developer, {args.meter} meter, T = {s['steps']}: "
             f"{verdict}." + (" (stopped early: partial result)" if cancelled else ""))
    emit(args, payload, text)
    if interrupted:  # the partial result is out; main() says "interrupted" and exits with 130
        raise KeyboardInterrupt
    return 0
