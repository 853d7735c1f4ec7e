"""Reading what a person uploads or names on the command line: one set of rules for every page.

Every file the dashboard and the CLI accept (development traces, loss files, run files,
modification traces, commit traces) goes through :func:`read_text`, so all of them share
the same guarantees: a size limit checked before parsing, text that must be UTF-8 (with
the line and byte of the first bad byte), a clear word for spreadsheets and UTF-16 files,
and a byte-order mark removed.  Nothing read here is ever evaluated as code.
"""
from __future__ import annotations

import os

from ._validation import InputError, raw

__all__ = ["MAX_UPLOAD_BYTES", "read_text", "read_bytes", "decode_text", "check_size", "human_bytes"]

#: The largest file accepted anywhere (10 MiB).
MAX_UPLOAD_BYTES = 10 * 1024 * 1024


def human_bytes(size: int) -> str:
    """1536 -> '1.5 KiB'."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB".replace(".0 MiB", " MiB")
    if size >= 1024:
        return f"{size / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{size} bytes"


def check_size(size: int, max_bytes: int = MAX_UPLOAD_BYTES, parameter: str = "file") -> None:
    """Refuse content over ``max_bytes`` (before parsing it)."""
    if size > max_bytes:
        shown = human_bytes(size)
        if not shown.endswith(" bytes"):
            shown += f" ({size:,} bytes)"
        raise InputError(parameter, f"a file of at most {human_bytes(max_bytes)}", raw(shown))


def decode_text(data: bytes, parameter: str = "file", what: str = "CSV") -> str:
    """UTF-8 text of ``data`` without a byte-order mark, or an :class:`InputError` saying where it is not."""
    if data.startswith(b"PK\x03\x04"):
        raise InputError(parameter, f"a {what} text file (save a spreadsheet as CSV, UTF-8)",
                         raw("a ZIP archive (an .xlsx workbook?)"))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(parameter, "UTF-8 text (save the file as CSV UTF-8)", raw("UTF-16 text"), location="byte 1")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = data.count(b"\n", 0, start) + 1
        col = start - (data.rfind(b"\n", 0, start) + 1) + 1
        bad = data[start:exc.end].hex(" ")
        hint = "CSV UTF-8" + (" or JSON" if "JSON" in what else "")
        raise InputError(parameter, f"UTF-8 text (save the file as {hint})",
                         raw(f"byte(s) {bad} that are not UTF-8"), location=f"line {line}, byte {col}") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_bytes(source, *, parameter: str = "file", max_bytes: int = MAX_UPLOAD_BYTES) -> tuple[bytes, str]:
    """``(content, display name)`` of a path, bytes (an upload) or an open file, size-checked."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "uploaded file"
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        name = os.path.basename(str(getattr(source, "name", "") or "")) or "file"
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise InputError(parameter, "an existing file", raw(repr(path)))
        check_size(os.path.getsize(path), max_bytes, parameter)
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
        name = os.path.basename(path)
    else:
        raise InputError(parameter, "a path, bytes or a file object", raw(type(source).__name__))
    check_size(len(data), max_bytes, parameter)
    return data, name


def read_text(source, *, parameter: str = "file", max_bytes: int = MAX_UPLOAD_BYTES,
              what: str = "CSV") -> tuple[str, str]:
    """``(text, display name)``: :func:`read_bytes` then :func:`decode_text`."""
    data, name = read_bytes(source, parameter=parameter, max_bytes=max_bytes)
    return decode_text(data, parameter, what), name
