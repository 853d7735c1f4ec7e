"""Tools for the request-bounds tests (issue 23): a raw HTTP client and the server's memory.

- :class:`Raw` sends one request over a plain socket, with a body given as an iterator of
  chunks (fixed ``Content-Length`` or ``Transfer-Encoding: chunked``), and *reads while it
  sends*: an answer that arrives before the body is finished is seen (with how many body
  bytes had been sent), as a careful client or a proxy would see it.
- :class:`Memory` reads a process's resident memory from ``/proc``: ``reset()`` sets its
  peak (``VmHWM``) back to the current size (``clear_refs``), ``growth()`` is the peak
  growth since then, in bytes.

Standard library only; Linux (``/proc``).
"""
from __future__ import annotations

import json
import select
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlparse

MIB = 1024 * 1024


@dataclass
class Answer:
    status: int | None  # None: the connection closed with no status line
    headers: dict = field(default_factory=dict)
    body: bytes = b""
    sent: int = 0  # body bytes sent before the answer (or the end)
    seconds: float = 0.0
    closed_early: bool = False  # the server closed the connection while the body was still being sent

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class Raw:
    """One request per call, over a fresh socket to ``base`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, base: str, timeout: float = 120.0):
        parsed = urlparse(base)
        self.host, self.port, self.timeout = parsed.hostname, parsed.port, timeout

    def request(self, method: str, path: str, headers: dict | None = None, body=None, *, chunked: bool = False,
                length: int | None = None) -> Answer:
        """``body``: bytes or an iterable of byte chunks; ``length``: the Content-Length to declare
        (default: the length of ``body`` when it is bytes; chunked bodies declare none)."""
        chunks = [body] if isinstance(body, (bytes, bytearray)) else (body or [])
        if length is None and isinstance(body, (bytes, bytearray)) and not chunked:
            length = len(body)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if chunked:
            lines.append("Transfer-Encoding: chunked")
        elif length is not None:
            lines.append(f"Content-Length: {length}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        start = time.monotonic()
        with socket.create_connection((self.host, self.port), timeout=self.timeout) as sock:
            received, sent, closed_early = bytearray(), 0, False
            try:
                sock.sendall(head)
                for chunk in chunks:
                    data = (f"{len(chunk):x}\r\n".encode() + bytes(chunk) + b"\r\n") if chunked else chunk
                    if not self._send(sock, data, received):
                        break
                    sent += len(chunk)
                else:
                    if chunked:
                        self._send(sock, b"0\r\n\r\n", received)
            except (BrokenPipeError, ConnectionResetError):
                closed_early = True
            self._read_all(sock, received)
        answer = _parse(bytes(received))
        answer.sent, answer.seconds, answer.closed_early = sent, time.monotonic() - start, closed_early
        return answer

    def _send(self, sock, data: bytes, received: bytearray) -> bool:
        """Send ``data``, reading whatever the server answers meanwhile; False once an answer is complete."""
        view = memoryview(data)
        while view:
            readable, writable, _ = select.select([sock], [sock], [], self.timeout)
            if readable:
                piece = sock.recv(65536)
                if not piece:
                    raise ConnectionResetError("closed")
                received += piece
                if _complete(received):
                    return False
            if writable:
                n = sock.send(view[:262144])
                view = view[n:]
        return True

    def _read_all(self, sock, received: bytearray) -> None:
        sock.settimeout(self.timeout)
        while not _complete(received):
            try:
                piece = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                return
            if not piece:
                return
            received += piece


def _complete(received: bytearray) -> bool:
    end = received.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = received[:end].decode("latin-1").lower()
    for line in head.split("\r\n")[1:]:
        if line.startswith("content-length:"):
            return len(received) >= end + 4 + int(line.split(":", 1)[1])
    return False


def _parse(data: bytes) -> Answer:
    if not data.startswith(b"HTTP/"):
        return Answer(status=None, body=data)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
    if "content-length" in headers:
        body = body[: int(headers["content-length"])]
    return Answer(status=status, headers=headers, body=body)


class Memory:
    """Resident memory of process ``pid`` (Linux ``/proc``)."""

    def __init__(self, pid: int):
        self.pid = pid
        self._base = 0

    def _status(self, key: str) -> int:
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise KeyError(key)

    def rss(self) -> int:
        return self._status("VmRSS")

    def reset(self) -> None:
        """Set the peak back to the current size; growth is measured from here."""
        with open(f"/proc/{self.pid}/clear_refs", "w") as fh:
            fh.write("5")
        self._base = self.rss()

    def growth(self) -> int:
        """Peak resident size since :meth:`reset`, minus the size at the reset (bytes)."""
        return self._status("VmHWM") - self._base


def blank_lines_body(valid_csv: bytes, blank_bytes: int, chunk: int = MIB):
    """``valid_csv`` then ``blank_bytes`` newlines, as chunks (never held whole)."""
    yield valid_csv
    left = blank_bytes
    while left > 0:
        n = min(chunk, left)
        yield b"\n" * n
        left -= n


def filler(total: int, chunk: int = MIB, byte: bytes = b"x"):
    left = total
    while left > 0:
        n = min(chunk, left)
        yield byte * n
        left -= n


def keep_alive_gets(base: str, path: str, token: str | None, count: int, threads: int = 4) -> tuple[list, float]:
    """``count`` GETs of ``path`` over ``threads`` keep-alive connections: (statuses, seconds)."""
    import http.client
    import threading

    parsed = urlparse(base)
    statuses, lock = [], threading.Lock()
    per = [count // threads + (1 if k < count % threads else 0) for k in range(threads)]

    def run(n: int) -> None:
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        got = []
        for _ in range(n):
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            got.append(response.status)
        conn.close()
        with lock:
            statuses.extend(got)

    workers = [threading.Thread(target=run, args=(n,)) for n in per]
    start = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return statuses, time.monotonic() - start


class Flood:
    """``with Flood(base, path, tokens, threads=8) as flood:`` keeps sending GETs with made-up tokens;
    ``flood.sent`` and ``flood.statuses`` (a count per status) when it ends."""

    def __init__(self, base: str, path: str, tokens: list, threads: int = 8):
        import threading

        self.base, self.path, self.tokens, self.threads = base, path, tokens, threads
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.statuses: dict = {}
        self._workers = [threading.Thread(target=self._run, args=(k,), daemon=True) for k in range(threads)]

    def _run(self, k: int) -> None:
        import http.client

        parsed = urlparse(self.base)
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        i = k
        while not self._stop.is_set():
            token = self.tokens[i % len(self.tokens)]
            i += self.threads
            try:
                conn.request("GET", self.path, headers={"Authorization": f"Bearer {token}"})
                response = conn.getresponse()
                response.read()
                status = response.status
            except OSError:
                conn.close()
                conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
                status = None
            with self._lock:
                self.statuses[status] = self.statuses.get(status, 0) + 1
        conn.close()

    @property
    def sent(self) -> int:
        with self._lock:
            return sum(self.statuses.values())

    def __enter__(self):
        for w in self._workers:
            w.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for w in self._workers:
            w.join(timeout=120)
