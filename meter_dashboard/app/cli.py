"""``meter-dashboard serve``: start the dashboard (the one verb that imports Panel)."""
from __future__ import annotations

import argparse
import sys

from ..core.serving import (
    DEFAULT_ADDRESS,
    DEFAULT_THREADS,
    SESSION_LIFETIME_MS,
    bind_error,
    check_address,
    check_bindable,
    exposure_warning,
    is_local,
)
from ..core.validation import InputError, check_int, check_number


#: The runnable example shown by ``--help`` (tests/cli/test_help_examples.py starts it, asks for a page and
#: stops it with Ctrl-C).
EXAMPLE = "meter-dashboard serve --port 0 --pages planner,session --no-show"


def register(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the dashboard in a browser",
        description="Serve every dashboard page (planner, session, ci, ladder, compare, approve) "
        "with one Bokeh server; open http://localhost:PORT/planner.",
        epilog=f"example (a free port, this machine only; Ctrl-C stops it):\n  {EXAMPLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--port", default=5006, help="port to listen on (default 5006; 0 picks a free one)")
    p.add_argument("--address", default=DEFAULT_ADDRESS,
                   help=f"address to listen on (default {DEFAULT_ADDRESS}: this machine only; 0.0.0.0 serves "
                   "every network interface, with no login: see README, 'Serving a team')")
    p.add_argument("--no-show", action="store_true", help="do not open a browser tab")
    p.add_argument("--pages", default=None, help="comma-separated page names (default: all)")
    p.add_argument("--store", default=None, help="guarded test sets' store: sqlite:///PATH or postgresql+psycopg://... "
                   "(default $METER_DASHBOARD_STORE, else a SQLite file in the user's data directory)")
    p.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=None,
        help="host[:port] allowed to connect (repeatable; default localhost and 127.0.0.1)",
    )
    p.add_argument("--num-threads", default=DEFAULT_THREADS,
                   help=f"worker threads for long work: exact counts, uploads, long replays (default "
                   f"{DEFAULT_THREADS}; 0: on the event loop)")
    p.add_argument("--num-procs", default=1,
                   help="server processes sharing the port (default 1; 0: one per core); each session "
                   "lives in one process")
    p.add_argument("--session-lifetime", default=SESSION_LIFETIME_MS / 1000,
                   help=f"seconds after a browser leaves before its session is destroyed "
                   f"(default {SESSION_LIFETIME_MS / 1000:g})")
    p.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                   help="what the dashboard logs to stderr (default warning: problems only; debug adds when each "
                   "page is queued, built and filled in, to diagnose a page that stays without numbers)")
    p.set_defaults(run=run)


#: ``--log-level`` choices: the dashboard's own log (the ``meter_dashboard`` loggers), one line per record.
LOG_LEVELS = ("debug", "info", "warning", "error")


#: Exit status after SIGTERM (``kill PID``, ``systemctl stop``): 128 + 15, as a process killed by it reports.
TERMINATED = 143


class Terminated(SystemExit):
    """SIGTERM arrived: the server stops as after Ctrl-C, with status :data:`TERMINATED`."""


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``: its children, theirs, ... (Linux's /proc; elsewhere none are known)."""
    from pathlib import Path

    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def _stop_on_sigterm() -> None:
    """``kill PID`` stops the whole server: its ``--num-procs`` forks and every worker process too.

    By default SIGTERM ends only the process it is sent to: the forks of ``--num-procs`` kept serving
    and the worker processes kept running.  Now the process sends it on to every process below it
    (the forks inherit this handler; the simulations' worker processes are grandchildren, started by
    multiprocessing's fork server, and would otherwise wait forever on their job queues) and stops
    as after Ctrl-C: the event loop ends and the exit status is 143.  A second SIGTERM during that
    shutdown is ignored (it would cut the shutdown short).
    """
    import os
    import signal

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        children = _forward_sigterm()
        _wait_for(children, DRAIN_WAIT_S)  # --num-procs: the forks drain their requests (_drain_on_sigterm)
        raise Terminated(TERMINATED)

    signal.signal(signal.SIGTERM, terminate)


#: Seconds a process waits for its forks to drain and end after SIGTERM (their drain is bounded by less).
DRAIN_WAIT_S = 40.0


def _forward_sigterm() -> list[int]:
    """Send SIGTERM to every process below this one; returns their ids."""
    import os
    import signal

    found = _descendants(os.getpid())
    for process in found:
        try:
            os.kill(process, signal.SIGTERM)
        except OSError:  # it has just ended
            pass
    return found


def _wait_for(pids: list[int], seconds: float) -> None:
    """Reap this process's children among ``pids`` until none is left or ``seconds`` pass."""
    import os
    import time

    deadline = time.monotonic() + seconds
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not a child of this process (a grandchild), or reaped
                done = pid
            if done:
                waiting.discard(pid)
        time.sleep(0.05)


def _drain_on_sigterm(server) -> dict:
    """In the process that serves: SIGTERM stops taking requests and answers those in progress, then exits.

    The listening socket stays open while the API drains (:func:`meter_dashboard.testsets.api.drain`:
    a new request gets 503 "the server is stopping" instead of a reset connection; a request in
    progress runs to its answer, bounded), then the event loop stops and ``serve`` exits 143.  No
    submission is recorded without its answer being written out, except one whose client left after
    its commit (a retry with the same ``Idempotency-Key`` gets that answer).  Returns a dict whose
    ``"terminated"`` says, once the loop has stopped, whether SIGTERM stopped it."""
    import asyncio
    import signal

    state = {"terminated": False}

    async def stop():
        from ..testsets import api

        try:
            cut = await api.drain()
            if cut:
                import logging

                logging.getLogger("meter_dashboard.app.cli").warning(
                    "stopping with %d API request(s) still in progress after %.0f s", cut, api.DRAIN_SECONDS)
        finally:
            server.io_loop.stop()

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM would cut the drain short
        state["terminated"] = True
        _forward_sigterm()  # the worker processes of simulations: nothing to answer there
        server.io_loop.asyncio_loop.call_soon_threadsafe(lambda: asyncio.ensure_future(stop()))

    signal.signal(signal.SIGTERM, terminate)
    return state


def _configure_logging(level: str) -> None:
    """Send the ``meter_dashboard`` loggers' records at ``level`` and above to stderr, timestamped."""
    import logging

    logger = logging.getLogger("meter_dashboard")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False  # once, not again through a root handler another library configured


def _free_port(address: str) -> int:
    import socket

    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


def _lifetime_ms(text) -> int:
    seconds = check_number("--session-lifetime", text, minimum=1, maximum=86_400)
    return int(round(seconds * 1000))


def run(args) -> int:
    port = check_int("--port", args.port, minimum=0, maximum=65535)
    threads = check_int("--num-threads", args.num_threads, minimum=0, maximum=64)
    procs = check_int("--num-procs", args.num_procs, minimum=0, maximum=64)
    lifetime = _lifetime_ms(args.session_lifetime)
    address = check_address(args.address)
    from . import pages

    names = None
    if args.pages:
        names = [n.strip() for n in args.pages.split(",") if n.strip()]
        unknown = [n for n in names if n not in pages.available_pages()]
        if unknown:
            raise InputError("--pages", "names from " + ", ".join(pages.available_pages()), args.pages)
    from ..testsets import api, store

    store_url = store.configure(args.store)  # opened on first use: the other pages never need it
    check_bindable(address, port)  # after every option is checked: a bad option is named whatever the port
    if port == 0:  # a free port now, so the websocket origins name it (Bokeh refuses "localhost:*")
        port = _free_port(address)
    _configure_logging(args.log_level)
    _stop_on_sigterm()
    if not is_local(address):
        print(f"meter-dashboard serve: {exposure_warning(address, port)}", file=sys.stderr, flush=True)
    try:  # built, then started here: --num-procs forks while it is built, and each fork drains on SIGTERM
        server = pages.serve(port=port, address=address, show=not args.no_show, pages=names,
                             websocket_origin=args.allow_websocket_origin, num_threads=threads, num_procs=procs,
                             session_lifetime_ms=lifetime, extra_patterns=api.patterns(store_url), verbose=True,
                             start=False)
    except OSError as exc:  # the port was taken between the check and the bind
        raise bind_error(exc, address, port) from None
    state = _drain_on_sigterm(server)
    server.start()
    try:
        server.io_loop.start()
    except RuntimeError:  # the loop was stopped before it ran
        pass
    if state["terminated"]:
        raise Terminated(TERMINATED)
    # The server runs until Ctrl-C: Panel's own SIGINT handler stops its loop and serve() returns;
    # the exit status says how it ended, like every verb's (130, one line on stderr)
    raise KeyboardInterrupt

