"""Head-of-line blocking: one person's planner change while another person's long action runs.

Person A changes δ on the planner over and over (Bokeh protocol, :mod:`.protocol`) and times
each change -> new count; first with nobody else on the server, then while person B:

- ``approve``: changes α on ``/approve?example=adversary`` (50 tests, fsSRGP) — protocol;
- ``upload``: uploads a 50,000-step trace on ``/session`` — a browser (the file dropper's
  chunks are sent by its JavaScript);
- ``ci``: opens ``/ci?condition=n > 1e30000000 +/- 0.1`` — a plain HTTP GET (the server builds
  the page, parsing the condition, before it answers).

Prints A's median and worst change during B's action next to A's figures alone, and how long
B's action took.

    python -m tests.benchmarks.load.head_of_line [--quick] [--actions approve,upload,ci]
"""
from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np

from .harness import READY, Server, chromium, machine_note, ms, summary
from .planner import QUERY, PlannerDriver
from .protocol import Session

ACTIONS = ("approve", "upload", "ci")
CI_URL = "/ci?condition=" + quote("n > 1e30000000 +/- 0.1")
UPLOAD_STEPS = 50_000


def trace_csv(path: Path, steps: int = UPLOAD_STEPS) -> Path:
    """A seeded ``steps``-step development trace (CSV, about 1 MB for 50,000 steps)."""
    rng = np.random.default_rng(13)
    val = np.round(rng.uniform(0.7, 0.95, steps), 4)
    test = np.round(np.clip(val - np.abs(rng.normal(0, 0.02, steps)), 0, 1), 4)
    lines = ["step,val_accuracy,test_accuracy"] + [f"{i + 1},{v},{t}" for i, (v, t) in enumerate(zip(val, test))]
    path.write_text("\n".join(lines) + "\n")
    return path


def approve_expected(alpha: float, example: str = "adversary") -> dict:
    """What an example's headlines show at ``alpha`` (computed here): class -> text."""
    from meter_dashboard.approvals.model import ApproveModel

    model = ApproveModel(example=example, alpha=alpha)
    return {"approve-count": f"{model.result.approvals} of {model.trace.modifications}",
            "approve-fwer": f"≤ {alpha:g}"}


def _upload_in_browser(base: str, path: Path, ready: "asyncio.Event", loop) -> float:
    """Open /session, signal ``ready``, upload ``path``; seconds until the page shows the new trace."""
    with chromium() as browser:
        page = browser.new_page()
        page.goto(base + "/session")
        page.locator(READY["session"]).first.wait_for(state="visible", timeout=300_000)
        loop.call_soon_threadsafe(ready.set)
        start = time.perf_counter()
        page.locator(".trace-upload input[type=file]").first.set_input_files(str(path))
        page.locator(".session-title", has_text=path.name).first.wait_for(state="visible", timeout=600_000)
        return time.perf_counter() - start


async def _measure_during(driver: PlannerDriver, action: asyncio.Future, limit: float) -> list[float]:
    """A's changes while ``action`` runs (at least one, at most ``limit`` seconds)."""
    times = []
    deadline = time.monotonic() + limit
    while True:
        try:
            times.append(await driver.change(timeout=limit))
        except (TimeoutError, asyncio.TimeoutError):
            times.append(float("inf"))
        if action.done() or time.monotonic() > deadline:
            return times
        await asyncio.sleep(0.1)


async def _shows(session, css: str, text: str, limit: float):
    """Wait until the pane with ``css`` (built after the page loaded, on /approve) shows ``text``."""
    return await session.wait_value(await session.wait_text_id(css, timeout=limit), css, text, timeout=limit)


async def run(base: str, actions=ACTIONS, alone: int = 15, limit: float = 300) -> dict:
    """action -> {"during": summary of A's seconds, "action_seconds": B's duration}; plus "alone"."""
    a = await Session.open(base, "/planner", QUERY)
    driver = PlannerDriver(a)
    for _ in range(3):
        await driver.change()
    results = {"alone": summary([await driver.change() for _ in range(alone)])}
    loop = asyncio.get_running_loop()
    for action in actions:
        start = time.perf_counter()
        if action == "approve":
            expected = await asyncio.to_thread(approve_expected, 0.05)
            b = await Session.open(base, "/approve", "?example=adversary", timeout=limit)
            start = time.perf_counter()
            await b.type_value(b.input_id("approve-alpha"), "0.05")
            task = asyncio.ensure_future(asyncio.gather(*(_shows(b, css, text, limit)
                                                          for css, text in expected.items())))
        elif action == "upload":
            path = trace_csv(Path(tempfile.mkdtemp()) / "trace-50000.csv")
            ready = asyncio.Event()
            task = asyncio.ensure_future(asyncio.to_thread(_upload_in_browser, base, path, ready, loop))
            await ready.wait()
            start = time.perf_counter()
        elif action == "ci":
            from tornado.httpclient import AsyncHTTPClient

            task = asyncio.ensure_future(AsyncHTTPClient().fetch(base + CI_URL, request_timeout=limit,
                                                                 raise_error=False))
        else:
            raise ValueError(action)
        during = await _measure_during(driver, task, limit)
        try:
            await asyncio.wait_for(task, limit)
            error = ""
        except Exception as exc:  # noqa: BLE001 - reported, not hidden
            error = f"{type(exc).__name__}: {exc}"
        results[action] = {"during": summary(during), "action_seconds": time.perf_counter() - start,
                           "error": error}
        if action == "approve":
            await b.close()
        await asyncio.sleep(1.0)
        results[action]["after"] = summary([await driver.change() for _ in range(5)])
    await a.close()
    return results


def report(results: dict) -> list[str]:
    alone = results["alone"]
    lines = [f"A alone: median {ms(alone['p50'])}, max {ms(alone['max'])} (n={alone['n']})"]
    for action in ACTIONS:
        if action not in results:
            continue
        r = results[action]
        d = r["during"]
        lines.append(f"A during {action} ({r['action_seconds']:.1f} s{', ' + r['error'] if r['error'] else ''}): "
                     f"median {ms(d['p50'])}, max {ms(d['max'])} (n={d['n']}); after: median "
                     f"{ms(r['after']['p50'])}")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--actions", default=",".join(ACTIONS))
    parser.add_argument("--num-threads", default=None)
    args = parser.parse_args(argv)
    extra = ["--num-threads", args.num_threads] if args.num_threads is not None else []
    with Server.dashboard(*extra) as dash:
        print(machine_note())
        results = asyncio.run(run(dash.base, args.actions.split(","), alone=8 if args.quick else 20))
        print("\n".join(report(results)))
        print(machine_note())


if __name__ == "__main__":
    main()
