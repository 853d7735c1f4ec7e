"""Figures measured in a browser (Debian chromium): first load and change -> number, pages vs the floor.

- :func:`first_loads`: each page loaded cold (a new browser context) until its first NUMBER is on
  screen (the text, not a "computing…" placeholder) and until its controls are live, interleaved with
  the floor app (measured to its own number the same way) round by round; time and bytes on the wire.
- :func:`change_latency`: planner δ change -> new regular count, and the floor's change ->
  count, alternated so both see the same machine load.

    python -m tests.benchmarks.load.browser_figures [--quick]
"""
from __future__ import annotations

import argparse
import itertools

from .harness import READY, Server, chromium, machine_note, mib, ms, page_load, summary
from .planner import DELTAS, FLOOR_VALUES, QUERY, browser_change

PAGES = ["planner", "session", "approve", "ci", "ladder", "compare"]


def first_loads(dashboard: Server, floor: Server, browser, pages=PAGES, rounds: int = 3) -> dict:
    """name -> {"seconds": summary, "http_bytes": median, "ws_bytes": median, "requests": n} (cold cache)."""
    urls = {name: (dashboard.base + "/" + name + (QUERY if name == "planner" else ""), READY[name])
            for name in pages}
    urls["floor"] = (floor.base + "/floor", READY["floor"])
    for url, selector in urls.values():  # warm the servers: each page's modules imported once
        page_load(browser, url, selector)
    samples: dict[str, list[dict]] = {name: [] for name in urls}
    for _ in range(rounds):
        for name, (url, selector) in urls.items():
            samples[name].append(page_load(browser, url, selector))
    figures = {}
    for name, loads in samples.items():
        figures[name] = {
            "seconds": summary(load["seconds"] for load in loads),
            "live_seconds": summary(load["live_seconds"] for load in loads),
            "paint_seconds": summary(load["paint_seconds"] for load in loads),
            "http_bytes": sorted(load["http_bytes"] for load in loads)[len(loads) // 2],
            "decoded_bytes": sorted(load["decoded_bytes"] for load in loads)[len(loads) // 2],
            "ws_bytes": sorted(load["ws_bytes"] for load in loads)[len(loads) // 2],
            "requests": loads[-1]["requests"],
            "layout_shift": max(load["layout_shift"] for load in loads),
        }
    return figures


def change_latency(dashboard: Server, floor: Server, browser, rounds: int = 12) -> dict:
    """"planner" and "floor" -> summary of change -> number seconds in a browser (alternating)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        planner, flo = context.new_page(), context.new_page()
        planner.goto(dashboard.base + "/planner" + QUERY)
        planner.locator(READY["planner"]).first.wait_for(state="visible", timeout=120_000)
        flo.goto(floor.base + "/floor")
        flo.locator(READY["floor"]).first.wait_for(state="visible", timeout=120_000)
        deltas, values = itertools.cycle(DELTAS), itertools.cycle(FLOOR_VALUES)
        for _ in range(2):  # warm-up: first events of a session
            browser_change(planner, "planner", next(deltas))
            browser_change(flo, "floor", next(values))
        times = {"planner": [], "floor": []}
        for _ in range(rounds):
            planner.bring_to_front()
            times["planner"].append(browser_change(planner, "planner", next(deltas)))
            flo.bring_to_front()
            times["floor"].append(browser_change(flo, "floor", next(values)))
    finally:
        context.close()
    return {name: summary(values) for name, values in times.items()}


def report_first_loads(figures: dict) -> list[str]:
    """The number on screen (its text, not a placeholder), first paint and live controls, each page vs the floor."""
    floor, floor_live = figures["floor"]["seconds"]["p50"], figures["floor"]["live_seconds"]["p50"]
    lines = ["| page | number on screen (median) | × floor | first paint | live controls | × floor | "
             "on the wire (HTTP + websocket) | HTTP uncompressed | requests | layout shift (worst) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, f in figures.items():
        wire = f["http_bytes"] + f["ws_bytes"]
        live = f["live_seconds"]["p50"]
        lines.append(f"| {name} | {ms(f['seconds']['p50'])} | {f['seconds']['p50'] / floor:.2f} | "
                     f"{ms(f['paint_seconds']['p50'])} | {ms(live)} | {live / floor_live:.2f} | {mib(wire)} "
                     f"({mib(f['http_bytes'])} + {mib(f['ws_bytes'])}) | {mib(f['decoded_bytes'])} | "
                     f"{f['requests']} | {f['layout_shift']:.3f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--num-threads", default=None, help="passed to both servers")
    args = parser.parse_args(argv)
    extra = ["--num-threads", args.num_threads] if args.num_threads is not None else []
    with Server.dashboard(*extra) as dash, Server.floor(*extra) as floor, chromium() as browser:
        print(machine_note())
        loads = first_loads(dash, floor, browser, rounds=2 if args.quick else 5)
        print("\n".join(report_first_loads(loads)))
        lat = change_latency(dash, floor, browser, rounds=6 if args.quick else 20)
        for name, s in lat.items():
            print(f"{name} change -> number: median {ms(s['p50'])}, p95 {ms(s['p95'])} (n={s['n']})")
        print(f"planner / floor: {lat['planner']['p50'] / lat['floor']['p50']:.2f}")
        print(machine_note())


if __name__ == "__main__":
    main()
