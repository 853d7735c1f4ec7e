"""A throwaway PostgreSQL cluster for tests, from Debian's ``postgresql`` package.

``initdb`` in a temporary directory, a free port, the unix socket inside the directory,
``trust`` authentication on 127.0.0.1 only; as an unprivileged user (``nobody``) when
the tests run as root (CI does), the directory owned by that user.  The binaries are
found by globbing ``/usr/lib/postgresql/*/bin`` (the newest version), or on ``PATH``.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time

BIN_GLOB = "/usr/lib/postgresql/*/bin"


def find_bindir() -> str | None:
    """The directory holding initdb, pg_ctl and postgres (None when PostgreSQL is not installed)."""
    def version(path):
        name = path.rstrip("/").split("/")[-2]
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    candidates = sorted(glob.glob(BIN_GLOB), key=version, reverse=True)
    for bindir in candidates:
        if all(os.access(os.path.join(bindir, b), os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            return bindir
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl") and shutil.which("postgres"):
        return os.path.dirname(initdb)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A running throwaway cluster: ``url(database)``, ``create_database(name)``, ``stop()``."""

    def __init__(self, bindir: str):
        self.bindir = bindir
        self.root = tempfile.mkdtemp(prefix="md-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = _free_port()
        self.user = None
        self.prefix: list = []
        if os.geteuid() == 0:  # postgres refuses to run as root
            self.user = "nobody"
            self.prefix = ["runuser", "-u", self.user, "--"]
            import pwd

            entry = pwd.getpwnam(self.user)
            os.chmod(self.root, 0o700)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run(["initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   f"-c max_connections=200 -c shared_buffers=32MB")
        self._run(["pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-o", options, "-w",
                   "-t", "60", "start"])

    def _run(self, args) -> None:
        cmd = self.prefix + [os.path.join(self.bindir, args[0])] + args[1:]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root)
        if proc.returncode != 0:
            log = ""
            try:
                with open(os.path.join(self.root, "log")) as fh:
                    log = fh.read()[-2000:]
            except OSError:
                pass
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]} {log}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(["pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"])
        except Exception:  # noqa: BLE001 - best effort; the directory goes anyway
            pass
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(retries: int = 3) -> Cluster:
    bindir = find_bindir()
    if bindir is None:
        raise FileNotFoundError("PostgreSQL binaries (initdb, pg_ctl, postgres) not found under "
                                f"{BIN_GLOB} or on PATH: apt-get install postgresql")
    last = None
    for _ in range(retries):  # a port taken between choosing and binding: try another
        try:
            return Cluster(bindir)
        except RuntimeError as exc:
            last = exc
            time.sleep(0.5)
    raise last
