"""Many people at once: N planner sessions, each changing δ every second; then memory per session.

For each N (10, 25, 50 by default), over the Bokeh protocol (:mod:`.protocol`: one process,
no rendering, so the machine's two cores are left to the server as far as possible):

1. memory of the idle server, then N sessions opened (5 at a time, as people arriving) —
   the time to open them all, and server memory per idle session;
2. each session changes δ once a second (random phase) for ``duration`` seconds and times
   change -> new count: p50 / p95 / max, errors (timeouts, lost connections, wrong numbers);
3. all sessions closed; after Bokeh's unused-session lifetime the server's memory, and its
   live sessions and documents (``/_perf/stats``) — they must be back to the idle figures.

    python -m tests.benchmarks.load.sessions [--quick] [--n 10,25,50] [--duration 60]
"""
from __future__ import annotations

import argparse
import asyncio
import random
import time

from .harness import Server, machine_note, ms, summary
from .planner import QUERY, PlannerDriver
from .protocol import Session


async def open_sessions(base: str, n: int, at_once: int = 5) -> tuple[list, float, int]:
    """``n`` planner sessions opened ``at_once`` at a time; (sessions, seconds, failures)."""
    sessions, failures = [], 0
    start = time.perf_counter()
    for first in range(0, n, at_once):
        batch = await asyncio.gather(*(Session.open(base, "/planner", QUERY, timeout=300)
                                       for _ in range(min(at_once, n - first))), return_exceptions=True)
        for item in batch:
            if isinstance(item, BaseException):
                failures += 1
            else:
                sessions.append(item)
    return sessions, time.perf_counter() - start, failures


async def churn_planner(sessions: list, duration: float, period: float = 1.0) -> tuple[list[float], list[str]]:
    """Every session changes δ every ``period`` s for ``duration`` s; (latencies, errors)."""
    latencies: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + duration

    async def person(index: int, session) -> None:
        driver = PlannerDriver(session, start=index)
        await asyncio.sleep(random.uniform(0, period))
        while time.monotonic() < stop:
            tick = time.monotonic()
            try:
                latencies.append(await driver.change(timeout=30))
            except Exception as exc:  # noqa: BLE001 - counted and reported
                errors.append(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(max(0.0, period - (time.monotonic() - tick)))

    await asyncio.gather(*(person(i, s) for i, s in enumerate(sessions)))
    return latencies, errors


async def one_level(server: Server, n: int, duration: float, expiry_wait: float) -> dict:
    idle = server.rss_mib()
    cpu0 = server.cpu_seconds()
    sessions, open_seconds, failures = await open_sessions(server.base, n)
    await asyncio.sleep(2.0)
    opened = server.rss_mib()
    latencies, errors = await churn_planner(sessions, duration)
    cpu = server.cpu_seconds() - cpu0
    for session in sessions:
        errors.extend(session.errors)
        await session.close()
    await asyncio.sleep(expiry_wait)
    after = server.rss_mib()
    stats = server.stats()
    return {
        "n": n, "open_seconds": open_seconds, "open_failures": failures, "latency": summary(latencies),
        "errors": errors, "rss_idle": idle, "rss_open": opened, "rss_per_session": (opened - idle) / max(n, 1),
        "rss_after": after, "rss_after_gc": server.rss_mib(), "sessions_after": stats["sessions"],
        "documents_after": stats["documents"], "server_cpu_seconds": cpu, "changes": len(latencies),
    }


def report(level: dict) -> str:
    lat = level["latency"]
    return (f"N={level['n']}: opening took {level['open_seconds']:.1f} s ({level['open_failures']} failed); "
            f"change -> number p50 {ms(lat['p50'])} / p95 {ms(lat['p95'])} / max {ms(lat['max'])} over "
            f"{level['changes']} changes, {len(level['errors'])} errors; server memory idle "
            f"{level['rss_idle']:.0f} MiB, open {level['rss_open']:.0f} MiB "
            f"({level['rss_per_session']:.2f} MiB per idle session), after the sessions expired "
            f"{level['rss_after']:.0f} MiB ({level['sessions_after']} sessions, {level['documents_after']} "
            f"documents alive); server CPU {level['server_cpu_seconds']:.0f} s")


async def run(server: Server, levels, duration: float, expiry_wait: float) -> list[dict]:
    warm = await Session.open(server.base, "/planner", QUERY)  # imports and first-session costs
    await PlannerDriver(warm).change()
    await warm.close()
    await asyncio.sleep(expiry_wait)
    results = []
    for n in levels:
        results.append(await one_level(server, n, duration, expiry_wait))
        print(report(results[-1]), flush=True)
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 10, 25 for 15 s each")
    parser.add_argument("--n", default="10,25,50")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--num-threads", default=None)
    parser.add_argument("--num-procs", default=None)
    args = parser.parse_args(argv)
    levels = [int(v) for v in args.n.split(",")]
    duration = args.duration
    if args.quick:
        levels, duration = [n for n in levels if n <= 25] or levels[:1], 15.0
    extra = ["--session-lifetime", "5"]
    if args.num_threads is not None:
        extra += ["--num-threads", args.num_threads]
    if args.num_procs is not None:
        extra += ["--num-procs", args.num_procs]
    with Server.dashboard(*extra) as dash:
        print(machine_note())
        asyncio.run(run(dash, levels, duration, expiry_wait=12.0))
        print(machine_note())


if __name__ == "__main__":
    main()
