"""Issues 13's and 19's tables, re-measured: ``python -m tests.benchmarks.load [--quick] [--only NAMES]``.

Each part starts its own ``meter-dashboard serve`` on a free port (and the floor app where it
compares), prints its lines as it goes, and the table is printed at the end.  On the shared
2-core machine the wall-clock figures move with everyone else's load: every part prints the
load average, and the comparisons that matter are made in the same run (page vs floor, a
change alone vs during another person's action).

Parts: ``browser`` (first render and bytes per page, change -> number vs the floor), ``approve``
(an α change on the 15- and 50-test examples), ``hol`` (head-of-line), ``sessions`` (N at once),
``churn`` (100 open/close), ``cost`` (server CPU per open and per change), ``ci`` (server CPU, messages and
bytes per /ci change), ``room`` (50 browsers open
the planner at once: chromium contexts, then the protocol client), ``engine`` (the CLI and engine
lines, measured in subprocesses).
"""
from __future__ import annotations

import argparse
import asyncio
import time

from . import browser_figures, churn, ci_change, cost, engine, head_of_line, room, sessions
from .harness import Server, chromium, machine_note, mib, ms
from .protocol import Session

PARTS = ("browser", "approve", "hol", "sessions", "churn", "cost", "ci", "room", "engine")


async def approve_change(base: str, example: str, timeout: float = 600) -> float:
    """Seconds from α 0.1 -> 0.05 on /approve?example=... until the count and error rate show it."""
    expected = await asyncio.to_thread(head_of_line.approve_expected, 0.05, example)
    session = await Session.open(base, "/approve", f"?example={example}", timeout=timeout)
    ids = {css: await session.wait_text_id(css, timeout=timeout) for css in expected}  # the first decisions
    start = time.perf_counter()
    await session.type_value(session.input_id("approve-alpha"), "0.05")
    await asyncio.gather(*(session.wait_value(ids[css], css, text, timeout=timeout) for css, text in expected.items()))
    seconds = time.perf_counter() - start
    await session.close()
    return seconds


def run_parts(parts, quick: bool) -> dict:
    out: dict = {}
    if "browser" in parts:
        with Server.dashboard() as dash, Server.floor() as floor, chromium() as browser:
            print(machine_note(), flush=True)
            out["loads"] = browser_figures.first_loads(dash, floor, browser, rounds=2 if quick else 5)
            print("\n".join(browser_figures.report_first_loads(out["loads"])), flush=True)
            out["latency"] = browser_figures.change_latency(dash, floor, browser, rounds=6 if quick else 20)
            print(f"change -> number: planner {ms(out['latency']['planner']['p50'])}, floor "
                  f"{ms(out['latency']['floor']['p50'])}", flush=True)
    if "approve" in parts:
        with Server.dashboard() as dash:
            out["approve"] = {ex: asyncio.run(approve_change(dash.base, ex)) for ex in ("refits", "adversary")}
            print(f"approve α change: {out['approve']}", flush=True)
    if "hol" in parts:
        with Server.dashboard() as dash:
            print(machine_note(), flush=True)
            out["hol"] = asyncio.run(head_of_line.run(dash.base, alone=8 if quick else 20,
                                                      limit=120 if quick else 300))
            print("\n".join(head_of_line.report(out["hol"])), flush=True)
    if "sessions" in parts:
        with Server.dashboard("--session-lifetime", "5") as dash:
            print(machine_note(), flush=True)
            out["sessions"] = asyncio.run(sessions.run(dash, [10, 25] if quick else [10, 25, 50],
                                                       15.0 if quick else 60.0, expiry_wait=12.0))
    if "churn" in parts:
        with Server.dashboard("--session-lifetime", str(churn.LIFETIME)) as dash:
            out["churn"] = asyncio.run(churn.run(dash, 30 if quick else 100, ["planner"], wait=churn.LIFETIME * 2 + 3))
            print("\n".join(churn.report(out["churn"])), flush=True)
    if "cost" in parts:
        with Server.dashboard() as dash, Server.floor() as floor:
            out["cost"] = asyncio.run(cost.run(dash, floor, ["planner", "session", "approve"], 3 if quick else 8,
                                               10 if quick else 40))
            print("\n".join(cost.report(out["cost"])), flush=True)
    if "ci" in parts:
        with Server.dashboard() as dash:
            out["ci"] = asyncio.run(ci_change.run(dash, 10 if quick else 30))
            print(ci_change.report(out["ci"]), flush=True)
    if "room" in parts:
        out["room"] = {}
        for client in ("browser", "protocol"):
            with Server.dashboard(stats=False) as dash:
                print(machine_note(), flush=True)
                out["room"][client] = room.run(dash, 10 if quick else 50, client)
                print(room.report(out["room"][client]), flush=True)
    if "engine" in parts:
        out["engine"] = engine.run(quick)
        print("\n".join(engine.report(out["engine"])), flush=True)
    return out


def table(out: dict) -> list[str]:
    rows = ["| what | now | floor / goal |", "|---|---|---|"]
    if "latency" in out:
        lat = out["latency"]
        rows.append(f"| planner change → new count (browser) | {ms(lat['planner']['p50'])} "
                    f"({lat['planner']['p50'] / lat['floor']['p50']:.2f}× floor) | floor {ms(lat['floor']['p50'])}; "
                    "goal ≤ 1.3× floor |")
    if "approve" in out:
        rows.append(f"| /approve α change (15-test / 50-test trace) | {out['approve']['refits']:.1f} s / "
                    f"{out['approve']['adversary']:.1f} s | goal < 300 ms to a first answer |")
    if "hol" in out:
        hol = out["hol"]
        alone = ms(hol["alone"]["p50"])
        for action, what in (("approve", "/approve computes"), ("upload", "a 50,000-step upload on /session"),
                             ("ci", "`/ci?condition=n > 1e30000000 +/- 0.1` opens")):
            if action in hol:
                d = hol[action]["during"]
                rows.append(f"| another user's planner change while {what} | median {ms(d['p50'])}, worst "
                            f"{ms(d['max'])} (action {hol[action]['action_seconds']:.1f} s; {alone} otherwise) | "
                            "unchanged within noise |")
    if "sessions" in out:
        cells = "; ".join(f"N = {s['n']}: {ms(s['latency']['p50'])} / {ms(s['latency']['p95'])}, "
                          f"{len(s['errors'])} errors, opened in {s['open_seconds']:.0f} s, "
                          f"{s['rss_per_session']:.1f} MiB per idle session" for s in out["sessions"])
        rows.append(f"| N sessions each changing the planner (p50 / p95) | {cells} | N = 50: p95 < 500 ms; "
                    "< 30 MB per idle session |")
    if "churn" in out:
        c = out["churn"]
        rows.append(f"| memory after {c['count']} sessions opened and closed one by one | "
                    f"+{c['rss_after'] - c['rss_before']:.1f} MiB once expired; sessions {c['after']['sessions']}, "
                    f"views and models {c['after']['meter_dashboard_objects'] - c['before']['meter_dashboard_objects']:+d}"
                    " | back to baseline once sessions expire |")
    if "loads" in out:
        loads = out["loads"]
        floor = loads["floor"]["seconds"]["p50"]
        first = " / ".join(f"{ms(loads[p]['seconds']['p50'])} ({loads[p]['seconds']['p50'] / floor:.1f}×)"
                           for p in ("planner", "session", "approve") if p in loads)
        rows.append(f"| first render, planner / session / approve | {first} | floor {ms(floor)}; goal ≤ 1.5× floor |")
        wire = max(loads[p]["http_bytes"] + loads[p]["ws_bytes"] for p in loads if p != "floor")
        rows.append(f"| first load, bytes | at most {mib(wire)} on the wire (largest page) | goal ≤ 2 MiB |")
    if "cost" in out:
        opens, changes = out["cost"]["open"], out["cost"]["change"]
        cells = " / ".join(f"{opens[p] * 1000:,.0f} ms ({opens[p] / opens['floor']:.1f}×)"
                           for p in ("planner", "session", "approve") if p in opens)
        rows.append(f"| server CPU per session opened: planner / session / approve | {cells} | floor "
                    f"{opens['floor'] * 1000:,.0f} ms; goal ≤ 3× floor |")
        rows.append(f"| server CPU per planner change → number | {changes['planner'] * 1000:,.1f} ms "
                    f"({changes['planner'] / changes['floor']:.1f}× floor) | floor {changes['floor'] * 1000:,.1f} ms; "
                    "goal ≤ 1.5× floor |")
        if "message" in out["cost"]:
            message = out["cost"]["message"]
            rows.append(f"| planner change → messages sent | at most {message['messages']}, median "
                        f"{message['bytes']:,.0f} bytes | one message carrying only what changed |")
    if "ci" in out:
        ci = out["ci"]
        rows.append(f"| server CPU, messages and bytes per /ci change → number | {ci['cpu'] * 1000:,.1f} ms, "
                    f"{ci['messages']:.0f} messages, {ci['bytes'] / 1024:.1f} KiB | before issue 32: 35–42 ms, 2 messages, 12.5 KiB; goal: no growth |")
    for client, figures in out.get("room", {}).items():
        rows.append(f"| {figures['n']} people open the planner at once ({client}): header / numbers, median and "
                    f"last | {figures['header_p50']:.1f} / {figures['header_max']:.1f} s; {figures['numbers_p50']:.1f} / "
                    f"{figures['numbers_max']:.1f} s; {len(figures['errors'])} errors | numbers for the last < 10 s |")
    if "engine" in out:
        rows.extend(engine.table_rows(out["engine"]))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter runs")
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated parts: " + ", ".join(PARTS))
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"--only must name parts from {', '.join(PARTS)}; got {', '.join(sorted(unknown))}")
    print(machine_note(), flush=True)
    out = run_parts(parts, args.quick)
    print()
    print("\n".join(table(out)))
    print(machine_note())


if __name__ == "__main__":
    main()
