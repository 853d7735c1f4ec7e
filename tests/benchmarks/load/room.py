"""A room full of people: N browsers open the planner's shared link at the same moment (issue 19).

Everyone in a budget meeting clicks the same link at once.  Measured per person: when the header
showed (the first response painted), when the numbers showed (the incremental count of the
paper's example, 38,005, on screen: since issue 29 the first response carries it) and when the live
controls did (the view built and in the answer's place, its own count in the document); reported:
the median and the last one, and the server's CPU.  A browser's times count from that person's own
navigation start (their click): the harness makes the N browser contexts first, which takes seconds
on a 2-core machine and is no part of a person's wait, then the N navigations start together (the
report says within how long of each other).

Two clients, the same scenario:

- ``browser`` (default): N Playwright contexts (cold caches, like N laptops) sharing one Debian
  chromium, all navigating at once.  The figures include chromium rendering N pages on the same
  machine as the server — on a 2-core machine that competes with the server for the cores.
- ``protocol``: N clients that do on the wire what a cold browser does, without rendering (GET the
  page, fetch every script and stylesheet it names, gzip accepted, then the Bokeh protocol of
  :mod:`.protocol` until the view is built and the count is in the document): the server's
  share alone.

    python -m tests.benchmarks.load.room [--n 50] [--client browser|protocol] [--num-procs 1]
"""
from __future__ import annotations

import argparse
import asyncio
import re
import time

from .harness import CHROMIUM, LAUNCH_ARGS, SHOWS, Server, clock_script, machine_note, percentile
from .planner import QUERY
from .protocol import Session

HEADER = "header.md-header"
NUMBER = (".label-count-incremental", "38,005")  # the paper's example (ease.ml/meter Secs. 4-5)
_ASSETS = re.compile(r'(?:src|href)="((?:static|components)/[^"]+)"')


async def _browser_person(browser, url: str, start: float, timeout: float) -> dict:
    context = await browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = await context.new_page()
        await page.add_init_script(clock_script(NUMBER[0]))  # the moments, in the page's own clock
        navigation = time.perf_counter() - start
        await page.goto(url, wait_until="commit", timeout=timeout * 1000)
        await page.locator(HEADER).wait_for(state="visible", timeout=timeout * 1000)
        await page.wait_for_function(SHOWS, arg=[NUMBER[0], NUMBER[1], "equals"], polling=100,
                                     timeout=timeout * 1000)
        await page.wait_for_function("() => window.__mdLive !== null", polling=100, timeout=timeout * 1000)
        paint = await page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        number, live = await page.evaluate("[window.__mdNumber, window.__mdLive]")
        # from this person's click (navigation start, in the page's clock); ``navigation``: when it came after
        # the common start (the N contexts are made first, on the same machine: a laptop has its browser open)
        # on screen: the number in the document and painted (the first paint waits for the stylesheet)
        return {"header": (paint or number) / 1000, "numbers": max(number, paint or 0.0) / 1000, "live": live / 1000,
                "navigation": navigation}
    except Exception as exc:  # noqa: BLE001 - counted and reported
        return {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    finally:
        await context.close()


async def browsers(base: str, n: int, timeout: float = 300) -> list[dict]:
    """N contexts of one chromium open ``/planner`` at the same moment."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            warm = await _browser_person(browser, base + "/planner" + QUERY, time.perf_counter(), timeout)
            if "error" in warm:
                raise RuntimeError(f"warm-up failed: {warm['error']}")
            start = time.perf_counter()
            return list(await asyncio.gather(*(_browser_person(browser, base + "/planner" + QUERY, start, timeout)
                                               for _ in range(n))))
        finally:
            await browser.close()


async def _protocol_person(base: str, start: float, timeout: float) -> dict:
    from tornado.httpclient import AsyncHTTPClient

    client = AsyncHTTPClient(max_clients=64)
    try:
        page = await client.fetch(base + "/planner" + QUERY, request_timeout=timeout, connect_timeout=timeout,
                                  decompress_response=True)
        header = time.perf_counter() - start
        css = NUMBER[0].lstrip(".")
        text = page.body.decode("utf-8")
        # the number in the first response (what a person reads before any script ran), or with the view
        numbers = header if re.search(rf'class="[^"]*\b{css}\b[^"]*">{NUMBER[1]}<', text) else None
        assets = dict.fromkeys(_ASSETS.findall(text))
        await asyncio.gather(*(client.fetch(f"{base}/{path}", request_timeout=timeout, connect_timeout=timeout,
                                            decompress_response=True)
                               for path in assets))
        session = await Session.connect(base, "/planner", page.body, timeout=timeout)
        pane = await session.wait_text_id(css, timeout=timeout)  # the view arrives computing, then the numbers
        await session.wait_value(pane, css, NUMBER[1], timeout=timeout)
        live = time.perf_counter() - start
        await session.close()
        return {"header": header, "numbers": live if numbers is None else numbers, "live": live,
                "assets": len(assets)}
    except Exception as exc:  # noqa: BLE001 - counted and reported
        return {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}


async def protocol(base: str, n: int, timeout: float = 300) -> list[dict]:
    """N protocol clients (assets fetched like a cold browser) open ``/planner`` at the same moment."""
    warm = await _protocol_person(base, time.perf_counter(), timeout)
    if "error" in warm:
        raise RuntimeError(f"warm-up failed: {warm['error']}")
    start = time.perf_counter()
    return list(await asyncio.gather(*(_protocol_person(base, start, timeout) for _ in range(n))))


def run(server: Server, n: int, client: str) -> dict:
    cpu0 = server.cpu_seconds()
    people = asyncio.run((browsers if client == "browser" else protocol)(server.base, n))
    done = [p for p in people if "numbers" in p] or [{"header": float("nan"), "numbers": float("nan"),
                                                      "live": float("nan")}]
    errors = [p["error"] for p in people if "error" in p]
    starts = [p["navigation"] for p in done if "navigation" in p]
    return {
        "navigation_first": min(starts, default=0.0), "navigation_last": max(starts, default=0.0),
        "n": n, "client": client, "errors": errors, "server_cpu_seconds": server.cpu_seconds() - cpu0,
        "header_p50": percentile([p["header"] for p in done], 50), "header_max": max(p["header"] for p in done),
        "numbers_p50": percentile([p["numbers"] for p in done], 50), "numbers_max": max(p["numbers"] for p in done),
        "live_p50": percentile([p["live"] for p in done], 50), "live_max": max(p["live"] for p in done),
    }


def report(figures: dict) -> str:
    started = ""
    if figures["client"] == "browser":  # the times are from each person's own navigation start
        started = (f" (all navigations began within {figures['navigation_last'] - figures['navigation_first']:.2f} s "
                   f"of each other, {figures['navigation_first']:.1f} s after the start: the contexts are made "
                   f"first; times are from each person's navigation start)")
    return (f"{figures['n']} {figures['client']} clients open /planner at once{started}: header shown after "
            f"{figures['header_p50']:.1f} s (median) / {figures['header_max']:.1f} s (last); numbers shown after "
            f"{figures['numbers_p50']:.1f} s (median) / {figures['numbers_max']:.1f} s (the last one); live "
            f"controls after {figures['live_p50']:.1f} s (median) / {figures['live_max']:.1f} s (the last one); "
            f"{len(figures['errors'])} errors; server CPU {figures['server_cpu_seconds']:.0f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--client", choices=("browser", "protocol"), default="browser")
    parser.add_argument("--num-procs", default=None, help="passed to serve (one server, N processes)")
    parser.add_argument("--quick", action="store_true", help="10 people")
    args = parser.parse_args(argv)
    extra = ["--num-procs", args.num_procs] if args.num_procs is not None else []
    with Server.dashboard(*extra, stats=False) as server:
        print(machine_note(), flush=True)
        figures = run(server, 10 if args.quick else args.n, args.client)
        print(report(figures), flush=True)
        for error in figures["errors"][:5]:
            print("  error:", error)
        print(machine_note(), flush=True)


if __name__ == "__main__":
    main()
