"""Settings of the dashboard's server, without Panel: what ``meter-dashboard serve`` configures.

The command line (which never imports Panel) checks the options here; :func:`meter_dashboard.app.pages.serve`
turns them into ``pn.serve`` arguments with :func:`server_options`.  One server is shared by a
team, so the defaults are chosen for that:

- it listens on this machine only (``127.0.0.1``); another address is an explicit choice that
  the command line warns about, because the dashboard has no login;
- HTTP responses are gzipped (Bokeh's and Panel's JavaScript is most of a first load), and each static
  file (the same bytes for everyone) is compressed once per process, not once per visitor
  (:func:`shared_gzip`);
- session events run on a small thread pool (:data:`DEFAULT_THREADS`), so one person's long
  callback does not hold the event loop that every other session needs;
- a session whose browser left is destroyed after :data:`SESSION_LIFETIME_MS`, and its memory
  goes with it;
- a browser may not send a websocket message larger than the upload limits of
  :mod:`meter_dashboard.core.files` allow (:func:`websocket_limit`);
- a request's line and headers may hold up to :data:`MAX_HEADER_BYTES`, so that a long URL
  reaches the server's 414 answer instead of a closed connection (Tornado's default is
  64 KiB; beyond the cap the connection is still closed unanswered).
- a write to a browser that has left is one quiet log line, not a traceback
  (:func:`quiet_closed_writes`).
"""
from __future__ import annotations

import errno
import ipaddress
import logging
import re
import socket
from typing import TYPE_CHECKING

from .files import WEBSOCKET_MAX_MESSAGE_BYTES
from .validation import InputError

if TYPE_CHECKING:  # the CLI imports this module and must not load an event loop (tests/cli/test_ci.py)
    import asyncio

__all__ = [
    "DEFAULT_ADDRESS", "DEFAULT_THREADS", "SESSION_LIFETIME_MS", "SESSION_CHECK_MS", "websocket_limit",
    "check_address", "check_bindable", "bind_error", "is_local", "exposure_warning", "default_origins",
    "server_options", "MAX_HEADER_BYTES", "quiet_closed_writes", "shared_gzip", "STATIC_GZIP_BYTES",
]

log = logging.getLogger(__name__)

#: Listen on this machine only unless told otherwise.
DEFAULT_ADDRESS = "127.0.0.1"

#: Worker threads for long work (``--num-threads``: exact counts, file parsing, long replays; see
#: :mod:`meter_dashboard.core.runtime`).  Session events run on the event loop and stay short; what
#: may take longer goes to these threads, so one person's long action holds a worker, not the loop.
#: Four: a few long actions at once still leave workers for everyone else; more only adds contention
#: for the interpreter lock on a small machine.  0 does the long work on the event loop (one person).
DEFAULT_THREADS = 4

#: The largest request line plus headers Tornado reads (a 100,000-character path gets its 414).
MAX_HEADER_BYTES = 256 * 1024

#: At most this many compressed bytes of static files are kept per process (:func:`shared_gzip`).
STATIC_GZIP_BYTES = 32 * 1024 * 1024
#: The paths of files that are the same for every visitor: Bokeh's and Panel's scripts and stylesheets,
#: the components' resources (``static/...``, ``components/...``, with or without a page prefix).
#: At most one segment before them (a page's own ``/planner/static/``), never the API's (``/api/testsets/static/...``
#: is a test set named "static", whose answers are nobody else's).
_STATIC_PATH = re.compile(r"^/(?:(?!api/)[^/]+/)?(?:static|components)/")

#: A session whose browser left (no websocket) for this long is destroyed.
SESSION_LIFETIME_MS = 15_000
#: How often the server looks for such sessions (at most; sooner for a shorter lifetime).
SESSION_CHECK_MS = 5_000

_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?")
_ADDRESS_RULE = "an IP address of this machine (127.0.0.1, 0.0.0.0 for every interface) or its host name"


def websocket_limit() -> int:
    """Largest websocket message a browser may send: :data:`~meter_dashboard.core.files.WEBSOCKET_MAX_MESSAGE_BYTES`.

    The upload limits live in :mod:`meter_dashboard.core.files`: chunked uploads send
    ``UPLOAD_CHUNK_BYTES`` per message, and a whole-file input sends at most
    ``MAX_UPLOAD_BYTES`` base64-encoded in one message, which fits (``fits_one_message``);
    the server is told this cap explicitly so that it never buffers more per message.
    """
    return WEBSOCKET_MAX_MESSAGE_BYTES


def check_address(value: str | None, parameter: str = "--address") -> str:
    """An IP address or a host name that resolves; anything else is an :class:`InputError`.

    Checked before anything is bound, so ``--address 999.999.1.1`` is refused by name
    instead of failing inside the server with a resolver error.
    """
    text = DEFAULT_ADDRESS if value is None else str(value).strip()
    if len(text) > 253 or not text:
        raise InputError(parameter, _ADDRESS_RULE, value)
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", text) or not _HOST_NAME.fullmatch(text):
        raise InputError(parameter, _ADDRESS_RULE, value)
    try:
        socket.getaddrinfo(text, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise InputError(parameter, _ADDRESS_RULE + " (this name does not resolve)", value) from None
    return text


def check_bindable(address: str, port: int) -> None:
    """Bind and release ``address:port`` so a taken port or a foreign address is named before serving."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        raise InputError("--address", _ADDRESS_RULE, address) from None
    for family, kind, proto, _, sockaddr in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                raise bind_error(exc, address, port) from None


def bind_error(exc: OSError, address: str, port: int) -> Exception:
    """The :class:`InputError` for a failed bind (``exc`` itself when it is not the user's input)."""
    if exc.errno == errno.EADDRINUSE:
        return InputError("--port", "a port no other program is listening on", port)
    if exc.errno == errno.EACCES:
        return InputError("--port", "a port this user may open (1024 or above without privileges)", port)
    if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        return InputError("--address", _ADDRESS_RULE, address)
    return exc


def is_local(address: str) -> bool:
    """True when ``address`` is reachable from this machine only (a loopback address or ``localhost``)."""
    if address.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        try:
            infos = socket.getaddrinfo(address, None, type=socket.SOCK_STREAM)
        except socket.gaierror:
            return False
        return all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def exposure_warning(address: str, port: int) -> str:
    """The line ``serve`` prints when it listens beyond this machine."""
    where = "every network interface" if address in ("0.0.0.0", "::") else f"{address}"
    return (f"warning: listening on {where} (port {port}): anyone who can reach this machine can open "
            "every page, upload files and start computations; there is no login (see README, "
            "'Serving a team')")


def default_origins(address: str | None, port: int) -> list[str]:
    """Pages may open their websocket from these host names: this machine's names, and ``address``.

    Every interface (``0.0.0.0``) adds the machine's host name; other names people use to reach
    it (a DNS alias, a proxy) need ``--allow-websocket-origin``.
    """
    suffix = port if port else "*"
    hosts = ["localhost", "127.0.0.1"]
    if address in ("0.0.0.0", "::"):
        hosts += [socket.gethostname(), socket.getfqdn()]
    elif address:
        hosts.append(address)
    return [f"{host}:{suffix}" for host in dict.fromkeys(hosts)]


def server_options(port: int = 5006, address: str | None = DEFAULT_ADDRESS, *, websocket_origin=None,
                   num_procs: int = 1, session_lifetime_ms: int = SESSION_LIFETIME_MS,
                   extra_patterns=()) -> dict:
    """Keyword arguments for ``pn.serve`` (server settings only; the pages are added by the caller).

    - ``transforms``: Tornado gzips every HTTP response for a browser that accepts it, a static file once
      per process (:func:`shared_gzip`; Tornado's ``compress_response`` did it once per response);
    - sessions unused for ``session_lifetime_ms`` are destroyed (checked every
      :data:`SESSION_CHECK_MS`, or sooner for a shorter lifetime);
    - ``websocket_max_message_size``: :func:`websocket_limit`;
    - ``extra_patterns``: the caller's Tornado routes, as a new list (callers extend it);
    - ``http_server_kwargs``: Tornado's ``max_header_size`` (:data:`MAX_HEADER_BYTES`).
    """
    origins = websocket_origin or default_origins(address, port)
    return {
        "port": port,
        "address": address,
        "websocket_origin": list(dict.fromkeys(origins)),
        "num_procs": num_procs,
        "transforms": [shared_gzip()],
        "check_unused_sessions_milliseconds": max(250, min(SESSION_CHECK_MS, session_lifetime_ms // 2)),
        "unused_session_lifetime_milliseconds": session_lifetime_ms,
        "websocket_max_message_size": websocket_limit(),
        "extra_patterns": list(extra_patterns),
        "http_server_kwargs": {"max_header_size": MAX_HEADER_BYTES},
    }


def quiet_closed_writes(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` log a write to a closed websocket as one line; every other error is reported as before.

    Panel sends a change to a browser as several ``write_message`` calls, each a task of its own,
    and awaits them one after the other.  When the browser leaves while they are in flight, the
    session is destroyed and Panel cancels the task that awaits them: the writes still queued
    behind the first end in Tornado's ``WebSocketClosedError`` with nobody to retrieve it, and
    asyncio printed "Task exception was never retrieved" with a traceback, once per write.  Nothing
    was lost (the browser was gone), so this handler (``loop.set_exception_handler``, asyncio's
    documented hook) logs exactly that case (an unretrieved ``WebSocketClosedError``) as one debug
    line, and passes every other context to the handler that was there before (asyncio's default).
    Installing twice on one loop is a no-op.
    """
    from tornado.websocket import WebSocketClosedError

    previous = loop.get_exception_handler()
    if getattr(previous, "_md_quiet_closed_writes", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        if isinstance(context.get("exception"), WebSocketClosedError) and "never retrieved" in context.get("message", ""):
            log.debug("a write to a browser that had left was dropped (%s)", context.get("future"))
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler._md_quiet_closed_writes = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


_SHARED_GZIP: dict = {}


def shared_gzip():
    """Tornado's gzip transform (``tornado.web.GZipContentEncoding``) that compresses each static file once per process.

    Bokeh's and Panel's scripts are about 3 MB a first visit, the same bytes for everyone; with Tornado's
    ``compress_response`` every visitor's copy was compressed anew.  When a room of 50 opened one link
    together, that was 38 % of the server's CPU (py-spy over ``python -m tests.benchmarks.load.room --n 50
    --client protocol``), and the views waited for it.  This transform (given to Tornado's documented
    ``Application(transforms=...)``) keeps the compressed body of a complete ``200`` answer to a ``GET`` of
    a static path (:data:`_STATIC_PATH`, whole file: no ``Range``), keyed by the request's URI (which carries
    the file's version), up to :data:`STATIC_GZIP_BYTES` per process; the next request for it gets those
    bytes (the handler's own chunks are then dropped).  Everything else is compressed as Tornado does.
    """
    if "class" in _SHARED_GZIP:
        return _SHARED_GZIP["class"]
    from tornado.web import GZipContentEncoding

    kept: dict[str, bytes] = {}

    class SharedStaticGzip(GZipContentEncoding):
        def __init__(self, request) -> None:
            super().__init__(request)
            whole = request.method == "GET" and "Range" not in request.headers
            self._key = request.uri if whole and _STATIC_PATH.match(request.path or "") else None
            self._parts: list[bytes] | None = None
            self._replaying = False

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            key = self._key if status_code == 200 and self._gzipping else None
            body = kept.get(key) if key is not None else None
            if body is not None:  # compressed before, for someone else: the same bytes
                headers["Vary"] = f"{headers['Vary']}, Accept-Encoding" if "Vary" in headers else "Accept-Encoding"
                headers["Content-Encoding"] = "gzip"
                headers["Content-Length"] = str(len(body))
                self._replaying = True
                return status_code, headers, body
            self._parts = [] if key is not None else None
            status_code, headers, chunk = super().transform_first_chunk(status_code, headers, chunk, finishing)
            if not self._gzipping:
                self._parts = None
            return status_code, headers, chunk

        def transform_chunk(self, chunk: bytes, finishing: bool) -> bytes:
            if self._replaying:
                return b""
            out = super().transform_chunk(chunk, finishing)
            if self._parts is not None:
                self._parts.append(out)
                if finishing:
                    body, self._parts = b"".join(self._parts), None
                    if self._key is not None and sum(map(len, kept.values())) + len(body) <= STATIC_GZIP_BYTES:
                        kept[self._key] = body
            return out

    SharedStaticGzip.kept = kept  # for the tests and the benchmarks
    _SHARED_GZIP["class"] = SharedStaticGzip
    return SharedStaticGzip
