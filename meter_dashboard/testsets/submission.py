"""Request bodies of the guarded-test-set API, read within explicit limits (issue 23).

One reader for every body (:class:`BodyReader`): it counts bytes as they arrive and, for a
submission, lines too, and refuses a body the moment it passes a limit, so the server
never holds more than the limit:

- :data:`MAX_SUBMISSION_BYTES` (100 MiB) for a submission, :data:`MAX_SMALL_BODY_BYTES`
  (64 KiB) for every other body;
- a submission to a test set of n labels holds at most n + 1 lines (the n rows and a
  header; blank lines count, a last line break does not), or, as JSON, at most n
  predictions: more can never be a valid submission, whatever the bytes;
- a CSV submission's line is at most :data:`~meter_dashboard.core.files.MAX_ROW_BYTES`
  (256 KiB), counted as the body arrives (a line that spans chunks is refused as soon as it
  passes; the whole body's shape is checked again before it is parsed:
  :func:`~meter_dashboard.core.files.check_csv_shape`);
- JSON nested at most :data:`MAX_JSON_DEPTH` deep (a submission needs 2).

One parser for both forms of a submission (:func:`read_submission`): the ``id,prediction``
CSV file itself (``Content-Type: text/csv``, the validation accuracy in the query) or JSON
``{"predictions": {id: prediction}, "val_accuracy": x}``.  Errors are
:class:`~meter_dashboard.core.validation.InputError` (HTTP 400) or :class:`TooLarge` (413), each
one line that names the limit.
"""
from __future__ import annotations

import json
import re

import numpy as np

from ..core.files import MAX_ROW_BYTES, human_bytes
from ..core.validation import InputError, raw
from . import files

__all__ = ["MAX_SUBMISSION_BYTES", "MAX_SMALL_BODY_BYTES", "MAX_JSON_DEPTH", "MAX_PATH_CHARS", "TooLarge", "BodyReader",
           "parse_json", "read_submission", "json_depth"]

#: The largest submission body (the CSV or JSON of the predictions).
MAX_SUBMISSION_BYTES = files.MAX_FILE_BYTES
#: Every other body (a token request, an admin action) is tiny.
MAX_SMALL_BODY_BYTES = 64 * 1024
#: JSON deeper than this is refused before it is parsed (a submission is 2 deep).
MAX_JSON_DEPTH = 8
#: Longer URL paths are answered 414 (the API's own are under 120 characters).
MAX_PATH_CHARS = 2048

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")


class TooLarge(Exception):
    """A body over a limit (HTTP 413); the message names the limit."""

    status = 413


class BodyReader:
    """Collects a body chunk by chunk within ``max_bytes`` and, when ``max_lines`` is given, that many lines
    of at most ``max_line_bytes`` each (a line inside one chunk larger than that is left to the parser).

    ``what`` names the body in messages.  :meth:`feed` raises :class:`TooLarge` as soon as
    a limit is passed; :attr:`data` is the body so far (one buffer, never copied per chunk).
    """

    def __init__(self, max_bytes: int, max_lines: int | None = None, what: str = "the body", lines_rule: str = "",
                 max_line_bytes: int = MAX_ROW_BYTES):
        self.max_bytes, self.max_lines, self.what, self.lines_rule = int(max_bytes), max_lines, what, lines_rule
        self.max_line_bytes = int(max_line_bytes)
        self.data = bytearray()
        self.size = 0
        self.lines = 0  # line breaks seen: "\n", "\r\n" and a lone "\r" each end one line
        self._cr_last = False
        self._open_line = 0  # bytes of the line not ended yet

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.max_bytes:
            self.data = bytearray()
            raise TooLarge(f"{self.what} must be at most {human_bytes(self.max_bytes)} "
                           f"({self.max_bytes:,} bytes); got more")
        if self.max_lines is not None:
            breaks = chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
            if self._cr_last and chunk[:1] == b"\n":
                breaks -= 1  # "\r" ended the last chunk, "\n" starts this one: one line break
            self._cr_last = chunk[-1:] == b"\r"
            self._check_line(chunk)
            self.lines += breaks
            if self.lines > self.max_lines:
                self.data = bytearray()
                raise TooLarge(f"{self.what} must hold at most {self.max_lines:,} lines ({self.lines_rule}); "
                               f"got more")
        self.data += chunk

    def _check_line(self, chunk: bytes) -> None:
        """Refuse the line that runs on from earlier chunks once it passes ``max_line_bytes``."""
        first = min((i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0), default=len(chunk))
        if self._open_line + first > self.max_line_bytes:
            self.data = bytearray()
            raise TooLarge(f"row {self.lines + 1:,} of {self.what} must be at most {human_bytes(self.max_line_bytes)} "
                           f"({self.max_line_bytes:,} bytes); got more")
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        self._open_line = self._open_line + len(chunk) if last < 0 else len(chunk) - last - 1

    def finish(self) -> bytearray:
        """The whole body (after the last chunk); a last line without a line break counts too."""
        if self.max_lines is not None and self.data and self.data[-1:] not in (b"\n", b"\r"):
            if self.lines + 1 > self.max_lines:
                raise TooLarge(f"{self.what} must hold at most {self.max_lines:,} lines ({self.lines_rule}); "
                               f"got {self.lines + 1:,}")
        return self.data


# ============================================================================ JSON
def json_depth(data, limit: int) -> int:
    """How deep ``data`` (JSON bytes) nests objects and arrays, as far as ``limit`` needs: the result is
    above ``limit`` exactly when the nesting is deeper.

    Brackets inside strings do not count.  Cheap for the usual body (at most ``limit``
    opening brackets in all: their count bounds the depth and is returned); otherwise the
    strings are cut out and the brackets counted (the depth itself, or the depth of the
    first megabyte that passes ``limit``).
    """
    if data.count(b"{") + data.count(b"[") <= limit:
        return data.count(b"{") + data.count(b"[")
    skeleton = _STRING.sub(b'""', data).translate(None, _NOT_BRACKETS)
    steps = np.frombuffer(skeleton, dtype=np.uint8)
    deepest, level = 0, 0
    for start in range(0, steps.size, 1 << 20):  # in slices: a deep body is refused at its first slice
        part = steps[start:start + (1 << 20)]
        moves = np.where((part == ord("{")) | (part == ord("[")), 1, -1).astype(np.int64)
        running = level + np.cumsum(moves)
        deepest = max(deepest, int(running.max(initial=level)))
        level = int(running[-1]) if running.size else level
        if deepest > limit:
            return deepest
    return deepest


def _members(data, limit: int) -> int:
    """Object members in JSON bytes (colons outside strings), counted exactly only when all colons are more
    than ``limit`` (colons inside ids are rare)."""
    count = data.count(b":")
    if count <= limit:
        return count
    return _STRING.sub(b'""', data).count(b":")


def parse_json(data, *, what: str = "body", max_depth: int = MAX_JSON_DEPTH, max_members: int | None = None,
               members_rule: str = "") -> dict:
    """A JSON object from ``data`` (bytes), within ``max_depth`` and ``max_members`` (checked before parsing).

    A repeated key is refused (a later value would silently replace an earlier one);
    large objects keep their pairs as a :class:`~.files.PairList` so a repeated id is seen.
    """
    if json_depth(data, max_depth) > max_depth:
        raise InputError(what, f"JSON nested at most {max_depth} deep", raw("deeper nesting"))
    if max_members is not None and _members(data, max_members) > max_members:
        raise TooLarge(f"{what} must hold at most {max_members:,} JSON members ({members_rule}); got more")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(what, "UTF-8 JSON", raw("bytes that are not UTF-8"), location=f"byte {exc.start + 1}") \
            from None
    try:
        doc = json.loads(text, object_pairs_hook=files.json_pairs_hook)
    except json.JSONDecodeError as exc:
        raise InputError(what, "valid JSON", exc.msg.lower(), location=f"line {exc.lineno}, column {exc.colno}") \
            from None
    except RecursionError:  # not reached within MAX_JSON_DEPTH; kept so that no depth is ever a 500
        raise InputError(what, f"JSON nested at most {max_depth} deep", raw("deeper nesting")) from None
    if isinstance(doc, files.PairList):
        keys = [k for k, _ in doc]
        repeated = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        raise InputError(what, "a JSON object with predictions and val_accuracy",
                         f"repeated key {repeated!r}" if repeated else "other keys")
    if not isinstance(doc, dict):
        raise InputError(what, "a JSON object", type(doc).__name__)
    return doc


# ============================================================================ submissions
def _predictions_of(body: dict):
    preds = body.get("predictions")
    if isinstance(preds, files.PairList):
        return preds
    if isinstance(preds, dict):
        return files.PairList(preds.items())
    raise InputError("predictions", 'an object {"id": "prediction", ...}', type(preds).__name__
                     if preds is not None else "nothing")


def read_submission(data, content_type: str, *, query_val_accuracy=None, labels: int | None = None):
    """``(predictions, val_accuracy)`` of a submission body.

    ``content_type`` ``text/csv``: the ``id,prediction`` file (the validation accuracy from
    the query); otherwise JSON ``{"predictions": {...}, "val_accuracy": x}``.  ``labels``:
    the test set's size, which bounds the predictions a JSON body may hold.
    """
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "text/csv":
        return files.read_predictions(data), query_val_accuracy
    if not data or data.isspace():
        raise InputError("body", 'JSON {"predictions": {...}, "val_accuracy": x} or a text/csv file', raw("nothing"))
    rule = f"one prediction per label: {labels:,}" if labels is not None else ""
    body = parse_json(data, max_members=None if labels is None else labels + 2, members_rule=rule)
    unknown = sorted(set(body) - {"predictions", "val_accuracy"})
    if unknown:
        raise InputError("body", "the keys predictions and val_accuracy", unknown[0])
    return _predictions_of(body), body.get("val_accuracy")
