"""Generate the synthetic ease.ml/ci example traces (seeded, deterministic).

    python -m tests.generators.generate_ci

writes, in meter_dashboard/data:

- ``ci_predictions.csv``: per-example predictions shaped like the paper's SemEval-2019
  Task 3 case study (Section 5.2): 5,509 test examples, four classes (O others, A angry,
  H happy, S sad, in the test set's proportions), eight models ``iteration_1`` ..
  ``iteration_8`` whose test accuracies are the real ones of ``emocontext_trace.csv``
  (to the example: round(accuracy * 5,509) correct); ``iteration_1`` is deployed before
  the first commit.  Consecutive models change 2-4% of their predictions, all inside a
  fixed 9% of the examples, so any two differ in at most 9% (Figure 5 exploits p = 0.1).  SYNTHETIC: which examples each
  model gets right is random; the real per-example predictions are not published.
- ``ci_commits.csv``: 40 commits of a developer fine-tuning a model, with the measured
  n, o, d of each commit.  ``o`` is the accuracy of the active model (the last commit
  that passed ``n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01`` in fp-free mode).  SYNTHETIC.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[2] / "meter_dashboard" / "data"  # the shipped data folder
SEED = 20190331
EXAMPLES = 5509
CLASSES = np.array(["O", "A", "H", "S"])
#: Test-set class counts (emocontext.md lists 4,676 / 298 / 284 / 250, which sum to 5,508;
#: one more 'others' example gives the paper's 5,509).
CLASS_COUNTS = np.array([4677, 298, 284, 250])
#: Test accuracies of the eight versions, from emocontext_trace.csv (test_accuracy).
ACCURACY = [0.8813, 0.9081, 0.8962, 0.9092, 0.9115, 0.9102, 0.9221, 0.9202]
#: Fraction of predictions each iteration changes relative to the previous one (<= 0.1).
CHANGE = [0.0, 0.04, 0.025, 0.03, 0.02, 0.025, 0.03, 0.02]
#: Share of the examples on which the models may differ at all.
POOL = 0.09

COMMITS = 40
COMMIT_CONDITION = "n - o > 0.02 +/- 0.01 /\\ d < 0.1 +/- 0.01"


def _wrong_class(rng, true):
    """A uniformly chosen class different from each true class."""
    shift = rng.integers(1, len(CLASSES), size=true.shape)
    return (true + shift) % len(CLASSES)


def predictions(rng) -> tuple[np.ndarray, list[np.ndarray]]:
    """Labels and the eight models' predictions.

    Every change between models happens inside a fixed pool of 9% of the examples (the
    "hard" ones), so any two models differ on at most 9% of the predictions.
    """
    labels = rng.permutation(np.repeat(np.arange(len(CLASSES)), CLASS_COUNTS))
    pool_size = int(POOL * EXAMPLES)
    order = rng.permutation(EXAMPLES)
    pool, outside = order[:pool_size], order[pool_size:]
    errors_first = round((1 - ACCURACY[0]) * EXAMPLES)
    inside_errors = round(0.6 * pool_size)
    first = labels.copy()
    wrong = np.concatenate([rng.choice(outside, size=errors_first - inside_errors, replace=False),
                            rng.choice(pool, size=inside_errors, replace=False)])
    first[wrong] = _wrong_class(rng, labels[wrong])
    models = [first]
    for acc, change in zip(ACCURACY[1:], CHANGE[1:]):
        pred = models[-1].copy()
        correct = pred == labels
        net = round(acc * EXAMPLES) - int(correct.sum())  # fixes - breaks
        budget = round(change * EXAMPLES)
        if net >= 0:
            breaks = (budget - net) // 3
            fixes = breaks + net
        else:
            fixes = (budget + net) // 3
            breaks = fixes - net
        wrong_pool = pool[~correct[pool]]
        right_pool = pool[correct[pool]]
        fix = rng.choice(wrong_pool, size=fixes, replace=False)
        brk = rng.choice(right_pool, size=breaks, replace=False)
        rest = np.setdiff1d(wrong_pool, fix)
        swp = rng.choice(rest, size=min(max(0, budget - fixes - breaks), rest.size), replace=False)
        pred[fix] = labels[fix]
        pred[brk] = _wrong_class(rng, labels[brk])
        # a wrong prediction replaced by another wrong one (changes d, not n)
        for i in swp:
            options = [c for c in range(len(CLASSES)) if c != labels[i] and c != pred[i]]
            pred[i] = rng.choice(options)
        models.append(pred)
    return labels, models


def write_predictions(rng, path: Path) -> None:
    labels, models = predictions(rng)
    header = "label," + ",".join(f"iteration_{i + 1}" for i in range(len(models)))
    lines = [header]
    stacked = np.stack([labels] + models, axis=1)
    for row in stacked:
        lines.append(",".join(CLASSES[row]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_commits(rng, path: Path) -> None:
    from meter_dashboard.ci import evaluate

    active = 0.781
    lines = ["commit,n,o,d"]
    for i in range(COMMITS):
        # mostly small tweaks; now and then (12%) a real improvement of 2.8-5 points
        gain = rng.uniform(0.028, 0.05) if rng.random() < 0.12 else rng.normal(0.0, 0.012)
        n = float(np.clip(active + gain, 0.5, 0.99))
        d = float(np.clip(abs(gain) * 1.1 + rng.uniform(0.005, 0.04), 0.005, 0.3))
        n, d = round(n, 4), round(d, 4)
        o = round(active, 4)
        lines.append(f"c{i + 1:02d},{n:.4f},{o:.4f},{d:.4f}")
        if evaluate(COMMIT_CONDITION, n=f"{n:.4f}", o=f"{o:.4f}", d=f"{d:.4f}").passed:
            active = n
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    write_predictions(np.random.default_rng(SEED), HERE / "ci_predictions.csv")
    write_commits(np.random.default_rng(SEED + 1), HERE / "ci_commits.csv")
    print(f"wrote {HERE / 'ci_predictions.csv'} and {HERE / 'ci_commits.csv'}")


if __name__ == "__main__":
    main()
