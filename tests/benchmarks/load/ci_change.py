"""What one change on /ci costs the server: CPU, and the messages and bytes it sends back (issue 32).

Over the Bokeh protocol (:mod:`.protocol`): one session on ``/ci`` (the shipped 40-commit trace
replayed), the reliability typed into its box with Enter, in turn 0.99, 0.999, 0.9999, 0.995, each
time until the baseline count the model computes for it shows.  Server CPU is read from ``/proc``
(robust to a busy machine, unlike wall-clock time); the messages are the ``PATCH-DOC`` frames the
session receives, their bytes counted as they arrive on the websocket.

    python -m tests.benchmarks.load.ci_change [--changes 30]
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json

from meter_dashboard.ci import CIModel
from meter_dashboard.core import formatting as fmt

from .harness import Server, machine_note
from .protocol import Session

VALUES = ["0.99", "0.999", "0.9999", "0.995"]


class CountingSession(Session):
    """A :class:`Session` that counts the ``PATCH-DOC`` messages it receives and their bytes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.messages, self.bytes = 0, 0

    async def _receive(self):
        frames = [await self._frame() for _ in range(3)]
        header = json.loads(frames[0])
        for _ in range(header.get("num_buffers", 0)):
            frames += [await self._frame(), await self._frame()]
        if header.get("msgtype") == "PATCH-DOC":
            self.messages += 1
            self.bytes += sum(len(f) for f in frames)
        return header, json.loads(frames[1]), json.loads(frames[2])


async def run(server: Server, changes: int) -> dict:
    expected = {v: fmt.integer(CIModel(reliability=float(v)).result.labels) for v in VALUES}
    session = await CountingSession.open(server.base, "/ci", "", timeout=300)
    pane = await session.wait_text_id("ci-labels", timeout=120)
    values = itertools.cycle(VALUES)

    async def change() -> float:
        value = next(values)
        seconds = await session.change("ci-reliability", value, pane, "ci-labels", expected[value])
        await asyncio.sleep(0.5)  # the messages that follow the number (the replay's table)
        return seconds

    for _ in range(4):  # warm
        await change()
    cpu0, messages0, bytes0 = server.cpu_seconds(), session.messages, session.bytes
    latencies = sorted([await change() for _ in range(changes)])
    figures = {"cpu": (server.cpu_seconds() - cpu0) / changes, "messages": (session.messages - messages0) / changes,
               "bytes": (session.bytes - bytes0) / changes, "p50": latencies[len(latencies) // 2]}
    await session.close()
    return figures


def report(figures: dict) -> str:
    return (f"/ci reliability change: server CPU {figures['cpu'] * 1000:.1f} ms, {figures['messages']:.2f} messages, "
            f"{figures['bytes'] / 1024:.1f} KiB per change; change -> number p50 {figures['p50'] * 1000:.0f} ms")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    args = parser.parse_args(argv)
    with Server.dashboard() as dash:
        print(machine_note())
        print(report(asyncio.run(run(dash, args.changes))))


if __name__ == "__main__":
    main()
