"""HTTP endpoints of guarded test sets: Tornado handlers served beside the pages (no second framework).

``meter-dashboard serve`` passes :func:`patterns` to ``pn.serve(extra_patterns=...)``.  The
contract - every route, request and response - is the OpenAPI 3 document
:func:`.openapi.document`, served at ``GET /api/openapi.json`` and checked against these
handlers by the suite:

================================================  ==================================  ===================
``POST /api/testsets/NAME/submissions``           a tenant token                      the signal
``GET  /api/testsets/NAME``                       any token of NAME                   status and history
``POST /api/testsets/NAME/tokens``                the admin token, ``{"tenant": T}``  a new token
``POST /api/testsets/NAME/revert``, ``/retire``   the admin token
``GET  /api/testsets/NAME/export?format=csv``     any token of NAME, once retired     the trace
``GET  /api/testsets/NAME/labels``                any token of NAME, once retired     id,label CSV
``GET  /api/testsets``                            nobody (public)                     state and steps only
``GET  /api/health``, ``GET /api/openapi.json``   nobody                              readiness, contract
================================================  ==================================  ===================

Tokens go in ``Authorization: Bearer TOKEN``.  Request bounds (issue 23): the token is
checked in :meth:`_Handler.prepare`, from the headers, before any byte of the body is read
(401 with no body read, answered whole at once; what the client still sends is drained, never
kept); the body then streams through a
:class:`~.submission.BodyReader` that counts bytes (100 MiB for a submission, 64 KiB for
anything else) and, for a submission, lines (the test set's labels plus a header) and
answers 413 the moment a limit is passed - with or without a ``Content-Length``, chunked or
not; JSON deeper than 8 is 400; a path longer than :data:`MAX_PATH_CHARS` is 414.  Parsing
and every service call run off the event loop (a thread pool).  Responses are built by
:func:`.access.disclose`; errors are ``{"error": "one line"}`` and never a traceback, a
label, a score or a token.

Issue 31: a submission's ``Idempotency-Key`` header goes to :func:`.service.submit` (a retry
gets the first answer, spending nothing); a step commits only while its client is connected and
the server is not giving up (:func:`drain`, on SIGTERM: new requests 503, those in progress
answered); a token with :data:`REFUSALS_PER_WINDOW` refused requests in
:data:`REFUSAL_WINDOW_S` seconds gets 429 before its body is read; a JSON number too long to
parse is a 400 naming its field; every 405 carries ``Allow``; ``revert`` and ``retire`` take no
body but ``{}``; a full disk under the store is named (503) and ``GET /api/health`` checks that
the store can be written.
"""
from __future__ import annotations

import asyncio
import collections
import json
import logging
import time

import tornado.web
from tornado.http1connection import HTTP1Connection

from ..core.files import human_bytes
from ..core.runtime import in_thread
from ..core.validation import InputError
from ..core.validation import raw
from . import security, service
from .access import PUBLIC
from .openapi import document, version
from .store import StoreError, open_store
from .submission import (MAX_PATH_CHARS, MAX_SMALL_BODY_BYTES, MAX_SUBMISSION_BYTES, BodyReader, TooLarge, parse_json,
                         read_submission)

__all__ = ["patterns", "drain", "MAX_BODY_BYTES", "MAX_SMALL_BODY_BYTES", "MAX_PATH_CHARS", "NAME_PATTERN",
           "MAX_NUMBER_DIGITS", "REFUSALS_PER_WINDOW", "REFUSAL_WINDOW_S", "DRAIN_SECONDS"]

#: The largest submission body (checked as it arrives).
MAX_BODY_BYTES = MAX_SUBMISSION_BYTES
#: A test set's name in a URL.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
#: Tornado's own cap on a streamed body, lifted: the handlers count bytes themselves and answer 413.
_UNCAPPED = 1 << 62

_log = logging.getLogger("meter_dashboard.testsets.api")

#: The most digits a JSON number in a body may have (Python refuses integers over 4,300 digits; none is needed).
MAX_NUMBER_DIGITS = 100
#: Refused requests (4xx other than 429) one token may have in :data:`REFUSAL_WINDOW_S` seconds (per server
#: process); beyond it the token is answered 429 with ``Retry-After``, before any byte of the body is read.
REFUSALS_PER_WINDOW = 60
REFUSAL_WINDOW_S = 60
#: On SIGTERM (:func:`drain`): seconds the requests in progress get to finish and be answered.
DRAIN_SECONDS = 20.0
#: HTTP methods a route may serve (its ``Allow`` header lists those it does).
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class _Flight:
    """The API requests in progress in this process, and whether it is stopping (:func:`drain`)."""

    def __init__(self):
        self.handlers: set = set()
        self.stopping = False  # new requests: 503 with an answer
        self.give_up = False  # submissions not committed yet: abandoned (nothing spent), answered 503


_FLIGHT = _Flight()


async def drain(seconds: float = DRAIN_SECONDS) -> int:
    """Stop taking API requests and let those in progress end with an answer; returns how many were cut.

    Called on SIGTERM (``serve``): from now on a new request is answered 503 at once ("the server
    is stopping"; nothing spent); a request in progress runs to its end and its answer is written
    out, for up to ``seconds``.  Past that, a submission whose transaction has not committed gives
    up (rolled back, answered 503: nothing spent) and the rest get a few more seconds.  So a step
    is recorded only for a submission that was answered - or whose client left after the commit,
    which a retry with the same ``Idempotency-Key`` answers without spending another.
    """
    _FLIGHT.stopping = True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while _FLIGHT.handlers and loop.time() < deadline:
        await asyncio.sleep(0.02)
    if _FLIGHT.handlers:
        _FLIGHT.give_up = True
        grace = loop.time() + 5.0
        while _FLIGHT.handlers and loop.time() < grace:
            await asyncio.sleep(0.02)
    return len(_FLIGHT.handlers)


class _Refusals:
    """Refused requests per token key (this process): at most ``limit`` in any ``window`` seconds."""

    def __init__(self, limit: int, window: float):
        self.limit, self.window = limit, window
        self.times: dict = {}

    def wait(self, key: str) -> int:
        """Seconds ``key`` must wait before its next request is read (0: none)."""
        times = self.times.get(key)
        if not times:
            return 0
        now = time.monotonic()
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self.times[key]
            return 0
        return 0 if len(times) < self.limit else max(1, int(times[0] + self.window - now + 1))

    def add(self, key: str) -> None:
        times = self.times.setdefault(key, collections.deque())
        times.append(time.monotonic())
        while len(times) > self.limit:
            times.popleft()


_REFUSALS = _Refusals(REFUSALS_PER_WINDOW, REFUSAL_WINDOW_S)


class _HTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@tornado.web.stream_request_body
class _Handler(tornado.web.RequestHandler):
    """Shared: token from the headers first, bounded bodies, every failure as one-line JSON."""

    max_body = MAX_SMALL_BODY_BYTES
    #: Routes about one test set (``NAME`` in the path) need a token of it.
    needs_token = True

    def initialize(self, store_url=None):
        self.store_url = store_url
        self.caller = PUBLIC
        self.reader: BodyReader | None = None
        self.answered, self.drained = False, 0
        self.token_key: str | None = None  # the authenticated token's public half (refusals are counted per token)
        self.gone = False  # the client closed the connection

    async def prepare(self):
        """Everything that needs no body, before any of it is read: size declared, token, limits.

        A refusal is answered at once, whole (status, ``Content-Length``, the one-line error),
        before any byte of the body is read.  The body that follows is then only drained
        (counted, never kept) up to the limit, so that a client that sends all of it before it
        reads still gets the answer; a declared size over the limit closes the connection
        after the answer instead."""
        self.request.connection.set_max_body_size(_UNCAPPED)  # the reader counts; Tornado must not cut in
        self.answered, self.drained = False, 0
        allowed = self._allowed()
        if self.request.method not in allowed:
            return self._fail(405, f"{self.request.method} is not served here; {self.request.path[:120]} answers "
                                   f"{', '.join(allowed)}", {"Allow": ", ".join(allowed)})
        if _FLIGHT.stopping:
            return self._fail(503, "the server is stopping: nothing was read or recorded; send the request again "
                                   "(a submission with the same Idempotency-Key) once it is back",
                              {"Retry-After": "5", "Connection": "close"})
        _FLIGHT.handlers.add(self)

        async def checks():
            self._check_declared_length()
            if self.needs_token:
                self.caller = await self._call(service.authenticate, self.store, self.path_args[0], self._token())
                self.token_key = security.split_token(self._token())[0]
                wait = _REFUSALS.wait(self.token_key)
                if wait:
                    raise service.RateLimited(f"this token had {_REFUSALS.limit} refused requests in "
                                              f"{_REFUSALS.window} s; the next request is read in {wait} s", wait)
            self.reader = await self._make_reader()
        ok, _, error = await self._guard(checks, answer=False)
        if ok:
            return
        if error[0] == 413:  # declared over the limit: answer and close (Tornado closes an unread request)
            return self._fail(*error)
        await self._answer_now(*error)

    async def _answer_now(self, status: int, message: str, headers: dict | None = None):
        """Send the whole error answer now; the handler's method finishes it once the body is drained."""
        self.clear()
        self.set_status(status)
        for key, value in (headers or {}).items():
            self.set_header(key, value)
        payload = json.dumps({"error": message}).encode("utf-8")
        self.set_header("Content-Length", str(len(payload)))
        self.write(payload)
        self.answered = True
        await self.flush()

    def _check_declared_length(self) -> None:
        length = self.request.headers.get("Content-Length")
        if length is None:
            return
        try:
            declared = int(length)
        except ValueError:
            raise _HTTPError(400, "Content-Length must be a whole number") from None
        if declared > self.max_body:
            raise TooLarge(f"the body must be at most {human_bytes(self.max_body)} ({self.max_body:,} bytes); "
                           f"got {human_bytes(declared)}")

    async def _make_reader(self) -> BodyReader:
        return BodyReader(self.max_body, what="the body")

    def data_received(self, chunk: bytes):
        if self._finished:
            return
        if self.answered or self.reader is None:  # refused already: drain, keep nothing
            self.drained += len(chunk)
            connection = self.request.connection
            if self.drained > self.max_body and isinstance(connection, HTTP1Connection):  # the server's connection
                connection.close()
            return
        try:
            self.reader.feed(chunk)
        except TooLarge as exc:  # answered now, and the connection closes: the rest is never read
            self._fail(413, str(exc))

    def on_connection_close(self):
        """A client that stopped sending after an early answer (curl with ``Expect: 100-continue``): the
        request is over; log it like any other.  A client gone before its submission committed spends
        nothing (:meth:`_wanted`)."""
        super().on_connection_close()
        self.gone = True
        _FLIGHT.handlers.discard(self)
        if self.answered and not self._finished:
            self.application.log_request(self)

    def finish(self, chunk=None):
        """Finish, and count the request as in progress until its answer is written out (:func:`drain`)."""
        future = super().finish(chunk)
        future.add_done_callback(lambda _: _FLIGHT.handlers.discard(self))
        return future

    def on_finish(self):
        status = self.get_status()
        if self.token_key is not None and 400 <= status < 500 and status != 429:
            _REFUSALS.add(self.token_key)

    def _wanted(self) -> bool:
        """Whether a submission may still commit: its client is there and the server is not giving up."""
        return not self.gone and not _FLIGHT.give_up

    @classmethod
    def _allowed(cls) -> list:
        """The methods this route serves (its ``Allow`` header)."""
        base = tornado.web.RequestHandler
        return [m for m in _METHODS if getattr(cls, m.lower(), None) is not getattr(base, m.lower(), None)]

    def check_xsrf_cookie(self):  # token-authenticated JSON API, no cookies
        return None

    def set_default_headers(self):
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")

    def _fail(self, status: int, message: str, headers: dict | None = None):
        if self._finished or self.answered:
            return
        self.clear()
        self.set_status(status)
        for key, value in (headers or {}).items():
            self.set_header(key, value)
        self.finish(json.dumps({"error": message}))

    def write_error(self, status_code, **kwargs):  # never a traceback
        if status_code == 405:  # a method Tornado does not know at all
            self.set_header("Allow", ", ".join(self._allowed()))
        self.finish(json.dumps({"error": self._reason or "internal error"}))

    @property
    def store(self):
        return open_store(self.store_url)

    def _token(self):
        header = self.request.headers.get("Authorization", "")
        if len(header) > 300 or not header.startswith("Bearer "):
            return None
        return header[len("Bearer "):].strip()

    async def _call(self, fn, *args, **kwargs):
        return await in_thread(fn, *args, **kwargs)  # the store's work in the runtime's threads

    def _body(self):
        """The whole body, as read (after the last chunk)."""
        return self.reader.finish() if self.reader is not None else b""

    async def _json_body(self) -> dict:
        data = self._body()
        if not data or data.isspace():
            return {}
        return await self._call(_numbers_named, parse_json, data, data)

    async def _guard(self, work, answer: bool = True):
        """Run ``work()`` (a coroutine function); every failure becomes a one-line JSON error, answered
        now (``answer``) or returned.  Returns ``(ok, result, error)``; ``error`` is
        ``(status, message, headers)`` when it was not answered."""
        try:
            return True, await work(), None
        except Exception as exc:  # noqa: BLE001 - each kind is mapped by _error_of; nothing escapes as a 500 page
            error = _error_of(exc, self.request)
        if answer:
            self._fail(*error)
            return False, None, None
        return False, None, error

    async def _run(self, work):
        """Answer ``work()``'s result: a dict as JSON, a str as CSV."""
        if self._finished:  # already answered (a limit passed while the body arrived)
            return
        if self.answered:  # refused in prepare(), answered then; the body has been drained
            return self.finish()
        ok, result, _ = await self._guard(work)
        if not ok or self._finished:
            return
        if isinstance(result, str):
            self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.finish(result if isinstance(result, str) else json.dumps(result))


def _error_of(exc: Exception, request) -> tuple:
    """``(status, one-line message, headers)`` of a failure; the message never holds data of the request."""
    if isinstance(exc, _HTTPError):
        return exc.status, exc.message, None
    if isinstance(exc, TooLarge):
        return 413, str(exc), None
    if isinstance(exc, service.RateLimited):
        return 429, str(exc), {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, service.ServiceError):
        return exc.status, str(exc), None
    if isinstance(exc, service.NotFound):
        return 404, str(exc), None
    if isinstance(exc, InputError):
        return 400, str(exc), None
    if isinstance(exc, StoreError):
        _log.error("store error: %s", exc)
        if exc.full:
            return 503, ("the store's disk is full: nothing was recorded (no step spent); the server's admin must "
                         "free space on it"), {"Retry-After": "60"}
        return 503, "the store is not available", None
    _log.error("unexpected %s in %s %s", type(exc).__name__, request.method, request.path[:200])  # the kind only
    return 500, "internal error", None


class _LongNumber:
    def __init__(self, digits: int):
        self.digits = digits


def _long_number(data: bytes):
    """``(field, digits)`` of the first JSON number in ``data`` longer than :data:`MAX_NUMBER_DIGITS` (or None)."""
    def number(text):
        return _LongNumber(len(text)) if len(text) > MAX_NUMBER_DIGITS else 0

    try:
        doc = json.loads(data, parse_int=number, parse_float=number)
    except (ValueError, RecursionError):
        return None
    todo = [("", doc)]
    while todo:
        path, value = todo.pop(0)
        if isinstance(value, _LongNumber):
            return path or "body", value.digits
        if isinstance(value, dict):
            todo += [((f"{path}.{k}" if path else str(k))[:120], v) for k, v in value.items()]
        elif isinstance(value, list):
            todo += [(f"{path}[{i}]", v) for i, v in enumerate(value)]
    return None


def _numbers_named(fn, data: bytes, *args, **kwargs):
    """``fn(*args, **kwargs)``, a JSON parse of ``data``; a number too long to parse (Python refuses an
    integer of over 4,300 digits with a ``ValueError``) becomes an :class:`InputError` naming its field."""
    try:
        return fn(*args, **kwargs)
    except InputError:
        raise
    except ValueError:
        found = _long_number(data)
        if found is None:
            raise
        raise InputError(found[0], f"a number of at most {MAX_NUMBER_DIGITS} digits",
                         raw(f"a number of {found[1]:,} characters")) from None


def _one_call(action, method: str, doc: str) -> type[_Handler]:
    """A route whose answer is ``action(store, name, caller)``, on ``method`` (``"get"`` or ``"post"``; a POST
    takes no body but ``{}``)."""
    async def handle(self: _Handler, name: str) -> None:
        async def work():
            if method == "post" and await self._json_body() != {}:
                raise InputError("body", "empty or {} (this action takes no input)", raw("other keys"))
            return await self._call(action, self.store, name, self.caller)
        await self._run(work)

    return type(f"{action.__name__.title().replace('_', '')}Handler", (_Handler,), {method: handle, "__doc__": doc})


StatusHandler = _one_call(service.status, "get", "GET /api/testsets/NAME: the state and the history the caller may see.")
RevertHandler = _one_call(service.revert, "post", "POST .../revert: mark the latest step reverted.")
RetireHandler = _one_call(service.retire, "post", "POST .../retire: retire the test set now.")
LabelsHandler = _one_call(service.release_labels, "get", "GET .../labels: the labels, once the set is retired.")


class SubmissionHandler(_Handler):
    max_body = MAX_BODY_BYTES

    async def _make_reader(self) -> BodyReader:
        self.key = self.request.headers.get("Idempotency-Key")
        self.labels = await self._call(service.check_submission, self.store, self.path_args[0], self.caller,
                                       self.key)
        if self._content_type() == "text/csv":
            rule = f"the test set's {self.labels:,} labels and a header; blank lines count"
            return BodyReader(self.max_body, max_lines=self.labels + 1, what="the submission", lines_rule=rule)
        return BodyReader(self.max_body, what="the submission")

    def _content_type(self) -> str:
        return self.request.headers.get("Content-Type", "").split(";")[0].strip().lower()

    async def post(self, name):
        async def work():
            data = self._body()
            self.reader = None  # the parser holds the only reference now
            predictions, val = await self._call(_numbers_named, read_submission, data, data, self._content_type(),
                                                query_val_accuracy=self.get_query_argument("val_accuracy", None),
                                                labels=self.labels)
            del data
            return await self._call(service.submit, self.store, name, predictions, val, self.caller,
                                    idempotency_key=self.key, proceed=self._wanted)
        await self._run(work)


class TokenHandler(_Handler):
    async def post(self, name):
        async def work():
            body = await self._json_body()
            unknown = sorted(set(body) - {"tenant"})
            if unknown:
                raise InputError("body", 'the key tenant: {"tenant": "NAME"}', unknown[0])
            return await self._call(service.issue_token, self.store, name, body.get("tenant"), self.caller)
        await self._run(work)


class ExportHandler(_Handler):
    async def get(self, name):
        fmt = self.get_query_argument("format", "csv")
        await self._run(lambda: self._call(service.export, self.store, name, self.caller, format=fmt))


class ListHandler(_Handler):
    needs_token = False

    async def get(self):
        async def work():
            if not self.store.exists():  # asking never creates the store
                return {"testsets": []}
            return {"testsets": await self._call(service.list_testsets, self.store, PUBLIC)}
        await self._run(work)


class HealthHandler(_Handler):
    """``GET /api/health``: 200 ``{"ready": true, ...}`` when the store answers, else 503."""

    needs_token = False

    async def get(self):
        async def work():
            reachable = await self._call(self.store.reachable)
            writable, problem = await self._call(self.store.writable) if reachable else (False, "it does not answer")
            if not (reachable and writable):
                self.set_status(503)
            return {"ready": bool(reachable and writable), "version": version(),
                    "store": {"backend": self.store.backend, "reachable": bool(reachable), "writable": bool(writable),
                              "problem": problem}}
        await self._run(work)


class OpenAPIHandler(_Handler):
    """``GET /api/openapi.json``: the contract of these routes."""

    needs_token = False

    async def get(self):
        await self._run(lambda: self._call(document))


class NotFoundHandler(_Handler):
    """Any other path under /api: 404 as one-line JSON (not an HTML page)."""

    needs_token = False

    def _missing(self, *_):
        self._fail(404, f"no such API route: {self.request.method} {self.request.path[:120]}; see /api/openapi.json")

    get = post = put = delete = patch = _missing


class PathTooLongHandler(_Handler):
    """Any path longer than :data:`MAX_PATH_CHARS`: 414, before anything else."""

    needs_token = False

    async def prepare(self):
        self._fail(414, f"the URL path must be at most {MAX_PATH_CHARS:,} characters; got "
                        f"{len(self.request.path):,}")


#: ``/api/testsets/NAME/<action>`` and the handler of each.
_TESTSET_ROUTES = (("submissions", SubmissionHandler), ("tokens", TokenHandler), ("revert", RevertHandler),
                   ("retire", RetireHandler), ("export", ExportHandler), ("labels", LabelsHandler))


def patterns(store_url: str | None = None) -> list:
    """Tornado URL patterns for ``pn.serve(extra_patterns=...)`` (``store_url``: the server's store)."""
    name = f"({NAME_PATTERN})"
    kwargs = {"store_url": store_url}
    return [
        (rf"/.{{{MAX_PATH_CHARS},}}", PathTooLongHandler, kwargs),
        (r"/api/health/?", HealthHandler, kwargs),
        (r"/api/openapi\.json", OpenAPIHandler, kwargs),
        (r"/api/testsets/?", ListHandler, kwargs),
        *((rf"/api/testsets/{name}/{action}/?", handler, kwargs) for action, handler in _TESTSET_ROUTES),
        (rf"/api/testsets/{name}/?", StatusHandler, kwargs),
        (r"/api(/.*)?", NotFoundHandler, kwargs),
    ]
