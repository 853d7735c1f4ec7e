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
    assert options["transforms"] == [serving.shared_gzip()] and "compress_response" not in options
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


def _gzip_server(tmp_path, body: bytes):
    """A Tornado app with the dashboard's transform: a static file at /static/app.js, a page at /page."""
    import tornado.web

    (tmp_path / "app.js").write_bytes(body)

    class Page(tornado.web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "text/html")
            self.write(body)

    return tornado.web.Application([(r"/static/(.*)", tornado.web.StaticFileHandler, {"path": str(tmp_path)}),
                                    (r"/page", Page)], transforms=[serving.shared_gzip()])


def test_a_static_file_is_compressed_once_and_everyone_gets_the_same_bytes(tmp_path, monkeypatch):
    import gzip

    from tornado.httpclient import AsyncHTTPClient
    from tornado.httpserver import HTTPServer
    from tornado.web import GZipContentEncoding

    body = b"".join(b"var x%d = %d;\n" % (k, k * k) for k in range(40_000))  # 600 KB: Tornado sends it in chunks
    kept = serving.shared_gzip().kept
    kept.clear()
    compressions = []
    original = GZipContentEncoding.transform_chunk
    monkeypatch.setattr(GZipContentEncoding, "transform_chunk",
                        lambda self, chunk, finishing: compressions.append(len(chunk)) or original(self, chunk, finishing))

    async def fetch_all():
        sockets = __import__("tornado.netutil", fromlist=["x"]).bind_sockets(0, "127.0.0.1")
        server = HTTPServer(_gzip_server(tmp_path, body))
        server.add_sockets(sockets)
        base = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
        client = AsyncHTTPClient(force_instance=True)
        out = {}
        try:
            for name, path, headers in [("first", "/static/app.js?v=1", {}), ("second", "/static/app.js?v=1", {}),
                                        ("range", "/static/app.js?v=1", {"Range": "bytes=0-99"}),
                                        ("page", "/page", {}), ("page again", "/page", {})]:
                out[name] = await client.fetch(base + path, headers={"Accept-Encoding": "gzip", **headers},
                                               decompress_response=False, raise_error=False)
                out[name + " calls"] = len(compressions)
        finally:
            client.close()
            server.stop()
        return out

    out = asyncio.run(fetch_all())
    first, second = out["first"], out["second"]
    assert first.code == second.code == 200
    assert first.headers["Content-Encoding"] == second.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in second.headers["Vary"]
    assert gzip.decompress(first.body) == gzip.decompress(second.body) == body
    assert int(second.headers["Content-Length"]) == len(second.body) == len(first.body)
    assert out["first calls"] > 1 and out["second calls"] == out["first calls"]  # the second: no compression at all
    assert list(kept) == ["/static/app.js?v=1"]
    assert out["range"].code == 206 and gzip.decompress(out["range"].body) == body[:100]  # a part: not from the kept
    assert gzip.decompress(out["page"].body) == body  # other answers are compressed as Tornado does ...
    assert out["page again calls"] > out["page calls"]  # ... every time
    assert list(kept) == ["/static/app.js?v=1"]


def test_the_static_paths_are_bokehs_panels_and_the_components(tmp_path):
    for path in ("/static/js/bokeh.min.js", "/static/extensions/panel/panel.min.js", "/planner/static/js/x.js",
                 "/components/meter_dashboard.ui.style/HTML/_stylesheets/dashboard.css"):
        assert serving._STATIC_PATH.match(path), path
    for path in ("/planner", "/", "/docs", "/api/testsets/x/static", "/staticfoo/x.js", "/api/static/x",
                 "/api/testsets/static/status", "/api/testsets/components/history", "/a/b/static/x.js"):
        assert not serving._STATIC_PATH.match(path), path
