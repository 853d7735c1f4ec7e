"""Server CPU per session opened and per change, pages vs the floor (robust to a busy machine).

Wall-clock figures on a shared machine move with everyone else's load; the CPU time the server
process spends (``/proc/PID/stat``) on one session or one change moves much less, and it is
what bounds how many people one process serves: 50 people changing the planner once a second
need 50 changes per second, so on one interpreter (one core for Python code) a change must cost
well under 20 ms of server CPU for the p95 to stay low.

    python -m tests.benchmarks.load.cost [--quick]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics

from .harness import Server, machine_note
from .planner import QUERY, FloorDriver, PlannerDriver
from .protocol import Session

OPEN = {"planner": QUERY, "session": "", "approve": "", "ci": "", "ladder": "", "compare": ""}


async def per_open(server: Server, page: str, query: str, count: int) -> float:
    """Server CPU seconds per session opened (GET, websocket, document pulled, document_ready)."""
    warm = await Session.open(server.base, page, query, timeout=300)
    await warm.close()
    await asyncio.sleep(1.0)
    cpu0 = server.cpu_seconds()
    for _ in range(count):
        session = await Session.open(server.base, page, query, timeout=300)
        await asyncio.sleep(0.5)  # onload callbacks
        await session.close()
    return (server.cpu_seconds() - cpu0) / count  # an idle server's own CPU is negligible


async def per_change(server: Server, page: str, count: int) -> float:
    """Server CPU seconds per change -> new count (planner δ, or the floor's number)."""
    session = await Session.open(server.base, page, QUERY if page == "/planner" else "", timeout=300)
    driver = PlannerDriver(session) if page == "/planner" else FloorDriver(session)
    for _ in range(3):
        await driver.change()
    cpu0 = server.cpu_seconds()
    for _ in range(count):
        await driver.change()
    cpu = (server.cpu_seconds() - cpu0) / count
    await session.close()
    return cpu


class _Recording(Session):
    """A protocol session that records the size of every PATCH-DOC it receives."""

    patches: list

    async def _receive(self):
        header, metadata, content = await super()._receive()
        if header.get("msgtype") == "PATCH-DOC":
            self.__dict__.setdefault("patches", []).append(len(json.dumps(content)))
        return header, metadata, content


async def messages_per_change(server: Server, count: int) -> dict:
    """PATCH-DOC messages and their bytes (JSON) per planner change -> number (issue 19: one message, only what changed)."""
    session = await _Recording.open(server.base, "/planner", QUERY, timeout=300)
    driver = PlannerDriver(session)
    for _ in range(3):
        await driver.change()
    messages, sizes = [], []
    for _ in range(count):
        await asyncio.sleep(0.5)  # anything late from the previous change arrives first
        session.__dict__["patches"] = []
        await driver.change()
        await asyncio.sleep(0.5)
        messages.append(len(session.patches))
        sizes.append(sum(session.patches))
    await session.close()
    return {"messages": max(messages), "bytes": statistics.median(sizes)}


async def run(dash: Server, floor: Server, pages, opens: int, changes: int) -> dict:
    figures = {"open": {}, "change": {}}
    figures["open"]["floor"] = await per_open(floor, "/floor", "", opens)
    for page in pages:
        figures["open"][page] = await per_open(dash, "/" + page, OPEN[page], opens)
    figures["change"]["floor"] = await per_change(floor, "/floor", changes)
    figures["change"]["planner"] = await per_change(dash, "/planner", changes)
    figures["message"] = await messages_per_change(dash, changes)
    return figures


def report(figures: dict) -> list[str]:
    floor_open, floor_change = figures["open"]["floor"], figures["change"]["floor"]
    lines = ["server CPU per session opened: " + ", ".join(
        f"{page} {cpu * 1000:,.0f} ms ({cpu / floor_open:.1f}× floor)" for page, cpu in figures["open"].items())]
    lines.append("server CPU per change -> number: " + ", ".join(
        f"{page} {cpu * 1000:,.1f} ms ({cpu / floor_change:.1f}× floor)" for page, cpu in figures["change"].items()))
    if "message" in figures:
        lines.append(f"messages per planner change: at most {figures['message']['messages']}, median "
                     f"{figures['message']['bytes']:,.0f} bytes")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pages", default="planner,session,approve")
    parser.add_argument("--num-threads", default=None)
    args = parser.parse_args(argv)
    extra = ["--num-threads", args.num_threads] if args.num_threads is not None else []
    with Server.dashboard(*extra) as dash, Server.floor(*extra) as floor:
        print(machine_note())
        figures = asyncio.run(run(dash, floor, args.pages.split(","), 3 if args.quick else 8,
                                  10 if args.quick else 40))
        print("\n".join(report(figures)))


if __name__ == "__main__":
    main()
