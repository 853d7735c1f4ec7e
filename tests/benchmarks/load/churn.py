"""Sessions opened and closed one by one: is everything a session built freed once it expires?

After a warm-up (a few sessions of each page, expired), the server's memory and its live
objects (``/_perf/stats``: sessions, documents, every ``meter_dashboard`` instance) are the
baseline.  Then ``count`` sessions are opened and closed one after another (the planner by
default; ``--pages`` cycles through several), and after the unused-session lifetime the same
figures are read again.  A leak shows as documents or views still alive, or memory that grows
with ``count``.

    python -m tests.benchmarks.load.churn [--quick] [--count 100] [--pages planner,session,...]
"""
from __future__ import annotations

import argparse
import asyncio
import time

from .harness import Server, machine_note
from .planner import QUERY
from .protocol import Session

LIFETIME = 5  # seconds: the server runs with --session-lifetime 5 so the script waits less


async def _open_close(base: str, page: str) -> None:
    session = await Session.open(base, "/" + page, QUERY if page == "planner" else "", timeout=300)
    await asyncio.sleep(0.2)
    await session.close()


async def run(server: Server, count: int, pages: list[str], wait: float) -> dict:
    for page in pages * 2:
        await _open_close(server.base, page)
    await asyncio.sleep(wait)
    before = server.stats()
    rss_before = server.rss_mib()
    start = time.perf_counter()
    for i in range(count):
        await _open_close(server.base, pages[i % len(pages)])
    seconds = time.perf_counter() - start
    rss_open = server.rss_mib()
    await asyncio.sleep(wait)
    rss_after = server.rss_mib()
    after = server.stats(trim=True)
    return {"count": count, "seconds": seconds, "rss_before": rss_before, "rss_end": rss_open,
            "rss_after": rss_after, "rss_after_gc": server.rss_mib(), "before": before, "after": after}


def report(r: dict) -> list[str]:
    grown = {k: v - r["before"]["classes"].get(k, 0) for k, v in r["after"]["classes"].items()
             if v != r["before"]["classes"].get(k, 0)}
    return [
        f"{r['count']} sessions opened and closed one by one in {r['seconds']:.0f} s",
        f"server memory: {r['rss_before']:.1f} MiB before, {r['rss_end']:.1f} MiB right after the last close, "
        f"{r['rss_after']:.1f} MiB once they expired (+{r['rss_after'] - r['rss_before']:.1f} MiB, "
        f"{(r['rss_after'] - r['rss_before']) / r['count'] * 1024:.0f} KiB per session)",
        f"alive before / after: sessions {r['before']['sessions']} / {r['after']['sessions']}, documents "
        f"{r['before']['documents']} / {r['after']['documents']}, meter_dashboard objects "
        f"{r['before']['meter_dashboard_objects']} / {r['after']['meter_dashboard_objects']}, Panel views "
        f"{r['before']['panel_views']} / {r['after']['panel_views']}",
        f"after returning freed heap pages to the system (malloc_trim): {r['after']['rss_after_trim_kib'] / 1024:.1f} MiB",
        "classes with more instances after: " + (", ".join(f"{k} {v:+d}" for k, v in grown.items()) or "none"),
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 sessions")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--pages", default="planner")
    args = parser.parse_args(argv)
    count = 30 if args.quick else args.count
    with Server.dashboard("--session-lifetime", str(LIFETIME)) as dash:
        print(machine_note())
        result = asyncio.run(run(dash, count, args.pages.split(","), wait=LIFETIME * 2 + 3))
        print("\n".join(report(result)))


if __name__ == "__main__":
    main()
