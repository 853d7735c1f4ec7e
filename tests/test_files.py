"""The shared upload limits (meter_dashboard.core.files): sizes, chunk accounting, the browser-side limit."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.core.files import (
    MAX_BUFFERED_BYTES,
    MAX_UPLOAD_BYTES,
    UPLOAD_CHUNK_BYTES,
    WEBSOCKET_MAX_MESSAGE_BYTES,
    ChunkedUpload,
    client_size_limit,
    fits_one_message,
)
from meter_dashboard.core.validation import InputError


def chunks_of(size: int, chunk: int):
    """What Panel's FileDropper sends: ceil((size + 1) / chunk) chunks, the last one short."""
    total = -(-(size + 1) // chunk)
    for i in range(total):
        yield i + 1, total, b"x" * max(0, min(chunk, size - i * chunk))


def test_a_file_at_the_limit_arrives_whole():
    up = ChunkedUpload(max_bytes=10_000, chunk_bytes=1_000, parameter="trace")
    results = [up.add("t.csv", i, n, data) for i, n, data in chunks_of(10_000, 1_000)]
    assert results[:-1] == [None] * (len(results) - 1) and results[-1] == b"x" * 10_000
    assert up.buffered == 0 and up.receiving is None


def test_refused_at_the_first_chunk_that_passes_the_limit():
    up = ChunkedUpload(max_bytes=10_000, chunk_bytes=1_000, parameter="trace")
    # the browser declares 31 chunks of 1,000 bytes: more than 10,000 bytes - refused at chunk 1
    with pytest.raises(InputError, match="trace must be a file of at most 9.8 KiB; got 't.csv', more than 29.3 KiB"):
        up.add("t.csv", 1, 31, b"x" * 1000)
    assert up.buffered == 0
    assert up.add("t.csv", 2, 31, b"x" * 1000) is None and up.buffered == 0  # the rest is ignored, not kept
    # a browser that understates the total: refused at the chunk that passes the limit
    fresh = ChunkedUpload(max_bytes=2_500, chunk_bytes=1_000)
    fresh.add("b", 1, 3, b"x" * 1000)
    fresh.add("b", 2, 3, b"x" * 1000)
    with pytest.raises(InputError, match="more than 2.9 KiB"):
        fresh.add("b", 3, 3, b"x" * 1000)


def test_chunks_out_of_order_and_abandoned_uploads():
    up = ChunkedUpload(max_bytes=10_000, chunk_bytes=1_000)
    up.add("a", 1, 5, b"x" * 1000)
    with pytest.raises(InputError, match="sent in order"):
        up.add("a", 3, 5, b"x" * 1000)
    up.add("a", 1, 5, b"x" * 1000)
    up.add("a", 2, 5, b"x" * 1000)
    assert up.buffered == 2000
    up.add("b", 1, 5, b"x" * 1000)  # a new file drops the unfinished one
    assert up.buffered == 1000 and up.receiving == "b"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 6), st.integers(1, 6), st.integers(0, 1500)),
                max_size=60))
def test_a_session_never_buffers_more_than_a_file_at_the_limit(events):
    """Whatever a browser sends (names, chunk numbers, totals, sizes), the buffer stays bounded."""
    up = ChunkedUpload(max_bytes=4_000, chunk_bytes=1_000)
    for name, chunk, total, size in events:
        try:
            result = up.add(name, chunk, total, b"x" * size)
        except InputError:
            result = None
        assert up.buffered <= 4_000
        assert result is None or len(result) <= 4_000


def test_limits_for_the_browser_and_the_websocket():
    assert client_size_limit(10 * 1024 * 1024) == "10486KB"  # FilePond: 1 KB = 1,000 bytes, rounded up
    assert int(client_size_limit(MAX_UPLOAD_BYTES)[:-2]) * 1000 >= MAX_UPLOAD_BYTES
    assert MAX_BUFFERED_BYTES == MAX_UPLOAD_BYTES + UPLOAD_CHUNK_BYTES
    assert UPLOAD_CHUNK_BYTES * 4 // 3 < WEBSOCKET_MAX_MESSAGE_BYTES  # one chunk per message, far below Bokeh's cap
    assert fits_one_message(MAX_UPLOAD_BYTES) and not fits_one_message(15 * 1024 * 1024)
