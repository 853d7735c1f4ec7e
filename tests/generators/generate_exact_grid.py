"""Generate the regression grid of the exact binomial engine (issue 18): seeded settings and their answers.

    python -m tests.generators.generate_exact_grid            # rewrite the data file
    python -m tests.generators.generate_exact_grid --limit 20  # a quick look (prints, writes nothing)
    python -m tests.generators.generate_exact_grid --curve     # the exact curve T = 1..1,000 (minutes)

writes ``tests/bounds/data/exact_binomial_grid.json``: a list of cases, each a setting of one
public function of :mod:`meter_dashboard.bounds` under ``bound="binomial"`` (or the exact
binomial tail directly) and the answer the engine gave when the file was generated.  The
answers were computed ONCE, with the engine of commit 739d4d2 (issue 12's: certified search
over n with exact tails below the Zubkov-Serov envelope), before issue 18 rewrote the search;
``tests/bounds/test_exact_grid.py`` checks that every later engine gives the same answers.

Kinds of case (``kind``):

- ``labels``: :func:`meter.labels` (every variant; nonuniform eps; m, T, delta; tenants split
  evenly, explicit tenant steps, reverts; ``max_error_rate``); refusals are recorded as
  ``{"refused": parameter}``;
- ``curve``: the same over a short array of T (the vectorized path);
- ``failure``: :func:`meter.failure_probability` (``log=True``: the log of delta at n; the
  confidence is ``1 - exp``);
- ``max_steps``: the largest T at a budget of n labels (``"inf"`` beyond the search cap);
- ``min_epsilon``: the smallest eps_1 at a budget of n labels;
- ``ci``: :func:`ci.binomial_labels` of an ease.ml/ci clause (adaptivity, H, clauses, terms;
  the tolerance share ``eps / W`` as an exact fraction);
- ``smallest``: :func:`binomial.smallest_labels` with one-sided events and ranges.

``--curve`` writes ``tests/bounds/data/exact_binomial_curve.json``: every variant's exact count
at T = 1..1,000 for the paper's setting (m = 5, eps = 0.01..0.05, delta = 0.01), the table of
``plan --steps 1:1000 --bound binomial``; computed once with the same engine (176 s then).

Regenerating with the engine of the day reproduces the files only while the engine's answers
are unchanged (which is what the tests check more cheaply).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

from meter_dashboard.core.validation import InputError
from meter_dashboard.bounds import binomial as B
from meter_dashboard.bounds import ci
from meter_dashboard.bounds import meter as M

OUTPUT = Path(__file__).resolve().parents[1] / "bounds" / "data" / "exact_binomial_grid.json"
CURVE = OUTPUT.with_name("exact_binomial_curve.json")
#: the curve's setting: the paper's (ease.ml/meter Sec 5.1) over T = 1..1,000
CURVE_SETTING = dict(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=[1, 1000])
SEED = 20261125  # the day the grid was first generated
#: how many cases of each kind
SIZES = {"labels": 260, "curve": 16, "failure": 60, "max_steps": 50, "min_epsilon": 40, "ci": 40, "smallest": 24}
RATES = [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45]


# --------------------------------------------------------------------------- random settings
def _decimal(rng, lo: float, hi: float, digits: int = 3) -> float:
    return float(round(rng.uniform(lo, hi), digits))


def _epsilon(rng, m: int) -> list[float]:
    """A non-decreasing tolerance vector: uniform, nonuniform from a few decimals, or the paper's shape."""
    style = rng.integers(3)
    if style == 0:
        return [_decimal(rng, 0.008, 0.12)] * m
    if style == 1:
        return sorted(_decimal(rng, 0.008, 0.15) for _ in range(m))
    first = _decimal(rng, 0.006, 0.04)
    return [round(first * (k + 1), 6) for k in range(m)]


def _delta(rng) -> float:
    return float(f"{10 ** rng.uniform(-8, math.log10(0.3)):.3g}")


def _steps(rng, variant: str) -> int:
    if variant == "regular":
        return int(rng.choice([rng.integers(1, 12), rng.integers(1, 60)]))
    if variant == "incremental":
        return int(rng.choice([rng.integers(1, 30), rng.integers(1, 400)]))
    return int(rng.integers(1, 200))


def _reverts(rng, steps: int) -> list[int] | None:
    """Sorted revert steps with t'_i = t_i - (i - 1) >= 1 (Eqs. 13-16)."""
    count = int(rng.integers(1, min(3, steps) + 1))
    picks = sorted(int(v) for v in rng.integers(1, steps + 1, size=count))
    return [t for i, t in enumerate(picks) if t - i >= 1] or None


def _tenancy(rng, steps: int, explicit: bool = True) -> dict:
    """Nothing, tenants splitting T evenly, explicit steps per tenant, reverts, or tenants with reverts."""
    kw: dict = {}
    roll = rng.uniform()
    if steps >= 2 and roll < 0.2:
        kw["tenants"] = int(rng.integers(2, min(4, steps) + 1))
    elif explicit and steps >= 2 and roll < 0.3:
        cut = sorted(set(int(v) for v in rng.integers(1, steps, size=int(rng.integers(1, min(3, steps - 1) + 1)))))
        kw["tenant_steps"] = [b - a for a, b in zip([0] + cut, cut + [steps])]
    if rng.uniform() < 0.2:
        kw["reverts"] = _reverts(rng, steps)
    return {k: v for k, v in kw.items() if v is not None}


def _rate(rng) -> float | None:
    roll = rng.uniform()
    if roll < 0.55:
        return None
    if roll < 0.9:
        return float(rng.choice(RATES))
    return _decimal(rng, 0.01, 0.6, 2)


def _setting(rng, variant: str | None = None, explicit: bool = True) -> dict:
    variant = variant or str(rng.choice(M.VARIANTS))
    m = int(rng.choice([1, 1, 2, 3, 5, 5, 8]))
    steps = _steps(rng, variant)
    out = dict(variant=variant, epsilon=_epsilon(rng, m), delta=_delta(rng), steps=steps)
    if variant in M.ADAPTIVE_VARIANTS:
        out.update(_tenancy(rng, steps, explicit))
    rate = _rate(rng)
    if rate is not None:
        out["max_error_rate"] = rate
    return out


# --------------------------------------------------------------------------- answers with today's engine
def _kw(case: dict, *names) -> dict:
    return {k: case[k] for k in names if k in case}


def _plain(value):
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    return "inf" if value == math.inf else value


def answer(case: dict):
    """The engine's answer to ``case`` (what the test recomputes)."""
    kind = case["kind"]
    try:
        if kind in ("labels", "curve"):
            steps = np.asarray(case["steps"]) if kind == "curve" else case["steps"]
            got = M.labels(case["variant"], case["epsilon"], case["delta"], steps, bound="binomial",
                           **_kw(case, "tenants", "tenant_steps", "reverts", "max_error_rate"))
            return [int(v) for v in got] if kind == "curve" else int(got)
        if kind == "failure":
            return _plain(M.failure_probability(case["variant"], case["n"], case["epsilon"], case["steps"], log=True,
                                                bound="binomial",
                                                **_kw(case, "tenants", "tenant_steps", "reverts", "max_error_rate")))
        if kind == "max_steps":
            return _plain(M.max_steps(case["variant"], case["n"], case["epsilon"], case["delta"], bound="binomial",
                                      **_kw(case, "tenants", "reverts", "max_error_rate")))
        if kind == "min_epsilon":
            return _plain(M.min_epsilon(case["variant"], case["n"], case["epsilon"], case["delta"], case["steps"],
                                        bound="binomial",
                                        **_kw(case, "tenants", "tenant_steps", "reverts", "max_error_rate")))
        if kind == "ci":
            log_count = ci.clause_log_count(case["adaptivity"], case["steps"], case["clauses"], case["terms"])
            return int(ci.binomial_labels(Fraction(case["share"]), case["delta"], float(log_count)))
        if kind == "smallest":
            return int(B.smallest_labels(case["log_counts"], case["epsilon"], case["delta"],
                                         case.get("max_error_rate"), case["sides"]))
    except InputError as exc:
        return {"refused": exc.parameter}
    raise ValueError(f"unknown kind {kind!r}")


def _budget(rng, case: dict) -> int | None:
    """A budget near the setting's exact count (a quarter to four times it), or None when it is refused."""
    probe = dict(case, kind="labels")
    probe.pop("n", None)
    need = answer(probe)
    if not isinstance(need, int):
        return None
    return max(1, int(need * 2 ** rng.uniform(-2, 2)))


# --------------------------------------------------------------------------- the grid
#: settings the exact count refuses (Hoeffding's count above ``meter.BINOMIAL_LABELS_CAP``), and a
#: certified count of 16 million labels (the regular meter at T = 2,000)
REFUSED = [
    dict(kind="labels", variant="regular", epsilon=[0.01] * 5, delta=0.01, steps=2000),
    dict(kind="labels", variant="single_model", epsilon=[0.0003], delta=0.01, steps=1),
    dict(kind="labels", variant="regular", epsilon=[0.01] * 5, delta=0.01, steps=2600),
    dict(kind="labels", variant="resampling", epsilon=[0.0003], delta=0.001, steps=50),
    dict(kind="labels", variant="incremental", epsilon=[0.0004, 0.001], delta=1e-6, steps=30, max_error_rate=0.1),
]


def _labels_cases(rng) -> list[dict]:
    out = [dict(case) for case in REFUSED]
    for i in range(SIZES["labels"]):
        variant = M.VARIANTS[i % len(M.VARIANTS)]
        out.append(dict(kind="labels", **_setting(rng, variant)))
    return out


def _curve_cases(rng) -> list[dict]:
    out = []
    for i in range(SIZES["curve"]):
        case = _setting(rng, M.VARIANTS[i % len(M.VARIANTS)], explicit=False)
        start = int(rng.integers(1, 40))
        case["steps"] = sorted(set(int(v) for v in start + rng.integers(0, 25, size=5)))
        case.pop("reverts", None)  # reverts must lie within every T of the curve
        out.append(dict(kind="curve", **case))
    return out


def _inverse_cases(rng, kind: str, explicit: bool) -> list[dict]:
    out = []
    while len(out) < SIZES[kind]:
        case = dict(kind=kind, **_setting(rng, M.VARIANTS[len(out) % len(M.VARIANTS)], explicit))
        n = _budget(rng, case)
        if n is None:
            continue
        case["n"] = n
        if kind == "max_steps":  # T is the answer; reverts count once T reaches them
            case.pop("steps")
        if kind == "failure":
            case.pop("delta")
        out.append(case)
    return out


def _ci_cases(rng) -> list[dict]:
    out = []
    for _ in range(SIZES["ci"]):
        tol = Fraction(_decimal(rng, 0.01, 0.1, 2)).limit_denominator(1000)
        weight = int(rng.choice([1, 1, 2, 3]))
        out.append(dict(kind="ci", share=str(tol / weight), delta=_delta(rng),
                        adaptivity=str(rng.choice(ci.ADAPTIVITIES)), steps=int(rng.integers(1, 65)),
                        clauses=int(rng.integers(1, 5)), terms=int(rng.integers(1, 4))))
    return out


def _smallest_cases(rng) -> list[dict]:
    out = []
    for i in range(SIZES["smallest"]):
        m = int(rng.integers(1, 4))
        eps = sorted(_decimal(rng, 0.01, 0.2) for _ in range(m))
        logs = sorted((float(round(rng.uniform(0, 12), 3)) for _ in range(m)), reverse=True)
        case = dict(kind="smallest", log_counts=logs, epsilon=eps, delta=_delta(rng),
                    sides=("upper", "lower", "two-sided")[i % 3])
        if rng.uniform() < 0.6:
            case["max_error_rate"] = float(rng.choice(RATES + [0.6, 0.8]))
        out.append(case)
    return out


def grid(seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    return (_labels_cases(rng) + _curve_cases(rng) + _inverse_cases(rng, "failure", True)
            + _inverse_cases(rng, "max_steps", False) + _inverse_cases(rng, "min_epsilon", True)
            + _ci_cases(rng) + _smallest_cases(rng))


def curve() -> dict:
    """Every variant's exact count at T = 1..1,000 (one ``meter.labels`` call per variant)."""
    steps = np.arange(CURVE_SETTING["steps"][0], CURVE_SETTING["steps"][1] + 1)
    return dict(CURVE_SETTING, labels={v: [int(n) for n in M.labels(v, CURVE_SETTING["epsilon"], CURVE_SETTING["delta"],
                                                                      steps, bound="binomial")]
                                       for v in M.VARIANTS})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="compute only the first LIMIT cases and print them")
    parser.add_argument("--curve", action="store_true", help="write the exact curve T = 1..1,000 instead")
    args = parser.parse_args(argv)
    if args.curve:
        CURVE.write_text(json.dumps(curve(), separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {CURVE}", file=sys.stderr)
        return 0
    cases = grid()
    if args.limit:
        cases = cases[:args.limit]
    for i, case in enumerate(cases):
        case["expected"] = answer(case)
        if i % 25 == 0:
            print(f"{i}/{len(cases)}", file=sys.stderr)
    if args.limit:
        print(json.dumps(cases, indent=1))
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(cases, indent=0, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUTPUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
