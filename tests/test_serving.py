"""The server settings of ``meter-dashboard serve`` (meter_dashboard.core.serving), without a server (issues 13, 15)."""
from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from meter_dashboard.core import serving
from meter_dashboard.core.files import (
    MAX_UPLOAD_BYTES,
    UPLOAD_CHUNK_BYTES,
    WEBSOCKET_MAX_MESSAGE_BYTES,
    fits_one_message,
)
from meter_dashboard.core.validation import InputError


@pytest.mark.parametrize("text", ["999.999.1.1", "1.2.3", "256.0.0.1", "a b", "", "-host", "x" * 300, "1.2.3.4.5",
                                  "exa$mple.org", "nosuch-host.invalid"])
def test_bad_addresses_are_refused_naming_the_flag(text):
    with pytest.raises(InputError) as info:
        serving.check_address(text)
    assert str(info.value).startswith("--address must be an IP address of this machine")
    assert repr(text[:57]) in str(info.value) or "..." in str(info.value)


@pytest.mark.parametrize("text, expected", [("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "0.0.0.0"), ("::1", "::1"),
                                            ("[::1]", "::1"), ("localhost", "localhost"), (None, "127.0.0.1")])
def test_good_addresses(text, expected):
    assert serving.check_address(text) == expected


def test_default_is_this_machine_only():
    assert serving.DEFAULT_ADDRESS == "127.0.0.1" and serving.is_local(serving.DEFAULT_ADDRESS)
    assert serving.is_local("localhost") and serving.is_local("::1") and serving.is_local("127.0.0.2")
    assert not serving.is_local("0.0.0.0") and not serving.is_local("::") and not serving.is_local("192.168.1.5")


def test_exposure_warning_says_what_is_exposed():
    line = serving.exposure_warning("0.0.0.0", 5006)
    assert "every network interface" in line and "no login" in line and "\n" not in line
    assert "upload files and start computations" in line


def test_a_taken_port_is_named():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(InputError, match=rf"^--port must be a port no other program is listening on; got {port}$"):
            serving.check_bindable("127.0.0.1", port)


def test_an_address_of_another_machine_is_named():
    with pytest.raises(InputError, match="^--address must be"):
        serving.check_bindable("192.0.2.1", 0)  # TEST-NET-1: never assigned to this machine


def test_websocket_limit_is_the_upload_modules_and_fits_the_largest_upload():
    limit = serving.websocket_limit()
    assert limit == WEBSOCKET_MAX_MESSAGE_BYTES
    assert fits_one_message(MAX_UPLOAD_BYTES)  # a whole-file input at the limit still fits one message
    assert 4 * ((MAX_UPLOAD_BYTES + 2) // 3) < limit
    assert UPLOAD_CHUNK_BYTES * 4 < limit  # chunked uploads, base64 or not, are far below


def test_server_options():
    route = (r"/api", object)
    options = serving.server_options(5100, "127.0.0.1", extra_patterns=[route])
    assert options["compress_response"] is True
    assert options["websocket_max_message_size"] == serving.websocket_limit()
    assert options["unused_session_lifetime_milliseconds"] == serving.SESSION_LIFETIME_MS
    assert options["check_unused_sessions_milliseconds"] <= serving.SESSION_CHECK_MS
    assert options["extra_patterns"] == [route]
    assert options["websocket_origin"] == ["localhost:5100", "127.0.0.1:5100"]
    assert options["http_server_kwargs"] == {"max_header_size": serving.MAX_HEADER_BYTES} == {"max_header_size": 262144}
    options["extra_patterns"].append(("/other", object))  # a new list each time: callers extend it
    assert serving.server_options(5100)["extra_patterns"] == []


def test_short_session_lifetimes_are_checked_often_enough():
    options = serving.server_options(5100, session_lifetime_ms=1000)
    assert options["check_unused_sessions_milliseconds"] == 500


def test_origins_for_every_interface_and_a_free_port():
    assert serving.default_origins("0.0.0.0", 5006)[:2] == ["localhost:5006", "127.0.0.1:5006"]
    assert f"{socket.gethostname()}:5006" in serving.default_origins("0.0.0.0", 5006)
    assert serving.default_origins("10.1.2.3", 0) == ["localhost:*", "127.0.0.1:*", "10.1.2.3:*"]


def _unretrieved(loop, exc: BaseException) -> None:
    """A task that ends in ``exc`` with nobody awaiting it, collected as asyncio collects it."""
    import gc

    async def write():
        raise exc

    task = loop.create_task(write())
    loop.run_until_complete(asyncio.sleep(0))
    assert task.done()
    del task
    gc.collect()


def test_a_write_to_a_browser_that_left_is_one_quiet_line(caplog):
    from tornado.websocket import WebSocketClosedError

    loop = asyncio.new_event_loop()
    seen = []
    loop.set_exception_handler(lambda loop, context: seen.append(context))
    try:
        serving.quiet_closed_writes(loop)
        serving.quiet_closed_writes(loop)  # twice is once
        with caplog.at_level(logging.DEBUG, logger="meter_dashboard.core.serving"):
            _unretrieved(loop, WebSocketClosedError())
        assert seen == [] and "a write to a browser that had left was dropped" in caplog.text
        assert "Traceback" not in caplog.text
        _unretrieved(loop, ValueError("ours"))  # every other error still reaches the handler that was there
        assert [type(c.get("exception")) for c in seen] == [ValueError]
    finally:
        loop.close()


def test_without_a_previous_handler_other_errors_get_asyncios_report(caplog):
    loop = asyncio.new_event_loop()
    try:
        serving.quiet_closed_writes(loop)
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            _unretrieved(loop, ValueError("ours"))
        assert "Task exception was never retrieved" in caplog.text and "ValueError: ours" in caplog.text
    finally:
        loop.close()
