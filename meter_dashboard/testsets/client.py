"""The remote client of guarded test sets (standard library only: :mod:`urllib`).

Developers talk to a running ``meter-dashboard serve`` with their token, never to the
store: ``Client("http://host:5006", token).submit("emo", {"ex1": "cat", ...}, 0.91)``.
HTTP errors come back as the service's own exceptions (401 :class:`Unauthorized`, 403
:class:`Forbidden`, 404 :class:`NotFound`, 409 :class:`Refused`, 429 a
:class:`ServiceError` with ``status`` 429, 400 and 413 an
:class:`~meter_dashboard.core.validation.InputError`) carrying the server's one-line message.
A body over the server's limit (100 MiB) is refused here, before anything is sent.

A submission carries an ``Idempotency-Key`` (a new random one, or the caller's) and is sent again,
with the same key, when the connection drops, the server does not answer in time or answers 503
(stopping, its store unavailable): a submission the server recorded before the connection
dropped gets its first answer back and spends nothing.  When no try is answered,
:class:`Unanswered` says so and carries the key (send the same predictions with it later).
"""
from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

from ..core.files import check_size, read_bytes
from ..core.validation import InputError, raw
from . import files
from .service import Forbidden, NotFound, Refused, ServiceError, Unauthorized, check_name, check_tenant
from .submission import MAX_SUBMISSION_BYTES

__all__ = ["Client", "RemoteError", "Unanswered", "RETRY_DELAYS"]

#: Seconds between the tries of a submission whose connection dropped (or that got 503): 5 retries, 15.5 s.
RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)


class Unanswered(ServiceError, status=503):
    """No try of a request was answered (connection refused or dropped, 503); ``key`` is its Idempotency-Key.

    The server may or may not have recorded it: send the same predictions with the same key to find
    out (a recorded submission answers with its step and spends nothing; one that was not is made)."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


class RemoteError(InputError):
    """The server refused the request as bad input (HTTP 400/413); the message is the server's."""

    def __init__(self, message: str, status: int = 400):
        ValueError.__init__(self, message)
        self.parameter, self.rule, self.got, self.location = "request", "accepted by the server", raw(message), None
        self.status = status


class _RemoteNotFound(NotFound):
    def __init__(self, message: str):
        ValueError.__init__(self, message)
        self.parameter, self.rule, self.got, self.location = "NAME", "a test set on the server", raw(message), None


class Client:
    """Talk to a server's ``/api/testsets`` endpoints.

    Parameters
    ----------
    server : str
        The server's base URL, such as ``http://localhost:5006``.
    token : str
        A tenant token (submit, status) or a test set's admin token (tokens, revert, retire).
    timeout : float
        Seconds to wait for an answer.
    retry_delays : sequence of float
        Seconds to wait before each new try of a submission that got no answer (:data:`RETRY_DELAYS`).
    """

    def __init__(self, server: str, token: str | None = None, *, timeout: float = 300.0,
                 retry_delays=None):
        parsed = urllib.parse.urlparse(str(server).strip())
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InputError("--server", "an http:// or https:// URL such as http://localhost:5006", server)
        self.server = str(server).strip().rstrip("/")
        self.token = token
        self.timeout = float(timeout)
        self.retry_delays = tuple(RETRY_DELAYS if retry_delays is None else retry_delays)

    def __repr__(self) -> str:
        return f"Client({self.server!r}, token={'***' if self.token else None})"

    # -- transport
    def _url(self, name: str | None, tail: str = "", query: dict | None = None) -> str:
        path = "/api/testsets" + ("" if name is None else "/" + urllib.parse.quote(check_name(name), safe=""))
        return self.server + path + tail + ("?" + urllib.parse.urlencode(query) if query else "")

    def _request(self, method: str, url: str, body: dict | None = None, *, raw_text: bool = False,
                 csv: bytes | None = None, key: str | None = None):
        """One request; with ``key`` (a submission's Idempotency-Key), tried again on a dropped connection,
        a timeout or a 503, after each of :attr:`retry_delays`."""
        data = csv if csv is not None else (None if body is None else
                                            json.dumps(body, separators=(",", ":")).encode("utf-8"))
        if data is not None and len(data) > MAX_SUBMISSION_BYTES:  # the server would refuse it unread
            check_size(len(data), MAX_SUBMISSION_BYTES, "predictions")
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "text/csv" if csv is not None else "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        if key is not None:
            request.add_header("Idempotency-Key", key)
        delays = list(self.retry_delays) if key is not None else []
        while True:
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - http(s) only
                    payload = response.read()
                break
            except urllib.error.HTTPError as exc:
                error = _error(exc.code, exc.read())
                if exc.code != 503 or not delays:
                    raise error from None
                why = str(error)
                wait = _retry_after(exc.headers.get("Retry-After"), delays[0])
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                why = str(getattr(exc, "reason", exc)) or type(exc).__name__
                if key is None:
                    raise InputError("--server", "a server that answers", raw(f"{self.server}: {why}")) from None
                if not delays:
                    raise Unanswered(f"{self.server} did not answer after {len(self.retry_delays) + 1} tries "
                                     f"({why}); the submission may have been recorded: send the same predictions "
                                     f"with --idempotency-key {key} to get its answer (no step is spent twice)",
                                     key) from None
                wait = delays[0]
            delays.pop(0)
            time.sleep(wait)
        text = payload.decode("utf-8")
        return text if raw_text else json.loads(text)

    # -- operations
    def submit(self, name: str, predictions, val_accuracy=None, *, idempotency_key: str | None = None) -> dict:
        """Submit predictions (a mapping, a CSV path/bytes, a Series or DataFrame); returns the signal.

        A CSV file (a path or bytes) is sent as it is (``text/csv``): the server checks it
        and names the row and column of a problem.  ``idempotency_key``: the key of an earlier
        try whose answer was lost (default: a new random one); every retry sends the same."""
        import uuid

        from .service import check_idempotency_key

        key = check_idempotency_key(idempotency_key) if idempotency_key is not None else str(uuid.uuid4())
        if isinstance(predictions, (str, os.PathLike, bytes, bytearray)):
            data, _ = read_bytes(predictions, parameter="predictions", max_bytes=files.MAX_FILE_BYTES)
            query = {} if val_accuracy is None else {"val_accuracy": repr(float(val_accuracy))}
            return self._request("POST", self._url(name, "/submissions", query), csv=data, key=key)
        if isinstance(predictions, dict) and set(map(type, predictions)) == {str}:
            body = {"predictions": predictions, "val_accuracy": val_accuracy}  # the server checks every value
            return self._request("POST", self._url(name, "/submissions"), body, key=key)
        preds = files.read_predictions(predictions)
        body = {"predictions": dict(zip(preds.ids.tolist(), preds.values.tolist())), "val_accuracy": val_accuracy}
        if len(body["predictions"]) != preds.ids.size:
            seen, k = set(), 0
            for k, i in enumerate(preds.ids.tolist()):  # report the first repeated id like the server would
                if i in seen:
                    break
                seen.add(i)
            raise InputError("id", "unique, each id once", preds.ids[k], location=preds.where(k))
        return self._request("POST", self._url(name, "/submissions"), body, key=key)

    def status(self, name: str) -> dict:
        return self._request("GET", self._url(name))

    def issue_token(self, name: str, tenant: str) -> dict:
        return self._request("POST", self._url(name, "/tokens"), {"tenant": check_tenant(tenant)})

    def revert(self, name: str) -> dict:
        return self._request("POST", self._url(name, "/revert"), {})

    def retire(self, name: str) -> dict:
        return self._request("POST", self._url(name, "/retire"), {})

    def export(self, name: str, format: str = "csv") -> dict:
        return self._request("GET", self._url(name, "/export", {"format": format}))

    def labels(self, name: str) -> str:
        return self._request("GET", self._url(name, "/labels"), raw_text=True)

    def list(self) -> list:
        return self._request("GET", self._url(None))["testsets"]


def _retry_after(header, default: float) -> float:
    """Seconds a 503's ``Retry-After`` asks for (a number; at most 10), else ``default``."""
    try:
        return min(max(float(header), 0.0), 10.0)
    except (TypeError, ValueError):
        return default


def _error(status: int, payload: bytes) -> Exception:
    try:
        message = json.loads(payload.decode("utf-8")).get("error") or f"HTTP {status}"
    except (ValueError, AttributeError):
        message = f"HTTP {status}"
    if status == 401:
        return Unauthorized(message)
    if status == 403:
        return Forbidden(message)
    if status == 404:
        return _RemoteNotFound(message)
    if status == 409:
        return Refused(message)
    if status in (400, 413, 422):
        return RemoteError(message, status)
    error = ServiceError(message)
    error.status = status
    return error
