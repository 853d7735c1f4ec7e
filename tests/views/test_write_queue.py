"""Panel's queue of waiting writes sends every message (meter_dashboard/app/write_queue.py).

The race, replayed step by step with Panel's own functions and a socket type registered through
Panel's ``extra_socket_handlers`` (no browser, no timing): a drain task waits for its writes; a
new message is queued meanwhile, with its own drain task; the first task finishes and lifts the
block; the second sees no block and returns.  With Panel's function alone the new message stays
queued (the planner page that showed "computing…" for good); with the fix it is sent, after the
first, and a message queued later still goes out behind it.
"""
from __future__ import annotations

import asyncio

import pytest
from bokeh.document import Document
from panel.io import document as pio

from meter_dashboard.app import write_queue


class FakeSocket:
    """A websocket Panel writes to through ``extra_socket_handlers``: it records what it is sent."""

    def __init__(self):
        self.sent: list[str] = []
        self.hold: asyncio.Future | None = None  # while set, writes wait for it (the first drain's await)


class FakeConnection:
    def __init__(self, socket):
        self._socket = socket


def _write(conn, events=None, msg=None):
    conn._socket.sent.append(msg)
    return [conn._socket.hold] if conn._socket.hold is not None else []


@pytest.fixture
def socket():
    pio.extra_socket_handlers[FakeSocket] = _write
    try:
        yield FakeSocket()
    finally:
        del pio.extra_socket_handlers[FakeSocket]


def _queue(doc, conn, msg) -> None:
    """What Panel's ``schedule_write_events`` does with a serialized message."""
    pio._WRITE_BLOCK[doc] = True
    pio._WRITE_MSGS.setdefault(doc, {}).setdefault(conn, []).append(msg)
    pio._dispatch_write_task(doc, pio._dispatch_msgs, doc)


async def _race(socket) -> tuple[Document, FakeConnection]:
    doc, conn = Document(), FakeConnection(socket)
    socket.hold = asyncio.get_running_loop().create_future()
    _queue(doc, conn, "first")
    await asyncio.sleep(0.01)  # the first drain wrote "first" and waits for the write to finish
    assert socket.sent == ["first"]
    socket.hold.set_result(None)  # the write finishes ...
    socket.hold = None
    _queue(doc, conn, "second")  # ... just as the page queues its next message
    for _ in range(5):
        await asyncio.sleep(0.01)
    return doc, conn


def test_panel_alone_strands_a_message_queued_while_a_drain_waits(socket, monkeypatch):
    """The bug the fix exists for, in the installed Panel (if it is fixed upstream, this fails: drop the fix)."""
    if write_queue.installed():
        monkeypatch.setattr(pio, "_dispatch_msgs", pio._dispatch_msgs.__wrapped__)

    async def scenario():
        doc, conn = await _race(socket)
        stranded = pio._WRITE_MSGS.get(doc, {}).get(conn)
        pio._WRITE_MSGS.pop(doc, None)
        return stranded, doc in pio._WRITE_BLOCK

    stranded, blocked = asyncio.run(scenario())
    assert socket.sent == ["first"]
    assert stranded == ["second"] and not blocked  # queued, with nothing left to send it


def test_the_fix_sends_it_in_order(socket):
    assert write_queue.install() and write_queue.install()  # idempotent
    assert write_queue.installed()

    async def scenario():
        doc, conn = await _race(socket)
        _queue(doc, conn, "third")
        for _ in range(5):
            await asyncio.sleep(0.01)
        return doc

    doc = asyncio.run(scenario())
    assert socket.sent == ["first", "second", "third"]
    assert doc not in pio._WRITE_MSGS and doc not in pio._WRITE_BLOCK  # nothing left queued or blocked


def test_a_panel_without_these_internals_is_left_alone(monkeypatch, caplog):
    """If Panel's internals change, the fix says so in the log and stays off (it never raises)."""
    monkeypatch.delattr(pio, "_dispatch_msgs")
    assert not write_queue.installed()
    with caplog.at_level("WARNING", logger="meter_dashboard.app.write_queue"):
        assert write_queue.install() is False
    assert "Panel's write queue has changed (_dispatch_msgs)" in caplog.text
    assert not hasattr(pio, "_dispatch_msgs")
