"""Hypothesis strategies for hostile and careless input: numbers, lists, conditions, files."""
from __future__ import annotations

from hypothesis import strategies as st

#: Text a careless or hostile person types where a number belongs (issue 15's found cases first).
HOSTILE_NUMBERS = [
    "", " ", "abc", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400", "1e99999999",
    "1e-99999999", "9" * 5000, "0." + "0" * 5000 + "1", "1e18", "18446744073709551617", "-0", "0", "-1",
    "1e300", "1e-300", "3.7e37", "2^63", "9223372036854775808", "0x10", "1_000", "١٢", "½", "1e", ".", "--1",
    "+-1", "1,5", "１", "\u200b1", "1e30000000", "1" * 41, "0.5.5", "1e+", "true", "None", "[1]",
]


def number_text(low: float, high: float, *, integer: bool = False, hostile: float = 0.35):
    """Mostly valid numbers in [low, high] as text, sometimes hostile text."""
    if integer:
        valid = st.integers(int(low), int(high)).map(str)
    else:
        valid = st.floats(low, high, allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.6g}")
    wild = st.one_of(st.sampled_from(HOSTILE_NUMBERS),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr),
                     st.integers(-(2**130), 2**130).map(str),
                     st.text(max_size=12))
    return st.one_of(valid, valid, wild) if hostile >= 0.3 else st.one_of(valid, valid, valid, wild)


def number_list(low, high, *, integer=False, max_size=6, sort=False):
    """Comma-separated lists: mostly valid, sometimes with hostile items or absurd lengths."""
    item = (st.integers(int(low), int(high)).map(str) if integer
            else st.floats(low, high, allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.4g}"))
    valid = st.lists(item, min_size=1, max_size=max_size).map(
        lambda xs: ",".join(sorted(xs, key=float) if sort else xs))
    wild = st.one_of(
        st.lists(st.sampled_from(HOSTILE_NUMBERS), min_size=1, max_size=4).map(",".join),
        st.just(",".join(["0.1"] * 5000)),
        st.just(",,,"),
        st.text(max_size=20),
    )
    return st.one_of(valid, valid, wild)


def condition_text():
    """ease.ml/ci conditions: valid clauses, nesting bombs, huge literals, garbage."""
    literal = st.one_of(st.sampled_from(["0.02", "0.1", "0.01", "1", "0", "2", "0.5"]),
                        st.sampled_from(HOSTILE_NUMBERS))
    variable = st.sampled_from(["n", "o", "d", "x", "n_1"])
    term = st.one_of(variable, st.tuples(literal, variable).map(lambda t: f"{t[0]} * {t[1]}"))
    expr = st.lists(term, min_size=1, max_size=3).map(lambda ts: " - ".join(ts))
    clause = st.tuples(expr, st.sampled_from([">", "<", ">=", "=", "!"]), literal, literal).map(
        lambda t: f"{t[0]} {t[1]} {t[2]} +/- {t[3]}")
    valid = st.lists(clause, min_size=1, max_size=3).map(lambda cs: " /\\ ".join(cs))
    bombs = st.one_of(
        st.integers(1, 5000).map(lambda k: "(" * k + "n" + ")" * k + " > 0.1 +/- 0.1"),
        st.integers(1, 8000).map(lambda k: "-" * k + "n > 0.1 +/- 0.1"),
        st.sampled_from(["n > 1e30000000 +/- 0.1", "1e400 * n > 0 +/- 0.1", "n > 1e5000 +/- 0.1",
                         "n - o > 0.02 +/- 0.01 /\\ " * 2000 + "d < 0.1 +/- 0.01", "n >", "", "+/-",
                         "n > 0.1 +/- 0", "n > 0.1 +/- -0.1", "__import__('os')", "n > 0.1 +/- 0.1 \x00"]),
    )
    return st.one_of(valid, valid, bombs, st.text(max_size=40))


#: Malformed upload contents (bytes), each a case found by hand or by this fuzzer.
MALFORMED_FILES = {
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "utf16": "step,val_accuracy,test_accuracy\n1,0.5,0.5\n".encode("utf-16"),
    "cr_only": b"step,val_accuracy,test_accuracy\r1,0.5,0.5\r2,0.6,0.5\r",
    "long_field": b"a,b\n" + b"1" * 200_000 + b",0.5\n",
    "header_only": b"step,val_accuracy,test_accuracy\n",
    "nan_cells": b"a,b\nnan,0.5\ninf,-inf\n",
    "huge_values": b"step,val_accuracy,test_accuracy\n1,1e400,0.5\n1e300,0.5,0.5\n",
    "nested_json": b"[" * 100_000 + b"]" * 100_000,
    "json_bomb_numbers": b'{"steps": [{"step": 1e999999, "val_accuracy": 1, "test_accuracy": 1}]}',
    "quotes": b'a,b\n"unterminated,0.5\n',
    "xlsx_magic": b"PK\x03\x04" + b"\x00" * 100,
    "many_columns": b",".join(b"c%d" % i for i in range(20_000)) + b"\n" + b",".join(b"0.5" for _ in range(20_000)),
    "duplicate_steps": b"step,val_accuracy,test_accuracy\n1e30,0.5,0.5\n2e30,0.5,0.5\n",
}
