"""Reading what a person uploads or names on the command line: one set of rules for every page.

Every file the dashboard and the CLI accept (development traces, loss files, run files,
modification traces, commit traces) goes through :func:`read_text`, so all of them share
the same guarantees: a size limit checked before parsing, text that must be UTF-8 (with
the line and byte of the first bad byte), a clear word for spreadsheets and UTF-16 files,
and a byte-order mark removed.  Nothing read here is ever evaluated as code.

The limits every page shares also live here (no Panel in this module):

- :data:`MAX_UPLOAD_BYTES` - the largest file a page accepts (10 MiB);
- :data:`MAX_FILE_BYTES` - the largest file read from disk by the CLI or a script (64 MiB,
  about 1.5 million trace steps: parsing stays under 1 GiB of memory);
- :data:`UPLOAD_CHUNK_BYTES` - the chunk a browser sends per websocket message, far below
  :data:`WEBSOCKET_MAX_MESSAGE_BYTES` (Bokeh's cap: a larger message closes the session);
- :class:`ChunkedUpload` - the server side of a chunked upload: it refuses a file at the
  first chunk that passes the limit and bounds what one session may buffer;
- :func:`client_size_limit` - the same limit in the form a browser file picker checks
  before anything is sent (FilePond's ``maxFileSize``: ``"10486KB"``);
- :func:`check_csv_shape` - the shape of a CSV text, checked in one vectorized pass before
  any reader builds rows, arrays or DataFrames: every line at most :data:`MAX_ROW_BYTES`,
  every row at most :data:`MAX_FIELDS` fields, and no rows so much narrower than the widest
  (a reader that pads short rows to the widest never pads more cells than the file has
  bytes): a wide header of empty fields or a 1 MiB row is refused in milliseconds, naming
  the line and the limit, with memory a small multiple of the text.
"""
from __future__ import annotations

import os

from .validation import InputError, raw

__all__ = ["MAX_UPLOAD_BYTES", "MAX_FILE_BYTES", "MAX_ROW_BYTES", "MAX_FIELDS", "check_csv_shape", "UPLOAD_CHUNK_BYTES", "WEBSOCKET_MAX_MESSAGE_BYTES",
           "MAX_BUFFERED_BYTES", "ChunkedUpload", "client_size_limit", "fits_one_message",
           "read_text", "read_bytes", "decode_text", "check_size", "human_bytes"]

#: The largest file a page accepts (10 MiB).
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
#: The largest file read from disk (CLI, scripts, notebooks): 64 MiB.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Bytes per upload chunk (one websocket message each).
UPLOAD_CHUNK_BYTES = 512 * 1024
#: Bokeh's default cap on one websocket message (``websocket_max_message_size``): 20 MiB.  A
#: larger message closes the connection and the session dies, so whole-file uploads
#: (``pn.widgets.FileInput`` sends the file base64-encoded in one message) must stay below it.
WEBSOCKET_MAX_MESSAGE_BYTES = 20 * 1024 * 1024
#: The most one session may hold of files still arriving: one file at the limit plus a chunk.
MAX_BUFFERED_BYTES = MAX_UPLOAD_BYTES + UPLOAD_CHUNK_BYTES
#: The longest line of a CSV file (256 KiB): above the csv module's 131,072-character cell
#: (refused with its own message), far above any real row.
MAX_ROW_BYTES = 256 * 1024
#: The most fields in one CSV row: 16,384 (a modification trace has up to 10,001 columns).
MAX_FIELDS = 16_384
#: Cells a reader may pad beyond the file's own bytes (short rows are padded to the widest).
PADDING_SLACK = 64 * 1024
#: :func:`check_csv_shape` counts delimiters in slices of this many bytes.
_SCAN_BYTES = 1 << 20


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


def fits_one_message(size: int) -> bool:
    """Whether a file of ``size`` bytes fits one websocket message once base64-encoded (FileInput)."""
    return 4 * ((int(size) + 2) // 3) + 64 * 1024 <= WEBSOCKET_MAX_MESSAGE_BYTES


def client_size_limit(max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """``max_bytes`` as a browser-side limit for FilePond (``FileDropper(max_file_size=...)``).

    FilePond counts 1 KB as 1,000 bytes and accepts whole numbers only; rounding up keeps the
    browser's check no stricter than the server's (:class:`ChunkedUpload` enforces the exact limit).
    """
    return f"{-(-int(max_bytes) // 1000)}KB"


class ChunkedUpload:
    """The server's side of a chunked upload: bounded before the file is complete.

    Feed every chunk the browser sends to :meth:`add`; it returns the file's bytes when
    the last chunk arrived (``None`` before).  It raises :class:`InputError`

    - at the first chunk whose declared total (``total_chunks`` of ``chunk_bytes``) or
      received bytes pass ``max_bytes`` - the rest of that file is then ignored;
    - for chunks out of order (a file must arrive chunk 1, 2, 3, ...).

    A new file (chunk 1) drops any file still arriving, so one session never buffers more
    than ``max_bytes`` plus one chunk (:data:`MAX_BUFFERED_BYTES`), even when a browser
    starts uploads it never finishes.

    Parameters
    ----------
    max_bytes : int
        The largest file accepted.
    chunk_bytes : int
        The chunk size the browser was told to use.
    parameter : str
        The name in messages (the widget's label, e.g. ``"trace"``).
    """

    def __init__(self, max_bytes: int = MAX_UPLOAD_BYTES, chunk_bytes: int = UPLOAD_CHUNK_BYTES,
                 parameter: str = "file"):
        self.max_bytes = int(max_bytes)
        self.chunk_bytes = int(chunk_bytes)
        self.parameter = parameter
        self._name: str | None = None
        self._parts: list = []
        self._received = 0
        self._refused: set = set()

    @property
    def buffered(self) -> int:
        """Bytes held for the file still arriving."""
        return self._received

    @property
    def receiving(self) -> str | None:
        """The name of the file still arriving (None when idle)."""
        return self._name

    def discard(self) -> None:
        """Drop the file still arriving."""
        self._name, self._parts, self._received = None, [], 0

    def _refuse(self, name: str, rule: str, got) -> None:
        self.discard()
        self._refused.add(name)
        raise InputError(self.parameter, rule, got)

    def add(self, name: str, chunk: int, total_chunks: int, data) -> bytes | None:
        """Take one chunk (1-based ``chunk`` of ``total_chunks``); the whole file after the last one."""
        size = len(data)
        limit = f"a file of at most {human_bytes(self.max_bytes)}"
        if chunk == 1:
            self.discard()
            self._refused.discard(name)
            declared_min = (int(total_chunks) - 1) * self.chunk_bytes  # the browser's chunks are full but the last
            if declared_min > self.max_bytes:
                self._refuse(name, limit, raw(f"{name!r}, more than {human_bytes(declared_min)}"))
            self._name = name
        elif name in self._refused:
            return None  # the rest of a refused file: ignored, never buffered
        elif name != self._name or chunk != len(self._parts) + 1:
            self._refuse(name, "sent in order, chunk 1, 2, 3, ... (upload the file again)",
                         raw(f"chunk {chunk} of {name!r}"))
        if self._received + size > self.max_bytes:
            self._refuse(name, limit, raw(f"{name!r}, more than {human_bytes(self._received + size)}"))
        self._parts.append(bytes(data))
        self._received += size
        if chunk < int(total_chunks):
            return None
        content = b"".join(self._parts)
        self.discard()
        return content


def check_csv_shape(text, *, parameter: str = "file", delimiter: str = ",", row: str = "line",
                    max_row_bytes: int = MAX_ROW_BYTES, max_fields: int = MAX_FIELDS,
                    empty_rows: bool = False) -> None:
    """Refuse a CSV text whose shape would cost more than its size, before it is parsed.

    ``text`` is ``str`` or UTF-8 bytes.  One vectorized pass over the bytes (no row is built)
    finds each line's length and its fields (``delimiter`` counted; one inside quotes counts
    too, which only ever overestimates) and raises :class:`InputError` naming the line
    (``row`` is the word for it: ``"line"``, or ``"row"`` where a reader counts rows like
    lines) and the limit, for

    - a line longer than ``max_row_bytes`` bytes;
    - a row of more than ``max_fields`` fields;
    - rows so much narrower than the widest that padding them to it would make more cells
      than the text has bytes (plus :data:`PADDING_SLACK`): a wide header of empty fields
      above narrow rows.  Empty lines count as rows only with ``empty_rows`` (a reader that
      keeps them: most skip them).

    Line endings ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end one line.  Memory: the text's
    bytes, a one-byte mask, four integers per line and the positions of the delimiters of
    one slice of :data:`_SCAN_BYTES` at a time.  ``parameter`` is not named: the row is.
    """
    import numpy as np

    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    n = len(data)
    if n == 0:
        return
    buf = np.frombuffer(data, dtype=np.uint8)
    index = np.int32 if n < 2**31 - 1 else np.int64
    breaks = np.flatnonzero((buf == 10) | (buf == 13)).astype(index)
    starts = np.empty(breaks.size + 1, dtype=index)
    starts[0], starts[1:] = 0, breaks + 1
    ends = np.empty_like(starts)
    ends[:-1], ends[-1] = breaks, n
    # the empty segment between the "\r" and "\n" of a CRLF, and the one after a last line break, are no lines
    gap = np.zeros(starts.size, dtype=bool)
    gap[1:-1] = (buf[breaks[:-1]] == 13) & (breaks[1:] == breaks[:-1] + 1) & (buf[breaks[1:]] == 10)
    gap[-1] = starts[-1] == n

    def line_of(i: int) -> int:
        return i + 1 - int(np.count_nonzero(gap[:i]))

    lengths = ends - starts
    long = np.flatnonzero(lengths > max_row_bytes)
    if long.size:
        i = int(long[0])
        raise InputError("row", f"at most {max_row_bytes:,} bytes long ({human_bytes(max_row_bytes)})",
                         raw(f"{int(lengths[i]):,} bytes"), location=f"{row} {line_of(i)}")
    if int(lengths.max()) < max_fields and int(lengths.max()) * (starts.size - 1) <= n + PADDING_SLACK:
        return  # too few delimiters in any line to break either rule
    fields = np.ones(starts.size, dtype=index)
    mark = ord(delimiter)
    for a in range(0, n, _SCAN_BYTES):  # delimiters slice by slice: bounded memory for a file of commas
        b = min(n, a + _SCAN_BYTES)
        at = np.flatnonzero(buf[a:b] == mark)
        if at.size:
            first = int(np.searchsorted(breaks, index(a)))  # the line holding byte a
            line = np.searchsorted(breaks, (at + a).astype(index)) - first
            fields[first:first + int(line[-1]) + 1] += np.bincount(line)
    wide = np.flatnonzero(fields > max_fields)
    if wide.size:
        i = int(wide[0])
        raise InputError("row", f"at most {max_fields:,} fields", raw(f"{int(fields[i]):,} fields"),
                         location=f"{row} {line_of(i)}")
    keep = np.flatnonzero(~gap if empty_rows else ~gap & (ends > starts))
    widths = fields[keep]
    if not widths.size:
        return
    widest = int(widths.max())
    missing = widest * widths.size - int(widths.sum(dtype=np.int64))
    if missing > n + PADDING_SLACK:
        w = int(keep[int(np.argmax(widths))])
        k = int(keep[int(np.flatnonzero(widths < widest)[0])])
        raise InputError("row", f"as wide as {row} {line_of(w)} ({widest:,} fields): padding the narrower rows "
                         f"to it would make {widest * widths.size:,} cells of a {human_bytes(n)} file",
                         raw(f"{int(fields[k]):,} field" + ("s" if fields[k] != 1 else "")),
                         location=f"{row} {line_of(k)}")
