"""Issue 31: CSV submissions whose shape costs more than their size, against a real ``serve --store``.

A header of thousands of empty fields above the test set's rows was accepted as a step after
5 s with the server 350 MiB larger (the parser padded every row to the header's width); a
1 MiB row gave a 500.  Each is now a one-line 400 naming the row and the limit, no step is
spent, and the server's peak resident memory (``/proc/PID/status`` VmHWM after
``clear_refs``, on a freshly started server) grows by a small multiple of the body.  Times
are printed, never asserted.
"""
from __future__ import annotations

import pytest

from meter_dashboard.core.validation import InputError

from meter_dashboard.testsets.submission import BodyReader, TooLarge, read_submission
from tests.testsets.attacks import MIB, filler
from tests.testsets.test_limits import auth, fresh, one_line_error, steps_used, world  # noqa: F401  (fixtures)

SUBMIT = "/api/testsets/small/submissions?val_accuracy=0.9"


def _rows(world) -> bytes:
    """The test set's 1,000 rows of a valid submission, without its header."""
    valid = world["data"].csv(world["data"].predictions(40))
    return valid[valid.index(b"\n") + 1:]


BODIES = {
    # the 24 KiB body: 12,000 empty fields in the header, then the 1,000 valid rows
    "wide header": (lambda world: b"id,prediction" + b"," * 12_000 + b"\n" + _rows(world),
                    "row 2: row must be as wide as row 1 (12,002 fields): padding the narrower rows to it would "
                    "make 12,014,002 cells of a 24.8 KiB file; got 2 fields"),
    # the 76 KiB header
    "76 KiB header": (lambda world: b"id,prediction" + b"," * 76_000 + b"\n" + _rows(world),
                      "row 1: row must be at most 16,384 fields; got 76,002 fields"),
    # the valid rows but one, then a 1 MiB row: refused as it arrives (413), once it passes 256 KiB
    "1 MiB row": (lambda world: b"id,prediction\n" + b"\n".join(_rows(world).split(b"\n")[:999]) + b"\n"
                  + b"x," * (MIB // 2) + b"\n",
                  "row 1,001 of the submission must be at most 256 KiB (262,144 bytes); got more"),
}


@pytest.mark.parametrize("name", BODIES)
def test_a_csv_submission_shaped_to_cost_more_than_its_size_is_a_400_and_no_step(world, fresh, name):
    server, raw, memory = fresh
    make, expected = BODIES[name]
    body = make(world)
    before = steps_used(world)
    memory.reset()
    answer = raw.request("POST", SUBMIT, auth(world, csv=True), body)
    growth = memory.growth()
    assert answer.status == (413 if name == "1 MiB row" else 400), answer.body[:300]
    assert one_line_error(answer) == expected
    assert steps_used(world) == before
    assert growth <= 8 * len(body) + 8 * MIB, f"{growth / MIB:.1f} MiB for a {len(body) / 1024:.0f} KiB body"
    print(f"{name}: {len(body) / 1024:.0f} KiB body refused in {answer.seconds:.3f} s, "
          f"server peak memory growth {growth / MIB:.1f} MiB")
    ok = raw.request("POST", SUBMIT, auth(world, csv=True), world["data"].csv(world["data"].predictions(45)))
    assert ok.status == 200 and steps_used(world) == before + 1  # the server is well and still counts steps


def test_one_line_of_100_mib_is_refused_when_it_passes_256_kib(world, fresh):
    """A body of one endless line (chunked, no Content-Length): the 413 comes after about 256 KiB."""
    server, raw, memory = fresh
    before = steps_used(world)
    memory.reset()
    answer = raw.request("POST", SUBMIT, auth(world, csv=True), filler(100 * MIB), chunked=True)
    growth = memory.growth()
    assert answer.status == 413 and one_line_error(answer) == (
        "row 1 of the submission must be at most 256 KiB (262,144 bytes); got more")
    assert answer.sent < 100 * MIB and growth <= 16 * MIB and steps_used(world) == before
    print(f"one 100 MiB line: 413 after {answer.sent / MIB:.1f} MiB sent in {answer.seconds:.2f} s, "
          f"server peak memory growth {growth / MIB:.1f} MiB")


# ---------------------------------------------------------------------------- the body reader alone
def test_the_body_reader_refuses_a_line_as_soon_as_it_passes_the_limit():
    reader = BodyReader(10**8, max_lines=10, what="the submission", max_line_bytes=1000)
    reader.feed(b"id,prediction\na,b\n" + b"x" * 600)
    with pytest.raises(TooLarge, match=r"^row 3 of the submission must be at most 1000 bytes \(1,000 bytes\)"):
        reader.feed(b"y" * 401)
    ok = BodyReader(10**8, max_lines=10, max_line_bytes=1000)
    for part in (b"a" * 1000, b"\r", b"\n" + b"b" * 999, b"b\n", b"c" * 1000):  # lines of exactly 1,000 bytes
        ok.feed(part)
    assert ok.lines == 2
    json_body = BodyReader(10**8)  # JSON: one line of any length
    json_body.feed(b"{" + b" " * 300_000 + b"}")


def test_a_long_line_inside_one_chunk_is_refused_by_the_parser():
    reader = BodyReader(10**8, max_lines=10, what="the submission")
    reader.feed(b"id,prediction\n" + b"x" * 300_000 + b"\n")  # one chunk: left to the shape check
    with pytest.raises(InputError, match=r"^row 2: row must be at most 262,144 bytes long"):
        read_submission(bytes(reader.finish()), "text/csv")
