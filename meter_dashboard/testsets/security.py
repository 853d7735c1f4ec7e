"""Tokens for guarded test sets: random, shown once, stored as salted scrypt hashes.

A token reads ``mdt_<key id>_<secret>``: the key id (16 hex digits, public) finds the
stored hash without scanning; the secret (43 URL-safe characters, 256 random bits from
:mod:`secrets`) is never stored, only ``scrypt(secret, salt)`` with a fresh 16-byte
salt (:func:`hashlib.scrypt`, N = 2**14, r = 8, p = 1).  Checks compare digests in
constant time (:func:`hmac.compare_digest`), and a malformed or unknown token costs the
same hash as a wrong one, so timing does not tell them apart.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

__all__ = ["new_token", "hash_secret", "verify_secret", "split_token", "TOKEN_PREFIX", "MAX_TOKEN_CHARS"]

TOKEN_PREFIX = "mdt"
#: Longer Authorization values are refused before any work is done.
MAX_TOKEN_CHARS = 200

_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}
_SALT_BYTES = 16
_DIGEST_BYTES = 32
_TOKEN_RE = re.compile(r"^mdt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
_DUMMY_HASH = None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_token() -> tuple[str, str, str]:
    """A fresh token: ``(token, key_id, hashed)``; show ``token`` once, store ``key_id`` and ``hashed``."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return f"{TOKEN_PREFIX}_{key_id}_{secret}", key_id, hash_secret(secret)


def hash_secret(secret: str, *, salt: bytes | None = None) -> str:
    """``scrypt$N$r$p$salt$digest`` of ``secret`` with a random salt."""
    salt = secrets.token_bytes(_SALT_BYTES) if salt is None else salt
    digest = hashlib.scrypt(secret.encode("utf-8"), salt=salt, dklen=_DIGEST_BYTES, **_SCRYPT)
    return "$".join(["scrypt", str(_SCRYPT["n"]), str(_SCRYPT["r"]), str(_SCRYPT["p"]), _b64(salt), _b64(digest)])


def verify_secret(secret: str | None, stored: str | None) -> bool:
    """Whether ``secret`` matches ``stored`` (constant-time; ``None`` inputs still cost one hash)."""
    global _DUMMY_HASH
    if stored is None or secret is None:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hash_secret("x" * 43)
        stored, secret, ok = _DUMMY_HASH, "y" * 43, False
    else:
        ok = True
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = _unb64(digest)
        actual = hashlib.scrypt(secret.encode("utf-8"), salt=_unb64(salt), dklen=len(expected),
                                n=int(n), r=int(r), p=int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected) and ok


def split_token(token) -> tuple[str, str] | None:
    """``(key_id, secret)`` of a well-formed token, else None (length bounded before matching)."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        return None
    match = _TOKEN_RE.match(token.strip())
    if match is None:
        return None
    return match.group(1), match.group(2)
