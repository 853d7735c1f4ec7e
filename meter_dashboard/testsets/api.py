"""HTTP endpoints of guarded test sets: Tornado handlers served beside the pages (no second framework).

``meter-dashboard serve`` passes :func:`patterns` to ``pn.serve(extra_patterns=...)``:

=============================================  ======================================  ==============
``POST /api/testsets/NAME/submissions``        submit (a tenant token)                 the signal
``GET  /api/testsets/NAME``                    status (any token of NAME)              history
``POST /api/testsets/NAME/tokens``             ``{"tenant": T}`` (the admin token)     a new token
``POST /api/testsets/NAME/revert``, ``/retire``  admin actions (the admin token)
``GET  /api/testsets/NAME/export?format=csv``  after retirement (any token of NAME)    the trace
``GET  /api/testsets/NAME/labels``             after retirement (any token of NAME)    id,label CSV
``GET  /api/testsets``                         every test set's name and status (public)
=============================================  ======================================  ==============

Tokens go in ``Authorization: Bearer TOKEN``.  A submission is JSON
``{"predictions": {"id": "label", ...}, "val_accuracy": x}``, or, faster for large test
sets, the ``id,prediction`` CSV file itself (``Content-Type: text/csv``,
``?val_accuracy=x``).  Bodies are limited in size before
they are read (the ``Content-Length`` is checked first, then the stream is capped), and
parsed off the event loop, as is every service call (a thread pool), so a 1,000,000-
example submission never holds the server.  Responses are built from explicit
allow-lists of fields; errors are ``{"error": "one line"}`` with 400, 401, 403, 404,
409 or 413 and never a traceback, a label, a score or a token.
"""
from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

import tornado.web
from tornado.ioloop import IOLoop

from ..core.files import human_bytes
from ..core.validation import InputError
from . import files, service
from .store import StoreError, open_store

__all__ = ["patterns", "MAX_BODY_BYTES", "SUBMIT_FIELDS", "STATUS_FIELDS", "HISTORY_FIELDS"]

#: The largest submission body accepted (checked before reading it).
MAX_BODY_BYTES = files.MAX_FILE_BYTES
#: Other bodies (tokens, admin actions) are tiny.
MAX_SMALL_BODY_BYTES = 64 * 1024

SUBMIT_FIELDS = ("name", "mode", "meter", "step", "tenant", "signal", "incremental_signal", "range", "epsilon",
                 "supported_epsilon", "passed", "steps_used", "steps_left", "tenant_steps_left", "retired", "alarms")
STATUS_FIELDS = ("name", "mode", "status", "created", "retired_at", "retired_reason", "labels", "needed", "supported",
                 "settings", "steps", "steps_used", "steps_left", "version", "alarms", "history", "released", "tenants")
HISTORY_FIELDS = ("time", "tenant", "step", "val_accuracy", "signal", "incremental_signal", "epsilon", "passed",
                  "reverted", "predictions_sha256", "regular_signal", "test_accuracy", "empirical_overfitting", "n", "o",
                  "d", "truth")
ALARM_FIELDS = ("kind", "level", "step", "message")
LIST_FIELDS = ("name", "mode", "status", "labels", "needed", "steps_used", "steps", "created", "version")

_EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="md-testsets")
_log = logging.getLogger("meter_dashboard.testsets.api")


def _allow(data: dict, fields) -> dict:
    return {k: data[k] for k in fields if k in data}


def _status_view(out: dict) -> dict:
    view = _allow(out, STATUS_FIELDS)
    view["alarms"] = [_allow(a, ALARM_FIELDS) for a in out.get("alarms", [])]
    view["history"] = [_allow(h, HISTORY_FIELDS) for h in out.get("history", [])]
    return view


def _submit_view(out: dict) -> dict:
    view = _allow(out, SUBMIT_FIELDS)
    view["alarms"] = [_allow(a, ALARM_FIELDS) for a in out.get("alarms", [])]
    return view


@tornado.web.stream_request_body
class _Handler(tornado.web.RequestHandler):
    """Shared: size-limited JSON bodies, token checks, errors as one-line JSON."""

    max_body = MAX_SMALL_BODY_BYTES

    def initialize(self, store_url=None):
        self.store_url = store_url
        self._chunks: list = []
        self._size = 0
        self._too_big = False

    def prepare(self):
        length = self.request.headers.get("Content-Length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return self._fail(400, "Content-Length must be a whole number")
            if declared > self.max_body:
                return self._fail(413, f"the body must be at most {human_bytes(self.max_body)}; "
                                       f"got {human_bytes(declared)}")
        self.request.connection.set_max_body_size(self.max_body + 1)

    def data_received(self, chunk: bytes):
        self._size += len(chunk)
        if self._size > self.max_body:
            self._too_big = True
            self._chunks = []
        elif not self._too_big:
            self._chunks.append(chunk)

    def check_xsrf_cookie(self):  # token-authenticated JSON API, no cookies
        return None

    def set_default_headers(self):
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")

    def _fail(self, status: int, message: str):
        self.set_status(status)
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
        return await IOLoop.current().run_in_executor(_EXECUTOR, lambda: fn(*args, **kwargs))

    async def _caller(self, name: str):
        return await self._call(service.authenticate, self.store, name, self._token())

    async def _body(self) -> dict:
        if self._too_big:
            raise _HTTPError(413, f"the body must be at most {human_bytes(self.max_body)}")
        data = b"".join(self._chunks)
        if not data.strip():
            return {}
        return await self._call(_parse_json, data)

    async def _run(self, work):
        """Run ``work()`` (a coroutine function) and turn every failure into a one-line JSON error."""
        try:
            result = await work()
        except _HTTPError as exc:
            return self._fail(exc.status, exc.message)
        except service.ServiceError as exc:
            return self._fail(exc.status, str(exc))
        except service.NotFound as exc:
            return self._fail(404, str(exc))
        except InputError as exc:
            return self._fail(400, str(exc))
        except StoreError as exc:
            _log.error("store error: %s", exc)
            return self._fail(503, "the store is not available")
        except Exception:  # noqa: BLE001 - log the kind only: the message might carry data
            _log.error("unexpected error in %s %s", self.request.method, self.request.path, exc_info=False)
            return self._fail(500, "internal error")
        if isinstance(result, str):
            self.set_header("Content-Type", "text/csv; charset=utf-8")
            return self.finish(result)
        return self.finish(json.dumps(result))


class _HTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _parse_json(data: bytes) -> dict:
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=files.json_pairs_hook)
    except UnicodeDecodeError:
        raise InputError("body", "UTF-8 JSON", "bytes that are not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InputError("body", "valid JSON", exc.msg.lower(), location=f"line {exc.lineno}, column {exc.colno}") \
            from None
    if isinstance(doc, files.PairList):
        keys = [k for k, _ in doc]
        repeated = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if repeated is not None or len(doc) > 16:
            raise InputError("body", "a JSON object with predictions and val_accuracy",
                             f"repeated key {repeated!r}" if repeated else "other keys")
    if not isinstance(doc, dict):
        raise InputError("body", "a JSON object", type(doc).__name__)
    return doc


def _predictions_of(body: dict):
    preds = body.get("predictions")
    if isinstance(preds, files.PairList):
        return preds
    if isinstance(preds, dict):
        return files.PairList(preds.items())
    raise InputError("predictions", 'an object {"id": "prediction", ...}', type(preds).__name__
                     if preds is not None else "nothing")


class SubmissionHandler(_Handler):
    max_body = MAX_BODY_BYTES

    async def post(self, name):
        async def work():
            caller = await self._caller(name)
            if self.request.headers.get("Content-Type", "").split(";")[0].strip().lower() == "text/csv":
                predictions, val = self._csv_body(), self.get_query_argument("val_accuracy", None)
            else:
                body = await self._body()
                unknown = sorted(set(body) - {"predictions", "val_accuracy"})
                if unknown:
                    raise InputError("body", "the keys predictions and val_accuracy", unknown[0])
                predictions, val = _predictions_of(body), body.get("val_accuracy")
            out = await self._call(service.submit, self.store, name, predictions, val, caller)
            return _submit_view(out)
        await self._run(work)

    def _csv_body(self) -> bytes:
        """``Content-Type: text/csv``: the id,prediction file itself (``?val_accuracy=X``), the fast way."""
        if self._too_big:
            raise _HTTPError(413, f"the body must be at most {human_bytes(self.max_body)}")
        return b"".join(self._chunks)


class StatusHandler(_Handler):
    async def get(self, name):
        async def work():
            caller = await self._caller(name)
            return _status_view(await self._call(service.status, self.store, name, caller))
        await self._run(work)


class TokenHandler(_Handler):
    async def post(self, name):
        async def work():
            caller = await self._caller(name)
            body = await self._body()
            out = await self._call(service.issue_token, self.store, name, body.get("tenant"), caller)
            return _allow(out, ("name", "tenant", "token"))
        await self._run(work)


class RevertHandler(_Handler):
    async def post(self, name):
        async def work():
            caller = await self._caller(name)
            return _allow(await self._call(service.revert, self.store, name, caller), ("name", "step", "reverted"))
        await self._run(work)


class RetireHandler(_Handler):
    async def post(self, name):
        async def work():
            caller = await self._caller(name)
            out = await self._call(service.retire, self.store, name, caller)
            return _allow(out, ("name", "status", "steps_used", "reason"))
        await self._run(work)


class ExportHandler(_Handler):
    async def get(self, name):
        async def work():
            caller = await self._caller(name)
            fmt = self.get_query_argument("format", "csv")
            out = await self._call(service.export, self.store, name, caller, format=fmt)
            return _allow(out, ("name", "format", "trace", "test_size", "settings"))
        await self._run(work)


class LabelsHandler(_Handler):
    async def get(self, name):
        async def work():
            caller = await self._caller(name)
            return await self._call(service.release_labels, self.store, name, caller)
        await self._run(work)


class ListHandler(_Handler):
    async def get(self):
        async def work():
            if not self.store.exists():  # asking never creates the store
                return {"testsets": []}
            rows = await self._call(service.list_testsets, self.store)
            return {"testsets": [_allow(r, LIST_FIELDS) for r in rows]}
        await self._run(work)


def patterns(store_url: str | None = None) -> list:
    """Tornado URL patterns for ``pn.serve(extra_patterns=...)`` (``store_url``: the server's store)."""
    name = r"([A-Za-z0-9][A-Za-z0-9._-]{0,63})"
    kwargs = {"store_url": store_url}
    return [
        (r"/api/testsets/?", ListHandler, kwargs),
        (rf"/api/testsets/{name}/submissions/?", SubmissionHandler, kwargs),
        (rf"/api/testsets/{name}/tokens/?", TokenHandler, kwargs),
        (rf"/api/testsets/{name}/revert/?", RevertHandler, kwargs),
        (rf"/api/testsets/{name}/retire/?", RetireHandler, kwargs),
        (rf"/api/testsets/{name}/export/?", ExportHandler, kwargs),
        (rf"/api/testsets/{name}/labels/?", LabelsHandler, kwargs),
        (rf"/api/testsets/{name}/?", StatusHandler, kwargs),
    ]
