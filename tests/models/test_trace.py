"""Reading and validating development traces (meter_dashboard.session.trace)."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.core.validation import InputError
from meter_dashboard.session.trace import EXAMPLES, Trace, example_path, load_example, parse_trace, read_trace

HEADER = "step,val_accuracy,test_accuracy\n"


def csv_bytes(*rows, header=HEADER) -> bytes:
    return (header + "".join(r + "\n" for r in rows)).encode("utf-8")


def error_of(data, **kwargs) -> str:
    with pytest.raises(InputError) as info:
        read_trace(data, **kwargs)
    return str(info.value)


# ---------------------------------------------------------------- valid traces
def test_csv_accuracies_and_gap():
    t = read_trace(csv_bytes("1,0.90,0.88", "2,0.92,0.89"))
    assert t.metric == "accuracy"
    assert t.steps.tolist() == [1, 2]
    assert t.empirical_overfitting.tolist() == [0.02, 0.03]  # |0.90-0.88|, |0.92-0.89|
    assert not t.has_tenants and t.test_size is None
    assert t.reverted.tolist() == [False, False]


def test_gap_rounding_puts_decimal_boundaries_where_people_expect():
    # 0.9363 - 0.9263 is 0.010000000000000009 in binary floating point; the trace says 0.01.
    t = read_trace(csv_bytes("1,0.9363,0.9263"))
    assert t.empirical_overfitting[0] == 0.01


def test_csv_losses_optional_columns_and_extra_columns():
    data = csv_bytes(
        '1,0.20,0.25,alice,false,"first, simple"',
        "2,0.15,0.22,bob,yes,",
        "3,0.14,0.21,alice,0,x",
        header="Step,Val Loss,test-loss,tenant,reverted,description,f1\n",
    )
    t = read_trace(data)
    assert t.metric == "loss"
    assert t.tenants == ("alice", "bob", "alice") and t.tenant_names == ("alice", "bob")
    assert t.reverted.tolist() == [False, True, False]
    assert t.descriptions[0] == "first, simple"
    assert t.ignored_columns == ("f1",)
    assert np.allclose(t.empirical_overfitting, [0.05, 0.07, 0.07])


def test_bom_semicolons_blank_lines_and_crlf():
    data = "\ufeffstep;val_accuracy;test_accuracy\r\n\r\n1;0.5;0.4\r\n2;0.6;0.5\r\n\r\n".encode("utf-8")
    t = read_trace(data)
    assert t.steps.tolist() == [1, 2]


def test_json_object_with_test_size_and_json_list():
    doc = {"test_size": 5509, "steps": [{"step": 0, "val_loss": 0.1, "test_loss": 0.12, "reverted": True}]}
    t = read_trace(json.dumps(doc).encode())
    assert t.test_size == 5509 and t.metric == "loss" and t.reverted.tolist() == [True]
    t2 = read_trace(json.dumps(doc["steps"]).encode())
    assert t2.test_size is None and t2.steps.tolist() == [0]
    assert read_trace(json.dumps(doc).encode(), test_size=100).test_size == 100  # the argument wins


def test_sources_path_file_object_list_frame(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.5}]))
    assert read_trace(path).name == "t.json"
    assert read_trace(str(path)).metric == "accuracy"
    assert len(read_trace(io.BytesIO(csv_bytes("1,0.5,0.5")))) == 1
    assert len(read_trace(io.StringIO(HEADER + "1,0.5,0.5\n"))) == 1
    records = [{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.4}]
    assert read_trace(records).empirical_overfitting.tolist() == [0.1]
    import pandas as pd

    frame = pd.DataFrame({"step": [1, 2], "val_accuracy": [0.5, 0.6], "test_accuracy": [0.5, 0.55],
                          "description": ["a", None]})
    t = read_trace(frame)
    assert t.descriptions == ("a", "")
    trace = read_trace(records)
    assert read_trace(trace) is trace


def test_round_trip_through_json():
    t = load_example("synthetic_overfitting")
    back = read_trace(json.dumps(t.to_dict()).encode(), name="back.json")
    assert back.steps.tolist() == t.steps.tolist()
    assert back.tenants == t.tenants and back.reverted.tolist() == t.reverted.tolist()
    assert np.array_equal(back.val, t.val) and back.test_size == t.test_size
    assert "synthetic" in repr(t) and "tenants=alice, bob" in repr(t)


# ---------------------------------------------------------------- every failure, with row and column
@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "trace must be a CSV or JSON file with a header and at least one step; got an empty file"),
        (b"  \n\n", "got an empty file"),
        (HEADER.encode(), "row 1: trace must be at least one step below the header; got only the header"),
        (csv_bytes("1,0.5", header="step,val_accuracy\n"), "row 1: columns must be a header row naming the columns step "
         "and either val_accuracy, test_accuracy or val_loss, test_loss (missing: test_accuracy, which goes with "
         "val_accuracy); got 'step,val_accuracy'"),
        (csv_bytes("1,0.5,0.5", header="version,val_accuracy,test_accuracy\n"), "(missing: step)"),
        (csv_bytes("1,0.5,0.5", header="step,a,b\n"), "(missing: the score columns)"),
        (csv_bytes("1,0.5,0.5,0.5,0.5", header="step,val_accuracy,test_accuracy,val_loss,test_loss\n"),
         "columns must be either val_accuracy, test_accuracy or val_loss, test_loss, not both"),
        (csv_bytes("1,0.5,0.5", header="step,step,val_accuracy,test_accuracy\n"), "row 1: columns must be unique"),
        (csv_bytes("1,0.5,0.5", "2,0.5,abc"),
         "row 3, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; got 'abc'"),
        (csv_bytes("1,,0.5"), "row 2, column 2 (val_accuracy): val_accuracy must be a number in [0, 1]; got an empty cell"),
        (csv_bytes("1,0.5"), "row 2, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; got an empty cell"),
        (csv_bytes("1,0.5,1.2"), "row 2, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; got '1.2'"),
        (csv_bytes("1,-0.1,0.5"), "row 2, column 2 (val_accuracy): val_accuracy must be a number in [0, 1]; got '-0.1'"),
        (csv_bytes("1,88.9,0.5"), "(write percentages as fractions: 0.889 for 88.9%)"),
        (csv_bytes('1,"0,5",0.5'), "(use a dot as the decimal separator); got '0,5'"),
        (csv_bytes("1,0.5,NaN"), "row 2, column 3 (test_accuracy): test_accuracy must be a number in [0, 1], not NaN; got NaN"),
        (csv_bytes("1,0.5,inf"), "test_accuracy must be a number in [0, 1]; got 'inf'"),
        (csv_bytes("1,0.5,0.5", "x,0.5,0.5"), "row 3, column 1 (step): step must be a whole number; got 'x'"),
        (csv_bytes("1.5,0.5,0.5"), "row 2, column 1 (step): step must be a whole number; got '1.5'"),
        (csv_bytes("-1,0.5,0.5"), "step must be a whole number >= 0; got '-1'"),
        (csv_bytes("1,0.5,0.5", "2,0.5,0.5", "2,0.6,0.6"),
         "row 4, column 1 (step): step must be unique, each step once (step 2 is already on row 3); got 2"),
        (csv_bytes("1,0.5,0.5", "5,0.5,0.5", "3,0.6,0.6"),
         "row 4, column 1 (step): step must be increasing, in the order the models were submitted (after step 5); got 3"),
        (csv_bytes("1,0.5,0.5,oops"), "row 2: fields must be 3 per row, like the header"),
        (csv_bytes("1,0.5,0.5,maybe", header="step,val_accuracy,test_accuracy,reverted\n"),
         "row 2, column 4 (reverted): reverted must be true or false (also yes/no, 1/0); got 'maybe'"),
        (csv_bytes("1,0.5,0.5,", header="step,val_accuracy,test_accuracy,tenant\n"),
         "row 2, column 4 (tenant): tenant must be a name (who submitted the step) in every row"),
        (b'{"steps": [{"step": 1, "val_loss": 0.1, "test_loss": NaN}]}',
         "row 1 (steps[0]), field test_loss: test_loss must be a number in [0, 1], not NaN; got NaN"),
        (b'[{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.5}, {"step": 2, "val_accuracy": 0.5}]',
         "row 2 (steps[1]): test_accuracy must be present in every step entry"),
        (b'[{"step": 1, "val_accuracy": 0.5, "test_accuracy": true}]',
         "row 1 (steps[0]), field test_accuracy: test_accuracy must be a number in [0, 1]; got True"),
        (b'[{"step": 2, "val_accuracy": 0.5, "test_accuracy": 0.5}, {"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.5}]',
         "row 2 (steps[1]), field step: step must be increasing"),
        (b'{"steps": [1, 2]}', "row 1 (steps[0]): step entry must be an object"),
        (b'{"steps": []}', "trace must be at least one step; got an empty list"),
        (b'{"rows": []}', "trace must be a JSON object with a 'steps' list (or a list of steps); got keys 'rows'"),
        (b'{"test_size": 0, "steps": [{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.5}]}',
         "field test_size: test_size must be a whole number >= 1; got 0"),
        (b'{"steps": [\n  {"step": 1,, }\n]}', "line 2, column 14: trace must be valid JSON"),
        (b"step,val_accuracy,test_accuracy\n1,0.5,\xff0.4\n",
         "line 2, byte 7: trace must be UTF-8 text (save the file as CSV UTF-8 or JSON); got byte(s) ff that are not UTF-8"),
        ("step,val_accuracy\n".encode("utf-16"), "byte 1: trace must be UTF-8 text (save the file as CSV UTF-8); got UTF-16 text"),
        (b"PK\x03\x04\x14\x00\x06\x00", "trace must be a CSV or JSON text file (save a spreadsheet as CSV, UTF-8); got a ZIP"),
    ],
)
def test_every_failure_names_where_and_what(data, expected):
    assert expected in error_of(data)


def test_size_limit_bytes_and_path(tmp_path):
    data = csv_bytes(*[f"{i},0.5,0.5" for i in range(1, 200)])
    message = error_of(data, max_bytes=1024)
    assert message.startswith("trace must be a file of at most 1 KiB; got ")
    assert f"({len(data):,} bytes)" in message
    path = tmp_path / "big.csv"
    path.write_bytes(data)
    assert "at most 1 KiB" in error_of(path, max_bytes=1024)
    assert "at most 1 KiB" in error_of(io.BytesIO(data), max_bytes=1024)
    assert len(read_trace(data, max_bytes=len(data))) == 199  # exactly at the limit is fine


def test_missing_file_and_unsupported_source(tmp_path):
    assert "trace must be an existing file" in error_of(tmp_path / "nope.csv")
    assert "got int" in error_of(42)


def test_explicit_format_and_sniffing():
    text = '[{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.4}]'
    assert len(parse_trace(text)) == 1  # sniffed: starts with [
    with pytest.raises(InputError, match="format must be 'csv' or 'json'"):
        parse_trace(text, format="xml")
    with pytest.raises(InputError, match="columns must be"):
        parse_trace(text, format="csv")


def test_uploaded_text_already_decoded():
    # Panel's FileDropper hands text/* files over as str.
    t = parse_trace(HEADER + "1,0.5,0.4\n", name="upload.csv")
    assert t.name == "upload.csv" and len(t) == 1


# ---------------------------------------------------------------- shipped examples
def test_emocontext_example_is_the_shared_real_trace():
    t = load_example("emocontext")
    assert not t.synthetic and t.test_size == 5509  # test set of 5,509 conversations (provenance)
    assert t.steps.tolist() == list(range(1, 9))
    # Figure 3a values as read off the repository's plots (data/emocontext.md)
    assert t.val.tolist()[0] == 0.8891 and t.test.tolist()[-1] == 0.9202
    assert t.ignored_columns == ("val_f1_micro", "test_f1_micro")
    text = example_path("emocontext").read_text()
    assert text.startswith("step,val_accuracy,test_accuracy")


def test_synthetic_example_is_labelled_and_regenerates_identically():
    from tests.generators import generate_synthetic_trace as gen

    t = load_example("synthetic_overfitting")
    assert t.synthetic and EXAMPLES["synthetic_overfitting"].synthetic
    assert "SYNTHETIC" in t.provenance
    assert t.test_size == gen.TEST_SIZE
    assert t.tenant_names == ("alice", "bob") and t.revert_steps == [9, 18]
    doc = json.loads(example_path("synthetic_overfitting").read_text())
    assert doc["synthetic"] is True and doc["seed"] == gen.SEED
    assert doc["steps"] == gen.simulate(gen.SEED)  # the committed file is what the script makes


def test_unknown_example():
    with pytest.raises(InputError, match="example must be one of emocontext, synthetic_overfitting; got 'x'"):
        load_example("x")


# ---------------------------------------------------------------- properties
scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(scores, scores), min_size=1, max_size=30))
def test_any_valid_csv_parses_and_the_gap_is_the_rounded_difference(pairs):
    rows = [f"{i + 1},{v!r},{t!r}" for i, (v, t) in enumerate(pairs)]
    trace = read_trace(csv_bytes(*rows))
    assert isinstance(trace, Trace) and len(trace) == len(pairs)
    expected = [abs(v - t) for v, t in pairs]
    assert np.allclose(trace.empirical_overfitting, expected, rtol=0, atol=1e-12)
    assert np.all((trace.empirical_overfitting >= 0) & (trace.empirical_overfitting <= 1))


def test_every_file_reader_shares_the_upload_rules():
    """Loss files, run files, modification and commit traces get the trace's size and encoding checks."""
    import meter_dashboard.approvals.model as approve
    import meter_dashboard.ci as ci
    import meter_dashboard.comparison.model as compare
    import meter_dashboard.leaderboard.model as ladder
    from meter_dashboard.core.files import MAX_UPLOAD_BYTES

    readers = [ladder.read_losses, compare.read_runs, approve.read_modification_trace, ci.read_ci_trace]
    for read in readers:
        with pytest.raises(InputError, match=r"line 2, byte 3: .* must be UTF-8 text"):
            read(b"a,b\n0.\xff,1\n")
        with pytest.raises(InputError, match=r"must be a file of at most 10 MiB"):
            read(b"a,b\n" + b"0,1\n" * (MAX_UPLOAD_BYTES // 4 + 1))
        with pytest.raises(InputError, match=r"xlsx"):
            read(b"PK\x03\x04 spreadsheet")


# ---------------------------------------------------------------- issue 15: hostile and extreme traces
@pytest.mark.parametrize(
    "data, expected",
    [
        # 64-bit wrap: exact or refused, never -9223372036854775808
        (csv_bytes("1e300,0.5,0.4"), "row 2, column 1 (step): step must be a whole number below 1e30; got '1e300'"),
        (csv_bytes("1e30,0.5,0.4", "2e30,0.5,0.4"),
         "row 2, column 1 (step): step must be a whole number <= 9223372036854775807 (2**63 - 1); got '1e30'"),
        (csv_bytes("9223372036854775808,0.5,0.4"), "step must be a whole number <= 9223372036854775807"),
        (b'[{"step": 1e30, "val_accuracy": 0.5, "test_accuracy": 0.5}]',
         "row 1 (steps[0]), field step: step must be a whole number written without a decimal point or exponent "
         "above 9,007,199,254,740,992"),
        (b'[{"step": 100000000000000000000, "val_accuracy": 0.5, "test_accuracy": 0.5}]',
         "row 1 (steps[0]), field step: step must be a whole number <= 9223372036854775807"),
        # RecursionError, OverflowError, Python's digit limit
        (b"[" * 100_000 + b"]" * 100_000, "line 1, column 65: trace must be JSON nested at most 64 levels deep"),
        (b'[{"step": 1, "val_accuracy": 1' + b"0" * 400 + b', "test_accuracy": 0.5}]',
         "row 1 (steps[0]), field val_accuracy: val_accuracy must be a number in [0, 1]; got a number too large"),
        (b'[{"step": 1,\n "val_accuracy": 1' + b"0" * 5000 + b', "test_accuracy": 0.5}]',
         "line 2, column 18: trace must be JSON numbers of at most 4,300 digits"),
        (b'[{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.5, "tenant": Infinity}]',
         "row 1 (steps[0]), field tenant: tenant must be a name (who submitted the step); got inf"),
        (b'[{"step": 1, "val_accuracy": 0.5, "test_accuracy": 0.5, "tenant": NaN}]', "field tenant: tenant must be"),
        (b'[{"step": 1, "val_accuracy": 1e400, "test_accuracy": 0.5}]', "val_accuracy must be a number in [0, 1]"),
        # csv.Error: CR-only line endings and a 200,000-character field
        (b"step,val_accuracy,test_accuracy\r1,0.5,0.4\r2,0.5,x\r",
         "row 3, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; got 'x'"),
        (csv_bytes('1,0.5,0.4,"' + "x" * 200_000 + '"', header="step,val_accuracy,test_accuracy,description\n"),
         "row 2: trace must be CSV cells of at most 131,072 characters; got a longer cell"),
        (csv_bytes("1,0.5,0.4," + "x" * 20_000, header="step,val_accuracy,test_accuracy,description\n"),
         "row 2, column 4 (description): description must be text of at most 10,000 characters; got 20,000"),
        # a first row with an extra field (pandas would silently drop it)
        (csv_bytes("1,0.5,0.4,9", "2,0.5,0.4"), "row 2: fields must be 3 per row, like the header"),
    ],
)
def test_hostile_traces_are_refused_with_row_and_column(data, expected):
    assert expected in error_of(data)


def test_exact_steps_at_the_edges_of_64_bits():
    t = read_trace(csv_bytes("9007199254740993,0.5,0.4", "9223372036854775807,0.5,0.4"))
    assert t.steps.tolist() == [9007199254740993, 2**63 - 1]  # exact, not float-rounded
    j = read_trace(b'[{"step": 9007199254740993, "val_accuracy": 0.5, "test_accuracy": 0.4}]')
    assert j.steps.tolist() == [9007199254740993]
    # whole numbers written as decimals (pandas' to_csv of a float column) are exact too
    assert read_trace(csv_bytes("1.0,0.5,0.4", "2.00,0.5,0.4", " 3 ,0.5,0.4")).steps.tolist() == [1, 2, 3]
    with pytest.raises(InputError, match="row 2, column 1 \\(step\\): step must be a whole number; got '5.0000000000000000001'"):
        read_trace(csv_bytes("5.0000000000000000001,0.5,0.4"))


def test_cr_only_line_endings_read_like_any_other():
    t = read_trace(b"step,val_accuracy,test_accuracy\r1,0.5,0.4\r2,0.6,0.5\r")
    assert t.steps.tolist() == [1, 2] and t.val.tolist() == [0.5, 0.6]


def test_memory_error_becomes_an_input_error(monkeypatch):
    import meter_dashboard.session.trace as trace_module

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(trace_module, "parse_csv", exhausted)
    assert "trace must be a file this machine has the memory to read" in error_of(csv_bytes("1,0.5,0.4"))


def _with_quotes(data: bytes) -> bytes:
    """The same trace with a quoted description column: quotes send any problem to the full exact pass."""
    lines = data.decode().split("\n")
    return "\n".join([lines[0] + ",description"] + [ln + ',"x"' if ln else ln for ln in lines[1:]]).encode()


bad_cells = st.sampled_from(["", "x", "1.5", "-0.1", "nan", "inf", "1e400", " ", "0x1", "1_0"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(scores, scores), min_size=1, max_size=25), st.data())
def test_the_vectorized_pass_and_the_exact_pass_agree(pairs, data):
    """Flagged rows re-read by the exact rules give the messages (and values) of a cell-by-cell read."""
    rows = [[str(i + 1), repr(v), repr(t)] for i, (v, t) in enumerate(pairs)]
    if data.draw(st.booleans()):  # damage one cell
        r = data.draw(st.integers(0, len(rows) - 1))
        c = data.draw(st.integers(0, 2))
        rows[r][c] = data.draw(bad_cells) if c else data.draw(st.sampled_from(["x", "-1", "1.5", "1e30", "0"]))
    if data.draw(st.booleans()) and len(rows) > 1:  # repeat or reorder a step
        rows[-1][0] = rows[0][0]
    plain = csv_bytes(*[",".join(r) for r in rows])
    try:
        fast = read_trace(plain)
    except InputError as exc:
        with pytest.raises(InputError) as info:
            read_trace(_with_quotes(plain))
        assert str(info.value) == str(exc)
    else:
        slow = read_trace(_with_quotes(plain))
        assert fast.steps.tolist() == slow.steps.tolist()
        assert np.array_equal(fast.val, slow.val) and np.array_equal(fast.test, slow.test)


def test_columns_tenants_and_flags_from_the_vectorized_pass():
    data = csv_bytes(" bob ,1,0.5,0.4,yes", "alice,2,0.5,0.4,no", "bob,3,0.5,0.4,TRUE",
                     header="tenant,step,val_accuracy,test_accuracy,reverted\n")
    t = read_trace(data)
    assert t.tenants == ("bob", "alice", "bob") and t.tenant_names == ("bob", "alice")
    assert t.tenant_codes.tolist() == [0, 1, 0] and t.reverted.tolist() == [True, False, True]
    assert t.to_columns()["tenant"] == ("bob", "alice", "bob")


# ---------------------------------------------------------------- issue 24: up to ten bad cells named at once
def test_up_to_ten_bad_cells_are_named_in_file_order():
    from meter_dashboard.session.trace_formats import MAX_PROBLEMS, TraceProblems

    rows = [f"{i},0.9,{'1.7' if i % 3 == 0 else '0.8'}" for i in range(1, 60)]  # steps 3, 6, ... are bad
    with pytest.raises(TraceProblems) as info:
        read_trace(("step,val_accuracy,test_accuracy\n" + "\n".join(rows) + "\n").encode())
    exc = info.value
    assert len(exc.problems) == MAX_PROBLEMS == 10 and exc.more
    assert [p.location for p in exc.problems] == [f"row {3 * k + 4}, column 3 (test_accuracy)" for k in range(10)]
    assert str(exc).startswith("the first 10 of more than 10 problems in the trace: row 4, column 3 (test_accuracy)")
    # two bad cells in one row, and a row with too many fields: all named, nothing else
    with pytest.raises(TraceProblems) as info:
        read_trace(b"step,val_accuracy,test_accuracy\n1,2,x\n2,0.5,0.4,9\n3,0.5,0.4\n")
    assert [p.location for p in info.value.problems] == [
        "row 2, column 2 (val_accuracy)", "row 2, column 3 (test_accuracy)", "row 3"] and not info.value.more
    assert str(info.value).startswith("3 problems in the trace: row 2, column 2 (val_accuracy)")


def test_a_single_bad_cell_keeps_its_own_message():
    with pytest.raises(InputError) as info:
        read_trace(b"step,val_accuracy,test_accuracy\n1,0.90,0.88\n2,0.91,1.7\n")
    assert str(info.value) == "row 3, column 3 (test_accuracy): test_accuracy must be a number in [0, 1]; got '1.7'"
    assert not hasattr(info.value, "problems")


def test_json_steps_name_every_bad_field():
    from meter_dashboard.session.trace_formats import TraceProblems

    steps = [{"step": 1, "val_accuracy": 2, "test_accuracy": 0.5}, {"step": 2, "val_accuracy": 0.5},
             {"step": 3, "val_accuracy": 0.5, "test_accuracy": -1}]
    with pytest.raises(TraceProblems) as info:
        read_trace(json.dumps(steps).encode(), format="json")
    assert [p.location for p in info.value.problems] == [
        "row 1 (steps[0]), field val_accuracy", "row 2 (steps[1])", "row 3 (steps[2]), field test_accuracy"]


@settings(max_examples=40, deadline=None)
@given(bad=st.sets(st.integers(1, 300), min_size=0, max_size=14))
def test_the_named_cells_are_the_first_bad_ones(bad):
    from meter_dashboard.session.trace_formats import TraceProblems

    rows = [f"{i},0.9,{'x' if i in bad else '0.8'}" for i in range(1, 301)]
    data = ("step,val_accuracy,test_accuracy\n" + "\n".join(rows) + "\n").encode()
    if not bad:
        assert len(read_trace(data)) == 300
        return
    with pytest.raises(InputError) as info:
        read_trace(data)
    named = info.value.problems if isinstance(info.value, TraceProblems) else (info.value,)
    expected = sorted(bad)[:10]
    assert [p.location for p in named] == [f"row {i + 1}, column 3 (test_accuracy)" for i in expected]
    assert getattr(info.value, "more", False) == (len(bad) > 10)


def test_examples_are_read_once_per_process_and_shared_read_only():
    # issue 19: every session used to parse the example's CSV again
    a, b = load_example("emocontext"), load_example("emocontext")
    assert a is b
    for array in (a.steps, a.val, a.test, a.reverted, a.tenant_codes):
        with pytest.raises(ValueError):
            array[0] = array[0]
    changed = a.with_test_size(60_000)  # a change is a new trace; the shared one stays as it was
    assert changed is not a and changed.val is a.val and a.test_size == 5509
