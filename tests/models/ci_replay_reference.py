"""The ease.ml/ci replay as a plain per-commit loop over exact fractions: the reference.

This is the first implementation of :func:`meter_dashboard.ci.replay_ci` (one
:class:`fractions.Fraction` interval evaluation per clause and commit, Section 3.5 and
Appendix A.2; one counter per adaptivity, Sections 3.2-3.4), kept here only to check
that the vectorized replay gives identical rows.  It is not used by the package.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

ADAPTIVITIES = ("none", "full", "firstChange")


def clause_truth(clause, values: dict) -> str:
    w = clause.weight
    low = high = Fraction(0)
    for var, coef in clause.coefficients:
        v = values[var]
        t = clause.tolerance / w
        lo, hi = max(Fraction(0), v - t), min(Fraction(1), v + t)
        if coef >= 0:
            low += coef * lo
            high += coef * hi
        else:
            low += coef * hi
            high += coef * lo
    c = clause.threshold
    if clause.comparison == ">":
        return "True" if low > c else ("False" if high <= c else "Unknown")
    return "True" if high < c else ("False" if low >= c else "Unknown")


def evaluate(cond, values: dict, mode: str):
    truths = [clause_truth(c, values) for c in cond.clauses]
    truth = "False" if "False" in truths else ("True" if all(t == "True" for t in truths) else "Unknown")
    passed = truth == "True" or (truth == "Unknown" and mode == "fn-free")
    return truths, truth, "pass" if passed else "fail"


def replay_rows(cond, trace, *, mode: str, steps: int, alarm_on: str, p) -> list:
    """The rows the loop replay produced (missing values must not occur for used variables)."""
    rows = []
    counters = {a: 0 for a in ADAPTIVITIES}
    testsets = {a: 1 for a in ADAPTIVITIES}
    if trace.kind == "predictions":
        labels = np.asarray(trace.labels, dtype=object)
        preds = {k: np.asarray(v, dtype=object) for k, v in trace.predictions.items()}
        total = len(labels)
        correct = {k: int(np.sum(v == labels)) for k, v in preds.items()}
        active = trace.baseline
    else:
        active = "deployed"
        columns = {v: trace.values(v) for v in ("n", "o", "d")}
    for i, name in enumerate(trace.commits):
        disagreements = None
        if trace.kind == "predictions":
            disagreements = int(np.sum(preds[name] != preds[active]))
            n_hat, o_hat = Fraction(correct[name], total), Fraction(correct[active], total)
            d_hat = Fraction(disagreements, total)
        else:
            n_hat, o_hat, d_hat = columns["n"][i], columns["o"][i], columns["d"][i]
        truths, truth, signal = evaluate(cond, {"n": n_hat, "o": o_hat, "d": d_hat}, mode)
        row = {"commit": name, "n": None if n_hat is None else float(n_hat), "o": None if o_hat is None else float(o_hat),
               "d": None if d_hat is None else float(d_hat), "clauses": truths, "truth": truth, "signal": signal}
        if signal == "pass":
            active = name
        row["active"] = active
        row["disagreements"] = disagreements
        row["bound_ok"] = None if (p is None or d_hat is None) else bool(d_hat <= Fraction(str(p)))
        for a in ADAPTIVITIES:
            counters[a] += 1
            row[f"testset_{a}"] = testsets[a]
            alarm = counters[a] >= steps or (a == "firstChange" and signal == alarm_on)
            row[f"alarm_{a}"] = alarm
            if alarm:
                counters[a] = 0
                testsets[a] += 1
        rows.append(row)
    return rows


def estimates_csv(size: int, seed: int = 0, places: int = 4) -> str:
    """A synthetic commit history: n, o, d per commit with ``places`` decimals."""
    rng = np.random.default_rng(seed)
    o = np.round(rng.uniform(0.6, 0.9, size), places)
    n = np.round(np.clip(o + rng.normal(0.01, 0.02, size), 0, 1), places)
    d = np.round(rng.uniform(0.0, 0.15, size), places)
    lines = ["commit,n,o,d"] + [f"c{i},{a:.{places}f},{b:.{places}f},{c:.{places}f}" for i, (a, b, c) in
                                enumerate(zip(n, o, d))]
    return "\n".join(lines) + "\n"
