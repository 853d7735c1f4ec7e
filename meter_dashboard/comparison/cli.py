"""``meter-dashboard compare`` and ``compare-size``: P(A>B) and Noether's number of runs.

    meter-dashboard compare RUNS.csv [--gamma 0.75] [--alpha 0.05] [--resamples 10000] [--seed S] [--unpaired]
    meter-dashboard compare --example compare_paired.csv
    meter-dashboard compare-size [--alpha 0.05] [--beta 0.05] [--gamma 0.75]

Every message names the flag as typed (``--gamma``, ``--resamples``, ...) and echoes the
text given.  No Panel import: the models and bounds only.
"""
from __future__ import annotations

from ..core.cli import add_file_or_example, add_outputs, add_verb, check_slide_path, emit, emit_answer, file_or_example, flags_named, table
from ..core.validation import InputError, check_int, check_number

#: Runnable examples shown by ``--help`` (tests/cli/test_compare.py runs each one).
COMPARE_EXAMPLES = (
    "meter-dashboard compare --example compare_paired.csv",
    "meter-dashboard compare --example compare_unpaired.csv --unpaired --seed 3 --format json",
)
SIZE_EXAMPLES = (
    "meter-dashboard compare-size --alpha 0.05 --beta 0.05 --gamma 0.75",
)

#: What the models call a setting -> the flag a person typed.
_FLAGS = {"gamma": "--gamma", "alpha": "--alpha", "beta": "--beta", "resamples": "--resamples", "seed": "--seed"}


#: What ``compare --help`` says: the file, the pairing and the decision.
COMPARE_DESCRIPTION = (
    "Runs file: CSV with columns a and b, one run per row, performances (higher is better).  "
    "Rows are pairs (same seeds/split) unless --unpaired, which pairs the runs at random (seeded; needed "
    "when A and B have different numbers of runs).  Decision (Bouthillier et al. 2021, Appendix C.6): not "
    "significant if the CI's lower bound <= 0.5, significant but not meaningful if its upper bound <= gamma, "
    "else significant and meaningful.  JSON keys: p_a_gt_b, ci, significant, meaningful, conclusion.")


def register(sub) -> None:
    p = add_verb(sub, "compare", help="is pipeline A better than B? P(A>B), bootstrap CI and the decision",
                 description=COMPARE_DESCRIPTION, examples=COMPARE_EXAMPLES,
                 note="The first: A beat B in 26 of 30 paired runs, significant and meaningful at gamma = 0.75.")
    add_file_or_example(p, "runs", "RUNS.csv", "runs file with columns a and b", "compare a shipped example "
                        "instead of a file: compare_paired.csv, compare_many_runs.csv or compare_unpaired.csv")
    p.add_argument("--gamma", default="0.75", help="meaningful threshold in (0.5, 1) (default 0.75)")
    p.add_argument("--alpha", default="0.05", help="CI level 1 - alpha, alpha in (0, 0.5) (default 0.05)")
    p.add_argument("--beta", default="0.05", help="false-negative rate for the runs needed (default 0.05)")
    p.add_argument("--resamples", default="10000",
                   help="bootstrap resamples, 1 to 1e9 (default 10000; the cost does not grow with it)")
    p.add_argument("--seed", default="0", help="seed of the bootstrap and the random pairing (default 0)")
    p.add_argument("--unpaired", action="store_true", help="pair the runs at random instead of by row")
    add_outputs(p, run_compare)

    q = add_verb(
        sub, "compare-size",
        help="runs needed to detect P(A>B) > gamma (Noether)",
        description="Noether's sample size (Bouthillier et al. 2021, Appendix C.3): the smallest N >= "
        "((z_{1-alpha} - z_beta) / (sqrt(6) (1/2 - gamma)))^2.  JSON key: runs.",
        examples=SIZE_EXAMPLES, note="29 runs: Figure C.1's red star (the paper's recommendation gamma = 0.75).",
    )
    q.add_argument("--alpha", default="0.05", help="false-positive rate in (0, 0.5) (default 0.05)")
    q.add_argument("--beta", default="0.05", help="false-negative rate in (0, 0.5) (default 0.05)")
    q.add_argument("--gamma", default="0.75", help="threshold in (0.5, 1) (default 0.75)")
    add_outputs(q, run_size, slide=False)


@flags_named(_FLAGS)
def run_compare(args) -> int:
    from ..bounds.compare import MAX_RESAMPLES
    from . import model

    gamma, alpha, beta = (check_number(f, v) for f, v in (("--gamma", args.gamma), ("--alpha", args.alpha),
                                                      ("--beta", args.beta)))
    resamples = check_int("--resamples", args.resamples, minimum=1, maximum=MAX_RESAMPLES)
    seed = check_int("--seed", args.seed, minimum=0)
    check_slide_path(args)
    model.sample_size(alpha, beta, gamma)  # validates the three rates with their names
    runs = file_or_example(args, "runs", "RUNS.csv", model.load_example, model.read_runs)
    if not args.unpaired and not runs.complete_rows:
        raise InputError("runs", "a complete pair (a and b) in every row, or --unpaired to pair them at random",
                         f"{runs.a.size} runs of A and {runs.b.size} of B", location=runs.source)
    result = model.compare(runs.a, runs.b, gamma=gamma, alpha=alpha, resamples=resamples, seed=seed,
                           paired=not args.unpaired, beta=beta)
    lo, hi = result.ci
    rows: list[list] = [
        ["P(A>B)", result.p_a_gt_b],
        [f"{100 * (1 - alpha):g}% CI (percentile bootstrap)", f"[{lo:.4g}, {hi:.4g}]"],
        ["significant (lower > 0.5)", result.significant],
        [f"meaningful (upper > gamma = {gamma:g})", result.meaningful],
        ["runs compared", f"{result.runs} {'paired' if result.paired else 'randomly paired'}"
         + (f" ({result.dropped} left out)" if result.dropped else "")],
        ["A wins / ties", f"{result.wins} / {result.ties}"],
        [f"runs needed (Noether, beta = {beta:g})", result.runs_needed],
    ]
    text = table(["", "value"], rows, align="lr") + "\n\n" + result.sentence
    return emit_answer(args, result.to_dict(), text, result.lead(), result.slide)


@flags_named(_FLAGS)
def run_size(args) -> int:
    from . import model

    size = model.sample_size(check_number("--alpha", args.alpha), check_number("--beta", args.beta),
                             check_number("--gamma", args.gamma))
    rows = [["runs", size.runs], ["Noether's bound", size.real], ["alpha", size.alpha], ["beta", size.beta],
            ["gamma", size.gamma]]
    text = ("Runs needed to detect P(A>B) > gamma (Noether, Appendix C.3):\n\n" + table(["", "value"], rows,
                                                                                         align="lr"))
    emit(args, size.to_dict(), text)
    return 0
