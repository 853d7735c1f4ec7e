"""Generate the synthetic example traces of the /approve page (seeded, deterministic).

    python -m tests.generators.generate_approve            # rewrite the four CSV files
    python -m tests.generators.generate_approve --check    # verify they are up to date

Every file is SYNTHETIC: simulated data following Feng et al. (seeds/004), Section 3
(X ~ N(0, I), Y from a logistic model whose first six coefficients are 0.75, the rest 0).
Each file has one row per test example: the first column is the original model's
per-example loss, then one column per modification in the order tested.  The loss is the
*AUC loss* of the paper's Section 3 tests: 1 minus the example's AUC influence value, so a
column's mean is 1 - AUC and the mean difference of two columns is the AUC difference
(tests on it are the usual DeLong-type z-tests of an AUC improvement).

* ``approve_refits.csv`` (+ ``approve_refits_prespecified.csv``): Section 3.2-like.  The
  original model is a ridge logistic regression fit on 40 examples of a stream with 20
  features; at each of 15 time points 10 new examples arrive and the developer refits on
  everything.  The developer also tunes the ridge penalty as it goes (0.5, 2, 1, ...),
  so its modifications differ a little from the prespecified plan, which refits with
  penalty 1 at every time point.  800 test examples.
* ``approve_adversary.csv`` (+ ``approve_adversary_prespecified.csv``): Section 3.1-like.
  The original model is the oracle (the true coefficients), 100 features, 100 test
  examples, so no modification can be better.  The developer perturbs the irrelevant
  coefficients by +-0.6 one at a time and, after an approval, keeps perturbing that
  coefficient in the same direction.  Its path was chosen against the naive procedure
  (every test at level 0.1 on the AUC improvement, margin 0), i.e. it is the path an
  overfitting developer takes when nothing corrects for multiplicity.  The prespecified
  plan sets coefficient 7 + floor(t/2) to +0.6 (t even) or -0.6 (t odd).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from meter_dashboard.bounds.srgp import (
    AdversarialDeveloper,
    ApprovalProcedure,
    auc_influence,
    draw_logistic,
    fit_logistic,
    planned_perturbation,
    true_coefficients,
)

HERE = Path(__file__).resolve().parents[2] / "meter_dashboard" / "data"  # the shipped data folder
SEED = 2022


def _auc_loss(coef_with_intercept, x, y):
    """Per-example AUC loss: 1 - the example's AUC influence value (column mean = 1 - AUC)."""
    return 1.0 - auc_influence(coef_with_intercept[0] + x @ coef_with_intercept[1:], y)


def _csv(names, columns) -> str:
    lines = [",".join(names)]
    table = np.column_stack(columns)
    for row in table:
        lines.append(",".join(f"{v:.6f}" for v in row))
    return "\n".join(lines) + "\n"


def refits(seed: int = SEED):
    rng = np.random.default_rng([seed, 1])
    features, initial, batch, steps, test_size = 20, 40, 10, 15, 800
    beta = true_coefficients(features)
    x, y = draw_logistic(rng, test_size, beta)
    xs, ys = draw_logistic(rng, initial + batch * steps, beta)
    original = fit_logistic(xs[:initial], ys[:initial], 1.0)
    base = _auc_loss(original, x, y)
    tuned = [0.5, 2.0, 1.0]
    adaptive, planned, names, pres_names = [], [], [], []
    for t in range(1, steps + 1):
        size = initial + batch * t
        penalty = tuned[(t - 1) % len(tuned)]
        adaptive.append(_auc_loss(fit_logistic(xs[:size], ys[:size], penalty), x, y))
        planned.append(_auc_loss(fit_logistic(xs[:size], ys[:size], 1.0), x, y))
        names.append(f"refit{t:02d} n={size} ridge={penalty:g}")
        pres_names.append(f"plan{t:02d} n={size} ridge=1")
    return (_csv(["original"] + names, [base] + adaptive),
            _csv(["original"] + pres_names, [base] + planned))


def _adversary_path(rng):
    """Section 3.1's developer (the package's :class:`AdversarialDeveloper`) against the naive procedure."""
    features, steps, test_size, step = 100, 50, 100, 0.6
    beta = true_coefficients(features)
    x, y = draw_logistic(rng, test_size, beta)
    base = _auc_loss(np.r_[0.0, beta], x, y)
    proc = ApprovalProcedure("naive", steps, 0.1, margin_step=0.0)
    developer = AdversarialDeveloper(beta, perturbation=step)
    columns, names = [], []
    for _ in range(steps):
        coef = developer.propose()
        loss = _auc_loss(np.r_[0.0, coef], x, y)
        columns.append(loss)
        names.append(f"x{developer.variable + 1}{coef[developer.variable]:+.1f}")
        developer.feedback(proc.test(base - loss).approved)
    planned, pres_names = [], []
    for t in range(steps):
        planned.append(_auc_loss(np.r_[0.0, planned_perturbation(beta, t, perturbation=step)], x, y))
        pres_names.append(f"plan x{7 + t // 2}{step if t % 2 == 0 else -step:+.1f}")
    approvals = sum(d.approved for d in proc.decisions)
    return approvals, (_csv(["original"] + names, [base] + columns),
                       _csv(["original"] + pres_names, [base] + planned))


#: The adversary example shows a test set that *was* overfit: the first replicate
#: (k = 0, 1, ...) in which the naive procedure approves at least this many modifications.
ADVERSARY_MIN_APPROVALS = 2


def adversary(seed: int = SEED):
    for k in range(1000):
        approvals, texts = _adversary_path(np.random.default_rng([seed, 2, k]))
        if approvals >= ADVERSARY_MIN_APPROVALS:
            return k, texts
    raise RuntimeError("no replicate found")  # pragma: no cover


def files(seed: int = SEED) -> dict:
    a, b = refits(seed)
    _, (c, d) = adversary(seed)
    return {
        "approve_refits.csv": a,
        "approve_refits_prespecified.csv": b,
        "approve_adversary.csv": c,
        "approve_adversary_prespecified.csv": d,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only verify the shipped files are up to date")
    parser.add_argument("--out", default=str(HERE), help="directory to write to (default: the package data)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    stale = []
    for name, text in files().items():
        path = out / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
            print(f"wrote {path} ({len(text.splitlines()) - 1} rows)")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
