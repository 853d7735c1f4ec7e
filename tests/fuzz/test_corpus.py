"""Every hostile or extreme case named in issue 15 (and each case the fuzzer found), kept as a regression test.

``refused`` cases must exit 2 with one line naming the flag (and, where given, the value typed);
``answered`` cases must exit 0 with a checked answer; ``either`` cases may do one or the other
but never print a wrong number (the harness checks every count) and never crash or freeze.
"""
from __future__ import annotations

import json

import pytest

from .harness import check, run_cli

J = ["--format", "json"]
PLAN = ["plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01"]

CASES = [
    # 1. silent wrong numbers from 64-bit overflow
    ("either", ["plan", "--epsilon", "0.01", "--signals", "1000", "--delta", "0.01", "--steps", "1e18", *J], "--steps"),
    ("either", ["plan", "--epsilon", "0.01", "--signals", "1000", "--delta", "0.01", "--steps",
                "18446744073709551617", *J], "--steps"),
    ("either", ["ladder-size", "--epsilon", "0.05", "--step", "1e-300", "--submissions", "100", *J], "--step"),
    # 2. freezes from tiny inputs
    ("refused", ["ci", "--condition", "n > 1e99999999 +/- 0.1", *J], "--condition"),
    ("refused", ["ci", "--condition", "n > 1e30000000 +/- 0.1", *J], "--condition"),
    ("either", ["approve", "{data}/approve_refits.csv", "--steps", "1e8", *J], "--steps"),
    ("either", ["approve", "{data}/approve_refits.csv", "--steps", "1e10", *J], "--steps"),
    ("either", ["approve", "{data}/approve_refits.csv", "--steps", "2^63", *J], "--steps"),
    ("either", ["approve", "{data}/approve_refits.csv", "--steps", "9223372036854775808", *J], "--steps"),
    # 3. exceptions that were not InputError
    ("refused", ["ci", "--condition", "(" * 2000 + "n" + ")" * 2000 + " > 0.1 +/- 0.1", *J], "--condition"),
    ("refused", ["ci", "--condition", "-" * 5000 + "n > 0.1 +/- 0.1", *J], "--condition"),
    ("refused", ["ci", "--condition", "1e400 * n > 0.1 +/- 0.1", *J], "--condition"),
    ("refused", ["ci", "--condition", "n > 1e5000 +/- 0.1", *J], "--condition"),
    ("either", ["plan", "--epsilon", "0.01", "--delta", "0.01", "--steps", "1e300", *J], "--steps"),
    ("either", ["plan", "--epsilon", "1e-300", "--delta", "1e-300", "--steps", "10", *J], "--epsilon"),
    ("either", ["replay", "--example", "emocontext", "--steps", "3.7e37", *J], "--steps"),
    # 4. messages must use the flag the user typed
    ("refused", [*PLAN, "--steps", "10", "--cost-per-hour", "-5"], "--cost-per-hour"),
    ("refused", [*PLAN, "--steps", "10", "--seconds-per-label", "0"], "--seconds-per-label"),
    ("refused", [*PLAN, "--steps", "10", "--tenants", "0"], "--tenants"),
    ("refused", ["replay", "--example", "emocontext", "--ranges", "0,0.5,0.2,1"], "--ranges"),
    ("refused", ["replay", "--example", "nope"], "--example"),
    ("refused", ["ci", "--condition", "n - o > 0.1 +/- 0.1", "--reliability", "1e-400"], "--reliability"),
    # Ladder and P(A>B): counts exact or refused naming the flag typed, extremes answered at once [ladder]
    ("refused", ["ladder-size", "--epsilon", "1e-300", "--step", "0.05", "--submissions", "100", *J], "--epsilon"),
    ("refused", ["ladder-size", "--total-error", "1e-300", "--submissions", "100", *J], "--total-error"),
    ("refused", ["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "1e400", *J],
     "--submissions"),
    ("answered", ["ladder-size", "--epsilon", "0.05", "--step", "0.05", "--submissions", "1e29", "--delta",
                  "5e-324", *J], "--delta"),
    ("answered", ["ladder", "--example", "ladder_ties.csv", "--step", "5e-324", *J], "--step"),
    ("refused", ["compare", "--example", "compare_paired.csv", "--resamples", "1e10", *J], "--resamples"),
    ("answered", ["compare", "--example", "compare_paired.csv", "--resamples", "1e9", *J], "--resamples"),
    ("refused", ["compare", "--example", "compare_paired.csv", "--gamma", "0.5", *J], "--gamma"),
    ("refused", ["compare-size", "--gamma", "0.5000000000001", *J], "--gamma"),
    ("answered", ["compare-size", "--alpha", "1e-300", "--beta", "1e-300", *J], "--alpha"),
]


@pytest.mark.parametrize("expect,argv,flag", CASES, ids=[" ".join(c[1])[:70] for c in CASES])
def test_issue_15_cases(expect, argv, flag):
    from importlib import resources

    data = str(resources.files("meter_dashboard.data"))
    argv = [a.replace("{data}", data) for a in argv]
    outcome = run_cli(argv)
    check(outcome, names=[flag])
    if expect == "refused":
        assert outcome.code == 2, outcome.describe()
    elif expect == "answered":
        assert outcome.code == 0, outcome.describe()
    if outcome.code == 2:
        assert flag in outcome.stderr, outcome.describe()


def test_reliability_message_echoes_the_typed_value():
    outcome = run_cli(["ci", "--condition", "n - o > 0.1 +/- 0.1", "--reliability", "1e-400"])
    assert outcome.code == 2 and "1e-400" in outcome.stderr and "got 1" not in outcome.stderr, outcome.describe()


def test_huge_step_counts_are_exact_or_refused():
    outcome = run_cli(["plan", "--epsilon", "0.01", "--signals", "1000", "--delta", "0.01", "--steps", "1e18", *J])
    if outcome.code == 0:
        labels = json.loads(outcome.stdout)["labels"]
        assert all(isinstance(v, int) and v > 0 for v in labels.values()), labels


# ease.ml/ci commit traces (issue 15: inf in a ci trace, CR-only line endings, 200,000-character fields;
# and the fuzzer's nested-JSON upload, whose one 200,000-character field stopped the csv module)
CI_TRACES = {
    "inf": ("refused", "commit,n,o,d\na,0.84,0.80,0.05\nb,inf,0.5,0.1\n", "line 3, column 'n'"),
    "1e400": ("refused", "commit,n,o,d\na,1e400,0.5,0.1\n", "line 2, column 'n'"),
    "cr_only": ("answered", "commit,n,o,d\ra,0.84,0.80,0.05\rb,0.85,0.84,0.05\r", None),
    "long_field": ("refused", "commit,n,o,d\n" + "x" * 200_000 + ",0.5,0.5,0.1\n", "line 2, column 'commit'"),
    "nested_json": ("refused", "[" * 100_000 + "]" * 100_000, "line 1"),
}


@pytest.mark.parametrize("case", list(CI_TRACES))
def test_ci_trace_cases(tmp_path, case):
    expect, text, where = CI_TRACES[case]
    path = tmp_path / f"{case}.csv"
    path.write_text(text, encoding="utf-8", newline="")
    outcome = run_cli(["ci", "--condition", "n - o > 0.02 +/- 0.01", "--trace", str(path), *J])
    answer = check(outcome, names=[where] if where else ())
    if expect == "refused":
        assert outcome.code == 2, outcome.describe()
    else:
        assert outcome.code == 0 and len(answer["replay"]["commits"]) == 2, outcome.describe()
