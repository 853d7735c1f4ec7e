"""Tokens for guarded test sets: random, shown once, stored as SHA-256 digests.

A token reads ``mdt_<key id>_<secret>``: the key id (16 hex digits, public) finds the
stored digest without scanning; the secret (43 URL-safe characters, 256 random bits from
:mod:`secrets`) is never stored, only ``sha256$<digest>``.  A 256-bit random secret is
not a password: nobody can search its space, so a slow salted hash (scrypt) buys nothing
and cost about 70 ms of CPU per request, which made a flood of made-up tokens a denial of
service.  Checks compare digests in constant time (:func:`hmac.compare_digest`); a
malformed or unknown token costs the same digest as a wrong one.

Stores written before (``scrypt$N$r$p$salt$digest``) keep working: such a token is
checked with scrypt once, and the service then rewrites its stored hash as SHA-256
(:func:`needs_rehash`, in place, in the store).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

__all__ = ["new_token", "hash_secret", "verify_secret", "needs_rehash", "split_token", "scrypt_hash",
           "TOKEN_PREFIX", "MAX_TOKEN_CHARS"]

TOKEN_PREFIX = "mdt"
#: Longer Authorization values are refused before any work is done.
MAX_TOKEN_CHARS = 200

_SCHEME = "sha256"
_TOKEN_RE = re.compile(r"^mdt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
_DUMMY = hashlib.sha256(b"meter-dashboard: no such token").digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_token() -> tuple[str, str, str]:
    """A fresh token: ``(token, key_id, hashed)``; show ``token`` once, store ``key_id`` and ``hashed``."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return f"{TOKEN_PREFIX}_{key_id}_{secret}", key_id, hash_secret(secret)


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


def hash_secret(secret: str) -> str:
    """``sha256$<digest>`` of ``secret`` (URL-safe base64)."""
    return f"{_SCHEME}${_b64(_digest(secret))}"


def scrypt_hash(secret: str, *, salt: bytes | None = None) -> str:
    """The former scheme, ``scrypt$N$r$p$salt$digest`` (N = 2**14): still verified, never written."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.scrypt(secret.encode("utf-8"), salt=salt, dklen=32, n=2 ** 14, r=8, p=1)
    return "$".join(["scrypt", str(2 ** 14), "8", "1", _b64(salt), _b64(digest)])


def verify_secret(secret: str | None, stored: str | None) -> bool:
    """Whether ``secret`` matches ``stored`` (constant time; ``None`` inputs still cost one digest)."""
    if secret is None or stored is None:
        hmac.compare_digest(_digest("x" * 43), _DUMMY)
        return False
    try:
        scheme, rest = stored.split("$", 1)
        if scheme == _SCHEME:
            return hmac.compare_digest(_digest(secret), _unb64(rest))
        if scheme == "scrypt":
            n, r, p, salt, digest = rest.split("$")
            expected = _unb64(digest)
            actual = hashlib.scrypt(secret.encode("utf-8"), salt=_unb64(salt), dklen=len(expected),
                                    n=int(n), r=int(r), p=int(p))
            return hmac.compare_digest(actual, expected)
    except (ValueError, TypeError):
        return False
    return False


def needs_rehash(stored: str | None) -> bool:
    """Whether a stored hash is of the former scheme (rewrite it once its token is verified)."""
    return isinstance(stored, str) and not stored.startswith(_SCHEME + "$")


def split_token(token) -> tuple[str, str] | None:
    """``(key_id, secret)`` of a well-formed token, else None (length bounded before matching)."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        return None
    match = _TOKEN_RE.match(token.strip())
    if match is None:
        return None
    return match.group(1), match.group(2)
