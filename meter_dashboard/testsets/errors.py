"""The errors of guarded test sets: each says why, in one line, and carries its HTTP status.

:class:`NotFound` is an :class:`~meter_dashboard.core.validation.InputError` (the CLI exits 2);
the others are :class:`ServiceError` (the CLI exits 1 for 409 and 429).  No message ever holds a
label, a score or a token.
"""
from __future__ import annotations

from ..core.validation import InputError

__all__ = ["ServiceError", "Refused", "RateLimited", "KeyReused", "Abandoned", "Unauthorized", "Forbidden",
           "NotFound"]


class ServiceError(Exception):
    """An operation the service will not do; ``status`` is its HTTP status code, which each kind names in
    its class line (``class Refused(ServiceError, status=409)``)."""

    status = 500

    def __init_subclass__(cls, status: int | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status = status


class Refused(ServiceError, status=409):
    """Refused by the rules of the test set (budget used up, retired, an unplanned revert)."""


class RateLimited(ServiceError, status=429):
    """A tenant over the test set's submissions per hour (set at creation); ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = int(retry_after)


class KeyReused(ServiceError, status=422):
    """An ``Idempotency-Key`` already used for a different submission (422)."""


class Abandoned(ServiceError, status=503):
    """A submission given up before its transaction committed (the server is stopping): nothing spent (503)."""


class Unauthorized(ServiceError, status=401):
    """A missing or wrong token."""


class Forbidden(ServiceError, status=403):
    """A valid token that may not do this."""


class NotFound(InputError):
    """No test set of that name (an :class:`InputError`: the CLI exits 2)."""

    status = 404
