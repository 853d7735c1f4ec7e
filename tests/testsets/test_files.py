"""Labels and predictions files: the fast paths agree with the careful ones, and every refusal names
row, column and value like the trace reader (never a label's text)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.core.validation import InputError
from meter_dashboard.testsets import files


def labels(text: str):
    return files.read_labels(text.encode())


def preds(source):
    return files.read_predictions(source.encode() if isinstance(source, str) else source)


def message(fn, *args) -> str:
    with pytest.raises(InputError) as info:
        fn(*args)
    return str(info.value)


def test_padding_semicolons_tabs_bom_blank_rows_and_extra_columns():
    plain = labels("id,label\na,cat\nb,dog\n")
    for text in ("id , label\n a ,cat \n\n b,\tdog\n", "\ufeffid;label\na;cat\nb;dog\n", "id\tlabel\na\tcat\nb\tdog\n",
                 "note,id,label\nx,a,cat\ny,b,dog\n", '"id","label"\n"a","cat"\n"b","dog"\n', "id,label\r\na,cat\r\nb,dog\r\n"):
        got = labels(text)
        assert got.ids.tolist() == ["a", "b"] and got.sha256 == plain.sha256, text
    assert repr(plain) == "LabelSet(2 examples, 2 classes)"


@pytest.mark.parametrize("text, expected", [
    ("", "labels must be a CSV file with a header id,label and at least one row; got an empty file"),
    ("id,label\n", "row 1: labels must be at least one row below the header; got only the header"),
    ("id,class\na,cat\n", "row 1: columns must be a header row naming the columns id and label (missing: label); "
                          "got 'id,class'"),
    ("id,id,label\na,a,cat\n", "row 1: columns must be unique column names; got 'id' twice"),
    ("id,label\na,cat\nb,dog,extra\n", "row 3: fields must be 2 per row, like the header (quote text that contains "
                                       "','); got 3 fields"),
    ("id,label\n,cat\n", "row 2, column 1 (id): id must be an id in every row; got an empty cell"),
    ("id,label\na,cat\n\nb\n", "row 4, column 2 (label): label must be a label in every row; got an empty cell"),
    ("id,label\na,cat\nb,dog\na,bird\n", "row 4, column 1 (id): id must be unique, each id once (id 'a' is already "
                                         "on row 2); got 'a'"),
    ("id,label\n" + "x" * 201 + ",cat\n", "row 2, column 1 (id): id must be an id of at most 200 characters; "
                                          "got 201 characters"),
    ("id,label\na," + "s" * 201 + "\n", "row 2, column 2 (label): label must be a label of at most 200 characters; "
                                        "got 201 characters"),
    ('id,label\na,"x\ny"\n', "row 2, column 2 (label): label must be a label on one line (no line breaks); "
                             "got a line break"),
])
def test_label_file_refusals(text, expected):
    assert message(labels, text) == expected


def test_prediction_refusals_echo_predictions_but_never_labels():
    assert message(preds, "id,prediction\na," + "p" * 201 + "\n").endswith("got '" + "p" * 57 + "...'")
    assert message(preds, {"a": "x\ny"}) == "predictions['a']: prediction must be a prediction on one line (no line " \
                                            "breaks); got 'x\\ny'"
    assert message(preds, {" ": "x"}) == "predictions[' ']: id must be a non-empty string of at most 200 characters; " \
                                         "got an empty string"
    assert message(preds, {"a": None}) == "predictions['a']: prediction must be a string (or a whole number); got None"
    assert message(preds, {}) == "predictions must be one prediction per test example; got no predictions"
    assert preds({"a": 3, "b": " dog "}).values.tolist() == ["3", "dog"]
    frame = pd.DataFrame({"ID": ["a", "b"], "Prediction": ["cat", "dog"]})
    assert preds(frame).ids.tolist() == ["a", "b"]
    assert preds(pd.Series({"a": "cat"})).values.tolist() == ["cat"]
    assert message(preds, pd.DataFrame({"x": [1]})) == "predictions must be a DataFrame with columns id and " \
                                                       "prediction; got columns 'x'"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.randoms(use_true_random=False))
def test_align_puts_any_order_back_in_the_labels_order(n, rnd):
    ids = np.asarray([f"id{k}" for k in range(n)], dtype=object)
    values = np.asarray([f"v{rnd.randint(0, 3)}" for _ in range(n)], dtype=object)
    order = list(range(n))
    rnd.shuffle(order)
    given_ = files.Predictions(ids=ids[order], values=values[order], rows=np.arange(2, n + 2))
    aligned = files.align(ids, pd.Index(ids), given_)
    assert aligned.tolist() == values.tolist()
    assert files.predictions_hash(aligned) == files.predictions_hash(values)
    if n > 1:  # drop one: the first missing id is named
        short = files.Predictions(ids=ids[order][1:], values=values[order][1:], rows=np.arange(2, n + 1))
        text = message(files.align, ids, pd.Index(ids), short)
        assert f"no prediction for 1 id(s), the first '{ids[order][0]}'" in text


def test_pack_and_unpack():
    values = np.asarray(["a", "é", "c d"], dtype=object)
    assert files.unpack_strings(files.pack_strings(values)).tolist() == values.tolist()


@pytest.mark.parametrize("text", ['"', '"\n'])
def test_a_lone_quote_is_refused_by_name_not_a_500(text):
    # found by schemathesis in a full run: a text/csv submission of '"' left the reader with no row (IndexError, 500)
    with pytest.raises(InputError, match="an unterminated quote"):
        files.read_predictions(text.encode())
    with pytest.raises(InputError, match="an unterminated quote"):
        files.read_labels(text.encode())
