"""Start and stop a real ``meter-dashboard serve`` process on a store (for HTTP and browser tests)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``base`` URL, ``log`` path, ``log_text()``, ``stop()``."""

    def __init__(self, store_url: str, log_dir: Path, pages: str | None = None, timeout: float = 120,
                 ready_path: str = "/api/testsets"):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log = log_dir / f"serve-{self.port}.log"
        cmd = [sys.executable, "-m", "meter_dashboard", "serve", "--port", str(self.port), "--address", "127.0.0.1",
               "--no-show", "--allow-websocket-origin", f"127.0.0.1:{self.port}", "--store", store_url]
        if pages:
            cmd += ["--pages", pages]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._fh = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stdout=self._fh, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}: {self.log_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.base + ready_path, timeout=5) as r:
                    if r.status == 200:
                        json.loads(r.read())
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("serve did not start in time")
            time.sleep(0.3)

    def log_text(self) -> str:
        if not self._fh.closed:
            self._fh.flush()
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self._fh.close()
