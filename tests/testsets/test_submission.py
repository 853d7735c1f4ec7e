"""The one reader of request bodies (issue 23): byte and line counts across chunk boundaries, JSON depth
and member counts with brackets and colons inside strings - each against an independent count."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.core.validation import InputError
from meter_dashboard.testsets.submission import BodyReader, TooLarge, _members, json_depth, parse_json, read_submission

TRICKY = st.text(alphabet=st.sampled_from(list('ab{}[]:,"\\ \n\u00e9')), max_size=8)
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | TRICKY,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3),
                      max_leaves=12)


def depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def members(value) -> int:
    if isinstance(value, dict):
        return len(value) + sum(members(v) for v in value.values())
    if isinstance(value, list):
        return sum(members(v) for v in value)
    return 0


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans())
def test_depth_and_members_ignore_brackets_and_colons_inside_strings(value, ascii_only):
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    assert json_depth(data, limit=-1) == depth(value)  # the exact count (forced)
    for limit in range(5):  # the decision, whichever way it is reached
        assert (json_depth(data, limit) > limit) == (depth(value) > limit)
    assert _members(data, limit=-1) == members(value)  # the exact count (forced)
    assert _members(data, limit=10 ** 9) >= members(value)  # the cheap bound never undercounts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"\r", b"\n", b"\r\n"]), max_size=80).map(b"".join),
       st.lists(st.integers(1, 7), min_size=1, max_size=40))
def test_line_breaks_are_counted_across_chunk_boundaries(data, cuts):
    reader, start = BodyReader(10 ** 6, max_lines=10 ** 6), 0
    for size in cuts * (len(data) // max(sum(cuts), 1) + 1):
        if start >= len(data):
            break
        reader.feed(data[start:start + size])
        start += size
    reader.feed(data[start:])
    assert reader.lines == len(re.findall(rb"\r\n|\r|\n", data)) and bytes(reader.finish()) == data


def test_limits_are_refused_as_they_pass():
    reader = BodyReader(10, what="the body")
    reader.feed(b"0123456789")
    with pytest.raises(TooLarge, match=r"^the body must be at most 10 bytes \(10 bytes\); got more$"):
        reader.feed(b"x")
    lines = BodyReader(1000, max_lines=3, what="the submission", lines_rule="2 labels and a header")
    lines.feed(b"id,prediction\na,1\nb,2\n")
    with pytest.raises(TooLarge, match=r"^the submission must hold at most 3 lines \(2 labels and a header\)"):
        lines.feed(b"\n")
    last = BodyReader(1000, max_lines=3, what="the submission", lines_rule="r")
    last.feed(b"id,prediction\na,1\nb,2\nc")  # a fourth line without a line break
    with pytest.raises(TooLarge, match="got 4$"):
        last.finish()


def test_json_bodies():
    assert parse_json(b'{"tenant": "bob"}') == {"tenant": "bob"}
    with pytest.raises(InputError, match=r"^body must be JSON nested at most 8 deep; got deeper nesting$"):
        parse_json(b"[" * 9 + b"]" * 9)
    assert parse_json(b'{"a": ' + b"[" * 7 + b"]" * 7 + b"}") == {"a": [[[[[[[]]]]]]]}
    with pytest.raises(InputError, match="repeated key 'a'"):
        parse_json(b'{"a": 1, "a": 2}')
    with pytest.raises(InputError, match="^body must be a JSON object; got 'list'$"):
        parse_json(b"[1]")
    with pytest.raises(InputError, match=r"^byte 3: body must be UTF-8 JSON; got bytes that are not UTF-8$"):
        parse_json(b'{"\xff": 1}')
    with pytest.raises(TooLarge, match="at most 3 JSON members"):
        parse_json(b'{"predictions": {"a": "1", "b": "2"}, "val_accuracy": 0.5}', max_members=3)
    predictions, val = read_submission(bytearray(b'{"predictions": {"a": "x"}, "val_accuracy": 0.5}'),
                                       "application/json", labels=1)
    assert list(predictions) == [("a", "x")] and val == 0.5
    with pytest.raises(InputError, match='^body must be JSON {"predictions"'):
        read_submission(bytearray(b"  \n"), "application/json", labels=1)
