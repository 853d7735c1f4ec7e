"""``meter-dashboard ladder`` and ``ladder-size``: replay a leaderboard, size its test set.

    meter-dashboard ladder LOSSES.csv [--step ETA] [--delta D] [--format table|json]
    meter-dashboard ladder --example ladder_ties.csv --step 0.25
    meter-dashboard ladder-size --epsilon E --step ETA --submissions K --delta D
    meter-dashboard ladder-size --total-error T --submissions K --delta D   (best split)

Every message names the flag as typed (``--step``, ``--submissions``, ...) and echoes the
text given; a label count is printed only when it is certified (Lemma 4 checked in
decimal arithmetic for n and n - 1), otherwise the input is refused.  No Panel import:
the models and bounds only.
"""
from __future__ import annotations

import os

from ..core.cli import add_file_or_example, add_outputs, add_verb, check_slide_path, emit, emit_answer, file_or_example, flags_named, table
from ..core.validation import InputError, check_int, check_number, check_probability

#: Runnable examples shown by ``--help`` (tests/cli/test_ladder.py runs each one).
LADDER_EXAMPLES = (
    "meter-dashboard ladder --example ladder_ties.csv --step 0.25",
    "meter-dashboard ladder --example ladder_leaderboard.csv --format json",
)
SIZE_EXAMPLES = (
    "meter-dashboard ladder-size --epsilon 0.05 --step 0.05 --submissions 100 --delta 0.05",
    "meter-dashboard ladder-size --total-error 0.1 --submissions 100 --delta 0.05",
)

#: What the models call a setting -> the flag a person typed.
_FLAGS = {"epsilon": "--epsilon", "step": "--step", "submissions": "--submissions", "delta": "--delta",
          "total_error": "--total-error"}


def register(sub) -> None:
    p = add_verb(
        sub, "ladder",
        help="replay a leaderboard with the Ladder (scores it would release beside the exact ones)",
        description="Replay per-example losses (CSV: one row per test example, one column per submission, header = "
        "submission names, values in [0, 1]) through the Ladder of Blum & Hardt.  Without --step: the "
        "parameter-free Ladder (Algorithm 2); with --step ETA: the fixed-step Ladder (Algorithm 1).  "
        "JSON keys: scores (released score per submission), naive (exact empirical losses).",
        examples=LADDER_EXAMPLES, note="The first replays the 4-example board whose submissions land exactly on "
        "the thresholds: ties are not released (scores 0.75, 0.75, 0.25, 0.25, 0.25).",
    )
    add_file_or_example(p, "losses", "LOSSES.csv", "per-example loss file",
                        "replay a shipped example instead of a file: ladder_leaderboard.csv or ladder_ties.csv")
    p.add_argument("--step", default=None, help="eta in (0, 1] for the fixed-step Ladder (default: parameter-free)")
    p.add_argument("--delta", default="0.05",
                   help="1 - confidence for the leaderboard-error guarantee of this test set (default 0.05)")
    add_outputs(p, run_ladder)

    q = add_verb(
        sub, "ladder-size",
        help="test labels for k submissions with leaderboard error eps + eta (Lemma 4)",
        description="The smallest test set for which the Ladder's leaderboard error stays within epsilon + step "
        "with probability 1 - delta over k submissions: exp(-2 eps^2 n + (1/eta + 2) log(4k/eta) + 1) < delta "
        "(Lemma 4).  With --total-error instead of --epsilon/--step: the split eps + eta needing the fewest "
        "labels.  JSON key: labels.",
        examples=SIZE_EXAMPLES, note="The first needs 40,343 labels: (22 log 8000 + 1 + log 20) / (2 * 0.05^2) "
        "= 40,342.8.  Counts are certified (n satisfies Lemma 4, n - 1 does not) and refused above 1e15.",
    )
    q.add_argument("--epsilon", default=None, help="eps in (0, 1), the statistical part of the error")
    q.add_argument("--step", default=None, help="eta in (0, 1], the Ladder's step")
    q.add_argument("--total-error", default=None, help="eps + eta in (0, 1): choose the step that needs fewest labels")
    q.add_argument("--submissions", required=True, help="k, the number of submissions (>= 1)")
    q.add_argument("--delta", default="0.05", help="failure probability in (0, 1) (default 0.05)")
    add_outputs(q, run_size, slide=False)


def _check_step(text) -> float | None:
    if text is None:
        return None
    step = check_number("--step", text)
    if not 0 < step <= 1:
        raise InputError("--step", "a number in (0, 1]", text)
    return step


def run_ladder(args) -> int:
    from ..bounds.ladder import leaderboard_error
    from . import model

    step = _check_step(args.step)
    delta = check_probability("--delta", check_number("--delta", args.delta))
    check_slide_path(args)
    losses = file_or_example(args, "losses", "LOSSES.csv", model.load_example, model.read_losses)
    try:
        result = model.ladder(losses, step)
    except InputError as exc:  # the file was read, but its content does not fit: name the file
        if exc.parameter != "losses":
            raise
        raise exc.renamed(f"losses file {os.path.basename(args.losses or args.example)}") from None
    total, eta, eps = leaderboard_error(result.examples, result.submissions, delta)
    payload = result.to_dict()
    payload["releases"] = result.releases
    payload["guarantee"] = {"leaderboard_error": total, "step": eta, "epsilon": eps, "delta": delta}
    how = "parameter-free Ladder (Algorithm 2)" if step is None else f"Ladder with step {step:g} (Algorithm 1)"
    rows = [
        [name, float(naive), float(best), float(score), "new" if improved else ""]
        for name, naive, best, score, improved in zip(result.names, result.naive, result.best_naive, result.scores,
                                                     result.improved)
    ]
    text = (
        f"{how}: {result.submissions} submissions on {result.examples:,} test examples, "
        f"{result.releases} scores released\n\n"
        + table(["submission", "naive loss", "naive best", "Ladder score", "released"], rows, align="lrrrl")
        + (f"\n\nLemma 4: these {result.examples:,} labels keep the leaderboard error below {total:.4g} "
           f"(eta = {eta:.3g}) with confidence {1 - delta:.3g}." if total < 1 else
           f"\n\nLemma 4: {result.examples:,} labels are too few for a useful guarantee over "
           f"{result.submissions} submissions (the smallest error bound, {total:.3g}, is above 1).")
    )
    from .text import lead, slide as make_slide

    return emit_answer(args, payload, text, lead(result, delta), lambda: make_slide(result, delta))


@flags_named(_FLAGS)
def run_size(args) -> int:
    from . import model

    submissions = check_int("--submissions", args.submissions, minimum=1)
    delta = check_number("--delta", args.delta)
    if args.total_error is not None:
        if args.epsilon is not None or args.step is not None:
            raise InputError("--total-error", "given without --epsilon and --step (it chooses them)",
                             args.total_error)
        total = check_number("--total-error", args.total_error)
        size = model.best_step(total, submissions, delta)
        note = f"best split of eps + eta = {total:g}"
    else:
        if args.epsilon is None or args.step is None:
            missing = "--epsilon" if args.epsilon is None else "--step"
            raise InputError(missing, "given (or use --total-error to choose the split)", None)
        size = model.ladder_size(check_number("--epsilon", args.epsilon), check_number("--step", args.step),
                                 submissions, delta)
        note = "Lemma 4"
    payload = size.to_dict()
    rows = [["labels", size.labels], ["epsilon", size.epsilon], ["step", size.step],
            ["total error", size.total_error], ["submissions", size.submissions], ["delta", size.delta]]
    text = (f"Ladder test-set size ({note}):\n\n" + table(["", "value"], rows, align="lr"))
    emit(args, payload, text)
    return 0
