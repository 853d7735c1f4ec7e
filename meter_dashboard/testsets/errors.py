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
    """An operation the service will not do; ``status`` is its HTTP status code."""

    status = 500


class Refused(ServiceError):
    """Refused by the rules of the test set (budget used up, retired, an unplanned revert)."""

    status = 409


class RateLimited(ServiceError):
    """A tenant over the test set's submissions per hour (set at creation); ``retry_after`` in seconds."""

    status = 429

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = int(retry_after)


class KeyReused(ServiceError):
    """An ``Idempotency-Key`` already used for a different submission (422)."""

    status = 422


class Abandoned(ServiceError):
    """A submission given up before its transaction committed (the server is stopping): nothing spent (503)."""

    status = 503


class Unauthorized(ServiceError):
    """A missing or wrong token."""

    status = 401


class Forbidden(ServiceError):
    """A valid token that may not do this."""

    status = 403


class NotFound(InputError):
    """No test set of that name (an :class:`InputError`: the CLI exits 2)."""

    status = 404
