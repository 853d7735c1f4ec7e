"""The one store module of guarded test sets: SQLAlchemy 2 Core tables, engines, transactions.

Everything a guarded test set must remember outlives a page or a process, so it lives
in a database reached only through this module (the service layer above it decides
what to write; views never come here directly):

- ``testsets``: one row per test set (its plan as JSON, size, status, steps used and a
  ``version`` bumped by every change, which pages poll to refresh);
- ``labels``: the hidden labels (ids and class codes, compressed), written once;
- ``tokens``: digests of the admin and tenant tokens (never the tokens; see :mod:`.security`);
- ``submissions``: the history, one row per step, ``UNIQUE (testset_id, step)``;
- ``active_predictions``: ease.ml/ci only, the last accepted model's predictions;
- ``idempotency``: a submission's ``Idempotency-Key`` (per test set and tenant), the step it
  spent and the answer given, written in the submission's transaction (a retry gets that answer).

Schema changes: tables added later are created on first use (``create_all``); a column added
later is added to an existing store when it is opened (:func:`_migrate`, in one write
transaction): ``md_testsets.released_at`` (stores written before it: a retired test set was
released at retirement, so it is set to ``retired_at``).

Concurrency (ease.ml/meter's budget must never be overspent): every change runs in one
transaction that first locks the test set's row.  SQLite: ``BEGIN IMMEDIATE`` takes the
database's write lock at the start of the transaction (reads use a plain deferred
``BEGIN``); PostgreSQL: ``SELECT ... FOR UPDATE`` locks the row.  A process killed in
the middle of a transaction leaves nothing behind (the database rolls it back).

Files: a SQLite store is created mode 0600 (owner only) in a directory created mode 0700,
before the database opens it (SQLite gives its -wal and -shm files the same mode); a store
whose file or directory other local users can read gets a warning (:func:`exposure`), once
per process.

URLs: ``sqlite:///PATH`` (the default, :func:`default_url`), or
``postgresql+psycopg://user:pass@host/db`` (the ``postgres`` extra); ``postgresql://``
and ``postgres://`` select psycopg 3 too.  Parameters are hidden from SQLAlchemy's
error messages and logs (``hide_parameters``): labels and token hashes never appear there.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from ..core.validation import InputError

__all__ = [
    "Store",
    "open_store",
    "default_url",
    "configure",
    "display_url",
    "StoreError",
    "metadata",
    "testsets",
    "labels",
    "tokens",
    "submissions",
    "active_predictions",
    "idempotency",
    "ENV_VAR",
    "disk_full",
    "exposure",
]

#: The environment variable that names the store when ``--store`` is not given.
ENV_VAR = "METER_DASHBOARD_STORE"

metadata = MetaData()

testsets = Table(
    "md_testsets", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("mode", String(8), nullable=False),  # 'meter' or 'ci'
    Column("status", String(10), nullable=False, default="active"),  # 'active' or 'retired'
    Column("settings", Text, nullable=False),  # the plan, JSON
    Column("size", Integer, nullable=False),  # n, the labels held
    Column("needed", Integer, nullable=False),  # labels the plan needs
    Column("supported", Text, nullable=True),  # JSON: what the labels support when n < needed
    Column("labels_sha256", String(64), nullable=False),
    Column("steps_used", Integer, nullable=False, default=0),
    Column("active_step", Integer, nullable=True),  # ci: the accepted model (0 = baseline)
    Column("created_at", Float, nullable=False),
    Column("retired_at", Float, nullable=True),
    Column("retired_reason", Text, nullable=True),
    Column("version", Integer, nullable=False, default=1),
    Column("released_at", Float, nullable=True),  # the admin released scores and labels (never automatic)
)

labels = Table(
    "md_labels", metadata,
    Column("testset_id", Integer, ForeignKey("md_testsets.id", ondelete="CASCADE"), primary_key=True),
    Column("ids", LargeBinary, nullable=False),  # zlib("\n".join(ids)), sorted as in the file
    Column("codes", LargeBinary, nullable=False),  # zlib(int32 codes into classes)
    Column("classes", Text, nullable=False),  # JSON list of class names
)

tokens = Table(
    "md_tokens", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("testset_id", Integer, ForeignKey("md_testsets.id", ondelete="CASCADE"), nullable=False),
    Column("key_id", String(32), nullable=False, unique=True),  # the public half of a token
    Column("role", String(8), nullable=False),  # 'admin' or 'tenant'
    Column("tenant", String(64), nullable=True),
    Column("hash", String(200), nullable=False),  # sha256$digest (stores written before: scrypt$N$r$p$salt$digest)
    Column("created_at", Float, nullable=False),
    Column("revoked", Boolean, nullable=False, default=False),
)

submissions = Table(
    "md_submissions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("testset_id", Integer, ForeignKey("md_testsets.id", ondelete="CASCADE"), nullable=False),
    Column("step", Integer, nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("val_accuracy", Float, nullable=True),
    Column("test_accuracy", Float, nullable=False),  # secret while the test set is active
    Column("signal", Integer, nullable=True),  # the regular signal (meter)
    Column("incremental_signal", Integer, nullable=True),
    Column("epsilon", Float, nullable=True),  # eps of the signal the meter reports
    Column("reverted", Boolean, nullable=False, default=False),
    Column("predictions_sha256", String(64), nullable=False),
    Column("ci_n", Float, nullable=True),  # ci: estimates (secret while active)
    Column("ci_o", Float, nullable=True),
    Column("ci_d", Float, nullable=True),
    Column("passed", Boolean, nullable=True),  # ci: the commit's pass/fail
    Column("truth", String(8), nullable=True),  # ci: True / False / Unknown
    UniqueConstraint("testset_id", "step", name="md_submissions_one_row_per_step"),
)

idempotency = Table(
    "md_idempotency", metadata,
    Column("testset_id", Integer, ForeignKey("md_testsets.id", ondelete="CASCADE"), nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("key", String(128), nullable=False),  # the client's Idempotency-Key
    Column("step", Integer, nullable=False),  # the history row it spent
    Column("answer", Text, nullable=False),  # the answer given, JSON (a retry gets it again)
    UniqueConstraint("testset_id", "tenant", "key", name="md_idempotency_one_per_key"),
)

active_predictions = Table(
    "md_active_predictions", metadata,
    Column("testset_id", Integer, ForeignKey("md_testsets.id", ondelete="CASCADE"), primary_key=True),
    Column("step", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)


#: A SQLite store whose disk has less free space than this is reported not writable (a step writes a few pages).
MIN_FREE_BYTES = 1 << 20


class StoreError(RuntimeError):
    """The store cannot be opened or refused an operation (the message never holds secrets).

    ``full``: the store's disk (or database) is full: nothing more can be written."""

    def __init__(self, message: str, full: bool = False):
        super().__init__(message)
        self.full = full


#: SQLite's SQLITE_FULL message, PostgreSQL's disk_full (SQLSTATE 53100) and ENOSPC's text.
_FULL_MARKERS = ("database or disk is full", "no space left on device", "could not extend file", "disk full")


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (a SQLAlchemy error, an ``OSError``) says the disk holding the store is full."""
    import errno

    orig = getattr(exc, "orig", exc)
    if isinstance(orig, OSError) and orig.errno == errno.ENOSPC:
        return True
    if getattr(orig, "sqlstate", None) == "53100" or getattr(orig, "sqlite_errorcode", None) == 13:  # SQLITE_FULL
        return True
    text = str(orig).lower()
    return any(marker in text for marker in _FULL_MARKERS)


# ============================================================================ URLs
_CONFIGURED: list = []


def configure(url: str | None = None) -> str:
    """Make ``url`` this process's default store (``serve --store``); returns the default in force."""
    if url is not None:
        _normalize_url(url)  # refuse a bad URL now, not at the first request
        _CONFIGURED[:] = [str(url)]
    parsed = _normalize_url(default_url())
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        _warn_exposure(Path(parsed.database).expanduser())  # at start-up, not at the first request
    return default_url()


def default_url() -> str:
    """The store used when none is named: the one :func:`configure` set (``serve --store``),
    else ``$METER_DASHBOARD_STORE``, else a SQLite file in the user's data directory
    (``$XDG_DATA_HOME/meter-dashboard/testsets.sqlite``, by default
    ``~/.local/share/meter-dashboard/testsets.sqlite``)."""
    if _CONFIGURED:
        return _CONFIGURED[0]
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    base = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.join(Path.home(), ".local", "share")
    return "sqlite:///" + os.path.join(base, "meter-dashboard", "testsets.sqlite")


def _normalize_url(url: str):
    text = str(url).strip()
    if not text:
        raise InputError("--store", "a database URL such as sqlite:///PATH or postgresql+psycopg://HOST/DB", text)
    for prefix in ("postgres://", "postgresql://"):
        if text.startswith(prefix):
            text = "postgresql+psycopg://" + text[len(prefix):]
    try:
        parsed = make_url(text)
    except ArgumentError:
        raise InputError("--store", "a database URL such as sqlite:///PATH or postgresql+psycopg://HOST/DB",
                         text.split("@")[-1]) from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise InputError("--store", "a sqlite:/// or postgresql+psycopg:// URL", parsed.get_backend_name())
    return parsed


def display_url(url) -> str:
    """The URL with its password masked (for messages and pages)."""
    try:
        return _normalize_url(url).render_as_string(hide_password=True)
    except InputError:
        return "(invalid store URL)"


# ============================================================================ the store
class Store:
    """A connection to the database that holds guarded test sets.

    Parameters
    ----------
    url : str, optional
        A SQLAlchemy URL; default :func:`default_url`.  The tables are created on first
        use.  ``sqlite:///:memory:`` gives a private in-process store (tests, notebooks).
    """

    def __init__(self, url: str | None = None):
        self.url = _normalize_url(url if url is not None else default_url())
        self.backend = self.url.get_backend_name()
        self._engine = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Store({self.display_url!r})"

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)

    def exists(self) -> bool:
        """Whether the store is there already (a SQLite file is only created by a first write or read;
        pages check this so that browsing never creates a store)."""
        if self.backend != "sqlite" or self._engine is not None:
            return True
        database = self.url.database or ""
        return database in ("", ":memory:") or Path(database).expanduser().is_file()

    def reachable(self) -> bool:
        """Whether the store answers (``SELECT 1``); a SQLite store not created yet is reachable when
        its file can be created (this never creates it)."""
        if not self.exists():
            parent = Path(self.url.database).expanduser().resolve().parent
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            return os.access(parent, os.W_OK | os.X_OK)
        try:
            with self.read() as conn:
                conn.exec_driver_sql("SELECT 1")
        except StoreError:
            return False
        return True

    def writable(self) -> tuple:
        """``(writable, reason)``: whether the store can take a write now, checked cheaply: a write
        transaction (SQLite's write lock; a PostgreSQL transaction id, which goes to its log) and, for a
        SQLite file, the free space of its disk (at least :data:`MIN_FREE_BYTES`).  ``reason`` is one
        line when it cannot (the disk is full, the file is read-only, the store does not answer)."""
        if self.backend == "sqlite" and self.url.database not in (None, "", ":memory:"):
            directory = Path(self.url.database).expanduser().resolve().parent
            while not directory.exists() and directory != directory.parent:
                directory = directory.parent
            try:
                fs = os.statvfs(directory)
            except OSError as exc:
                return False, f"the store's directory cannot be read ({exc.strerror})"
            free = fs.f_bavail * fs.f_frsize
            if free < MIN_FREE_BYTES:
                return False, f"the disk holding the store is full ({free:,} bytes free)"
            if not self.exists():
                return os.access(directory, os.W_OK | os.X_OK), "the store's directory is not writable"
        try:
            with self.write() as conn:
                if self.backend == "postgresql":
                    conn.exec_driver_sql("SELECT txid_current()")
        except StoreError as exc:
            return False, ("the disk holding the store is full" if exc.full else str(exc))
        return True, None

    # -- engine
    @property
    def engine(self):
        """The SQLAlchemy engine (created, with the tables, on first use)."""
        with self._lock:
            if self._engine is None:
                self._engine = self._create_engine()
        return self._engine

    def _create_engine(self):
        kwargs = dict(hide_parameters=True, future=True)
        if self.backend == "sqlite":
            database = self.url.database or ""
            if database in ("", ":memory:"):
                kwargs.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
            else:
                _create_private(Path(database).expanduser())
                kwargs.update(connect_args={"timeout": 60, "check_same_thread": False})
        else:
            kwargs.update(pool_pre_ping=True, connect_args={"connect_timeout": 10})
        try:
            engine = create_engine(self.url, **kwargs)
        except (SQLAlchemyError, ImportError) as exc:
            raise StoreError(f"cannot open the store {self.display_url}: {_reason(exc)}") from None
        if self.backend == "sqlite":
            _sqlite_transactions(engine)
        try:
            metadata.create_all(engine)
            _migrate(engine)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"cannot open the store {self.display_url}: {_reason(exc)}", full=disk_full(exc)) \
                from None
        return engine

    def dispose(self) -> None:
        """Close every pooled connection."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None

    # -- transactions
    @contextlib.contextmanager
    def write(self):
        """One write transaction (``BEGIN IMMEDIATE`` on SQLite): commit on success, roll back on error."""
        with self._transaction(readonly=False) as conn:
            yield conn

    @contextlib.contextmanager
    def read(self):
        """One read-only transaction (a consistent snapshot; never takes the write lock)."""
        with self._transaction(readonly=True) as conn:
            yield conn

    @contextlib.contextmanager
    def _transaction(self, readonly: bool):
        engine = self.engine
        try:
            with engine.connect() as conn:
                conn = conn.execution_options(md_readonly=readonly)
                with conn.begin():
                    yield conn
        except SQLAlchemyError as exc:
            full = disk_full(exc)
            if full:
                raise StoreError(f"the store {self.display_url} cannot write: its disk is full ({_reason(exc)}); "
                                 f"free space on that disk", full=True) from None
            raise StoreError(f"the store {self.display_url} refused the operation: {_reason(exc)}") from None
        except OSError as exc:  # the file itself (a SQLite journal) could not be written
            if not disk_full(exc):
                raise
            raise StoreError(f"the store {self.display_url} cannot write: its disk is full; free space on that disk",
                             full=True) from None

    # -- test sets
    def lock_testset(self, conn, name: str):
        """The test set's row, locked until the transaction ends (None if there is none)."""
        query = select(testsets).where(testsets.c.name == name)
        if self.backend == "postgresql":
            query = query.with_for_update()
        return conn.execute(query).mappings().first()

    @staticmethod
    def get_testset(conn, name: str):
        return conn.execute(select(testsets).where(testsets.c.name == name)).mappings().first()

    @staticmethod
    def list_testsets(conn) -> list:
        return list(conn.execute(select(testsets).order_by(testsets.c.created_at, testsets.c.id)).mappings())

    @staticmethod
    def versions(conn) -> dict:
        """``{name: version}`` of every test set, in the order they were created: cheap, for pages that poll."""
        rows = conn.execute(select(testsets.c.name, testsets.c.version).order_by(testsets.c.created_at, testsets.c.id))
        return {name: int(version) for name, version in rows}

    @staticmethod
    def insert_testset(conn, **values) -> int:
        """A new test set's row; ``settings``: its JSON text (:func:`.settings.settings_json`) or a dictionary."""
        values = dict(values)
        if not isinstance(values["settings"], str):
            values["settings"] = json.dumps(values["settings"], sort_keys=True)
        if values.get("supported") is not None:
            values["supported"] = json.dumps(values["supported"], sort_keys=True)
        values.setdefault("created_at", time.time())
        values.setdefault("status", "active")
        values.setdefault("steps_used", 0)
        values.setdefault("version", 1)
        result = conn.execute(insert(testsets).values(**values))
        return int(result.inserted_primary_key[0])

    @staticmethod
    def update_testset(conn, testset_id: int, **values) -> None:
        """Change a test set's row and bump its ``version`` (pages refresh on it)."""
        conn.execute(update(testsets).where(testsets.c.id == testset_id)
                     .values(version=testsets.c.version + 1, **values))

    # -- labels
    @staticmethod
    def insert_labels(conn, testset_id: int, ids: bytes, codes: bytes, classes: Sequence[str]) -> None:
        conn.execute(insert(labels).values(testset_id=testset_id, ids=ids, codes=codes,
                                           classes=json.dumps(list(classes))))

    @staticmethod
    def load_labels(conn, testset_id: int):
        row = conn.execute(select(labels).where(labels.c.testset_id == testset_id)).mappings().first()
        if row is None:
            return None
        return bytes(row["ids"]), bytes(row["codes"]), json.loads(row["classes"])

    # -- tokens
    @staticmethod
    def insert_token(conn, testset_id: int, key_id: str, role: str, tenant, hashed: str) -> None:
        conn.execute(insert(tokens).values(testset_id=testset_id, key_id=key_id, role=role, tenant=tenant,
                                           hash=hashed, created_at=time.time(), revoked=False))

    @staticmethod
    def find_token(conn, key_id: str):
        query = (select(tokens, testsets.c.name.label("testset_name"))
                 .join(testsets, testsets.c.id == tokens.c.testset_id)
                 .where(tokens.c.key_id == key_id))
        return conn.execute(query).mappings().first()

    @staticmethod
    def replace_token_hash(conn, key_id: str, old: str, new: str) -> bool:
        """Rewrite a token's stored hash from ``old`` to ``new`` (no change if another process did it first)."""
        result = conn.execute(update(tokens).where(tokens.c.key_id == key_id, tokens.c.hash == old).values(hash=new))
        return result.rowcount == 1

    @staticmethod
    def tenants(conn, testset_id: int) -> list:
        """Tenants with a token, in the order their first token was issued."""
        query = (select(tokens.c.tenant, func.min(tokens.c.id).label("first"))
                 .where(tokens.c.testset_id == testset_id, tokens.c.role == "tenant")
                 .group_by(tokens.c.tenant).order_by("first"))
        return [row[0] for row in conn.execute(query)]

    # -- history
    @staticmethod
    def insert_submission(conn, **values) -> None:
        values.setdefault("created_at", time.time())
        conn.execute(insert(submissions).values(**values))

    @staticmethod
    def history(conn, testset_id: int) -> list:
        query = select(submissions).where(submissions.c.testset_id == testset_id).order_by(submissions.c.step)
        return list(conn.execute(query).mappings())

    @staticmethod
    def submission_times(conn, testset_id: int, tenant: str, since: float) -> list:
        """When ``tenant`` submitted to the test set since ``since`` (oldest first)."""
        query = (select(submissions.c.created_at)
                 .where(submissions.c.testset_id == testset_id, submissions.c.tenant == tenant,
                        submissions.c.created_at >= since).order_by(submissions.c.created_at))
        return [float(t) for (t,) in conn.execute(query)]

    @staticmethod
    def mark_reverted(conn, testset_id: int, step: int) -> None:
        conn.execute(update(submissions).where(submissions.c.testset_id == testset_id, submissions.c.step == step)
                     .values(reverted=True))

    @staticmethod
    def find_idempotent(conn, testset_id: int, tenant: str, key: str):
        """The step and answer a submission with this ``Idempotency-Key`` got (None: the key is new), with the
        history row's ``predictions_sha256`` and ``val_accuracy`` (a retry must be the same submission)."""
        query = (select(idempotency.c.step, idempotency.c.answer, submissions.c.predictions_sha256,
                        submissions.c.val_accuracy)
                 .join(submissions, (submissions.c.testset_id == idempotency.c.testset_id)
                       & (submissions.c.step == idempotency.c.step))
                 .where(idempotency.c.testset_id == testset_id, idempotency.c.tenant == tenant,
                        idempotency.c.key == key))
        return conn.execute(query).mappings().first()

    @staticmethod
    def insert_idempotent(conn, testset_id: int, tenant: str, key: str, step: int, answer: dict) -> None:
        conn.execute(insert(idempotency).values(testset_id=testset_id, tenant=tenant, key=key, step=step,
                                                answer=json.dumps(answer, sort_keys=True)))

    # -- ease.ml/ci: the accepted model's predictions
    @staticmethod
    def save_active_predictions(conn, testset_id: int, step: int, data: bytes) -> None:
        exists = conn.execute(select(active_predictions.c.step)
                              .where(active_predictions.c.testset_id == testset_id)).first()
        if exists is None:
            conn.execute(insert(active_predictions).values(testset_id=testset_id, step=step, data=data))
        else:
            conn.execute(update(active_predictions).where(active_predictions.c.testset_id == testset_id)
                         .values(step=step, data=data))

    @staticmethod
    def load_active_predictions(conn, testset_id: int):
        row = conn.execute(select(active_predictions).where(active_predictions.c.testset_id == testset_id)
                           ).mappings().first()
        return None if row is None else (int(row["step"]), bytes(row["data"]))


def _migrate(engine) -> None:
    """Add the columns added since a store was created (see the module's docstring), in one write
    transaction that checks again under the lock (two processes opening an old store add them once)."""
    from sqlalchemy import inspect, text

    if "released_at" in {c["name"] for c in inspect(engine).get_columns("md_testsets")}:
        return
    with engine.connect() as conn:
        with conn.begin():  # SQLite: BEGIN IMMEDIATE (the listener); PostgreSQL: the table lock below
            if engine.dialect.name == "postgresql":
                conn.exec_driver_sql("LOCK TABLE md_testsets IN ACCESS EXCLUSIVE MODE")
            columns = {c["name"] for c in inspect(conn).get_columns("md_testsets")}
            if "released_at" not in columns:
                kind = "DOUBLE PRECISION" if engine.dialect.name == "postgresql" else "FLOAT"
                conn.exec_driver_sql(f"ALTER TABLE md_testsets ADD COLUMN released_at {kind}")
                # before this column, retiring released the scores and labels: those sets stay released
                conn.execute(text("UPDATE md_testsets SET released_at = retired_at WHERE status = 'retired'"))


def _sqlite_transactions(engine) -> None:
    """Let SQLAlchemy, not the sqlite3 module, emit BEGIN: IMMEDIATE for writes, deferred for reads."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # no implicit BEGIN from the driver
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=60000")
        try:
            cursor.execute("PRAGMA journal_mode=WAL")  # readers do not wait for the writer
        except Exception:  # noqa: BLE001 - a read-only or in-memory database keeps its mode
            pass
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        readonly = conn.get_execution_options().get("md_readonly", False)
        conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")


def _reason(exc: BaseException) -> str:
    """A short reason without SQL text or parameters."""
    orig = getattr(exc, "orig", None)
    if orig is not None:
        text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        return f"{type(orig).__name__}: {text[:200]}"
    return type(exc).__name__ + (f": {str(exc).splitlines()[0][:200]}" if str(exc).strip() else "")


_log = logging.getLogger("meter_dashboard.testsets.store")
_WARNED: set = set()


def _create_private(path: Path) -> None:
    """Create the store's directory (0700) and an empty store file (0600) unless they exist, then warn
    once if other local users can read them.  Created so, not changed afterwards: no moment exists
    when the file is readable by others (an empty file is an empty SQLite database)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass
    _warn_exposure(path)


def _warn_exposure(path: Path) -> None:
    for line in exposure(path):
        if (str(path), line) not in _WARNED:
            _WARNED.add((str(path), line))
            _log.warning("meter-dashboard: warning: %s", line)


def _others_can_reach(directory: Path) -> bool:
    """Whether users other than the owner (and group) can pass through every directory down to this one."""
    for part in [directory, *directory.parents]:
        try:
            if not os.stat(part).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def exposure(path) -> list:
    """Why other local users could read a SQLite store at ``path`` (one line each; empty when they cannot):
    its directory lists for everyone, or its file is readable by group or others."""
    path = Path(path).expanduser().resolve()
    directory = path.parent
    if not _others_can_reach(directory):
        return []
    lines = []
    mode = stat.S_IMODE(os.stat(directory).st_mode)
    if mode & stat.S_IROTH:
        lines.append(f"the store {path} is in a directory every local user can list ({directory}, mode {mode:04o}); "
                     f"keep stores in a private directory (chmod 700 {directory})")
    if path.exists():
        file_mode = stat.S_IMODE(os.stat(path).st_mode)
        if file_mode & 0o077:
            lines.append(f"the store {path} can be read by other local users (mode {file_mode:04o}): its labels are "
                         f"secret; chmod 600 {path}")
    return lines


_STORES: dict = {}
_STORES_LOCK = threading.Lock()


def open_store(url: str | None = None) -> Store:
    """The process's :class:`Store` for ``url`` (default :func:`default_url`), shared by callers."""
    url = url if url is not None else default_url()
    key = str(_normalize_url(url))
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = Store(url)
        return store
