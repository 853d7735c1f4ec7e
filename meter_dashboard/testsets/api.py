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
"""
from __future__ import annotations

import json
import logging

import tornado.web
from tornado.http1connection import HTTP1Connection

from ..core.files import human_bytes
from ..core.runtime import in_thread
from ..core.validation import InputError
from . import service
from .access import PUBLIC
from .openapi import document, version
from .store import StoreError, open_store
from .submission import (MAX_PATH_CHARS, MAX_SMALL_BODY_BYTES, MAX_SUBMISSION_BYTES, BodyReader, TooLarge, parse_json,
                         read_submission)

__all__ = ["patterns", "MAX_BODY_BYTES", "MAX_SMALL_BODY_BYTES", "MAX_PATH_CHARS", "NAME_PATTERN"]

#: The largest submission body (checked as it arrives).
MAX_BODY_BYTES = MAX_SUBMISSION_BYTES
#: A test set's name in a URL.
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
#: Tornado's own cap on a streamed body, lifted: the handlers count bytes themselves and answer 413.
_UNCAPPED = 1 << 62

_log = logging.getLogger("meter_dashboard.testsets.api")


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

    async def prepare(self):
        """Everything that needs no body, before any of it is read: size declared, token, limits.

        A refusal is answered at once, whole (status, ``Content-Length``, the one-line error),
        before any byte of the body is read.  The body that follows is then only drained
        (counted, never kept) up to the limit, so that a client that sends all of it before it
        reads still gets the answer; a declared size over the limit closes the connection
        after the answer instead."""
        self.request.connection.set_max_body_size(_UNCAPPED)  # the reader counts; Tornado must not cut in
        self.answered, self.drained = False, 0

        async def checks():
            self._check_declared_length()
            if self.needs_token:
                self.caller = await self._call(service.authenticate, self.store, self.path_args[0], self._token())
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
        request is over; log it like any other."""
        super().on_connection_close()
        if self.answered and not self._finished:
            self.application.log_request(self)

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
        return await self._call(parse_json, data)

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
        return 503, "the store is not available", None
    _log.error("unexpected %s in %s %s", type(exc).__name__, request.method, request.path[:200])  # the kind only
    return 500, "internal error", None


def _one_call(action, method: str, doc: str) -> type[_Handler]:
    """A route whose answer is ``action(store, name, caller)``, on ``method`` (``"get"`` or ``"post"``)."""
    async def handle(self: _Handler, name: str) -> None:
        await self._run(lambda: self._call(action, self.store, name, self.caller))

    return type(f"{action.__name__.title().replace('_', '')}Handler", (_Handler,), {method: handle, "__doc__": doc})


StatusHandler = _one_call(service.status, "get", "GET /api/testsets/NAME: the state and the history the caller may see.")
RevertHandler = _one_call(service.revert, "post", "POST .../revert: mark the latest step reverted.")
RetireHandler = _one_call(service.retire, "post", "POST .../retire: retire the test set now.")
LabelsHandler = _one_call(service.release_labels, "get", "GET .../labels: the labels, once the set is retired.")


class SubmissionHandler(_Handler):
    max_body = MAX_BODY_BYTES

    async def _make_reader(self) -> BodyReader:
        self.labels = await self._call(service.check_submission, self.store, self.path_args[0], self.caller)
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
            predictions, val = await self._call(read_submission, data, self._content_type(),
                                                query_val_accuracy=self.get_query_argument("val_accuracy", None),
                                                labels=self.labels)
            del data
            return await self._call(service.submit, self.store, name, predictions, val, self.caller)
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
            if not reachable:
                self.set_status(503)
            return {"ready": bool(reachable), "version": version(),
                    "store": {"backend": self.store.backend, "reachable": bool(reachable)}}
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


def patterns(store_url: str | None = None) -> list:
    """Tornado URL patterns for ``pn.serve(extra_patterns=...)`` (``store_url``: the server's store)."""
    name = f"({NAME_PATTERN})"
    kwargs = {"store_url": store_url}
    return [
        (rf"/.{{{MAX_PATH_CHARS},}}", PathTooLongHandler, kwargs),
        (r"/api/health/?", HealthHandler, kwargs),
        (r"/api/openapi\.json", OpenAPIHandler, kwargs),
        (r"/api/testsets/?", ListHandler, kwargs),
        (rf"/api/testsets/{name}/submissions/?", SubmissionHandler, kwargs),
        (rf"/api/testsets/{name}/tokens/?", TokenHandler, kwargs),
        (rf"/api/testsets/{name}/revert/?", RevertHandler, kwargs),
        (rf"/api/testsets/{name}/retire/?", RetireHandler, kwargs),
        (rf"/api/testsets/{name}/export/?", ExportHandler, kwargs),
        (rf"/api/testsets/{name}/labels/?", LabelsHandler, kwargs),
        (rf"/api/testsets/{name}/?", StatusHandler, kwargs),
        (r"/api(/.*)?", NotFoundHandler, kwargs),
    ]
