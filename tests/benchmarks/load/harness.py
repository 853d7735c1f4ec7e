"""What every load script shares: servers on free ports, their memory, browsers, timing helpers.

- :class:`Server`: a real ``meter-dashboard serve`` (or the floor app) in a child process on a
  free port, its resident memory (``/proc``), and, for the dashboard started through
  :mod:`tests.benchmarks.load.stats_server`, a count of live objects (``/_perf/stats``).
- :func:`chromium`: Debian's chromium through Playwright (never a downloaded browser).
- :func:`page_load`: one cold page load (a new browser context: empty cache) with the bytes on
  the wire (Chrome DevTools Protocol ``Network.loadingFinished`` ``encodedDataLength`` for
  HTTP, plus websocket payloads), the time until the page's NUMBER is on screen (the text of its
  answer, not a "computing…" placeholder), and the time until its live controls are.
- :func:`percentile`, :func:`summary`: the figures the scripts print.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = os.environ.get("METER_DASHBOARD_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

#: The element holding each page's first number (its text is timed: :data:`NUMBER`).
READY = {
    "planner": ".label-count-incremental",
    "session": ".meter-signal",
    "ci": ".ci-labels",
    "ladder": ".ladder-best",
    "compare": ".compare-p",
    "approve": ".approve-count",
    "floor": ".floor-count",
}

#: True when ``selector`` (searched through Panel's nested shadow roots) shows ``text``; polled
#: every animation frame (Playwright's ``expect`` backs off to 1 s and would inflate a latency).
#: Arguments ``[selector, text, how]``: ``how`` is ``"equals"`` or ``"contains"``; a ``null`` text
#: waits for any text at all.  Every browser benchmark uses this one function.
#: The first element matching ``sel`` in the document or any shadow root under it (JavaScript, inlined below).
_FIND = """  const find = (root) => {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const node of root.querySelectorAll('*')) {
      if (node.shadowRoot) { const f = find(node.shadowRoot); if (f) return f; }
    }
    return null;
  };
"""
SHOWS = """([sel, text, how]) => {
""" + _FIND + """  const el = find(document);
  if (el === null) return false;
  const t = el.textContent.trim();
  if (text === null) return t.length > 0;
  return how === "contains" ? t.includes(text) : t === text;
}"""


#: True when ``selector`` (through shadow roots, first in document order) is on screen and shows a number:
#: a digit and no "computing" (the planner's count first shows "computing…"; a page's first answer shows
#: the number itself).  Argument ``[selector]``.
NUMBER = """([sel]) => {
""" + _FIND + """  const el = find(document);
  if (el === null || el.getClientRects().length === 0) return false;
  if (getComputedStyle(el).visibility === 'hidden') return false;
  const t = el.textContent.trim();
  return /[0-9]/.test(t) && !t.includes('computing');
}"""

#: True when the page's live controls are on screen: the dashboard's view is built and has taken the first
#: answer's place (no ``.md-first[data-live]`` left), or the floor app's input shows.
LIVE = """() => {
  if (document.querySelector('.md-first[data-live]')) return false;
  if (document.querySelector('.md-page.md-ready')) return true;
  const sel = 'input';
""" + _FIND + """
  const box = find(document);
  return box !== null && box.getClientRects().length > 0;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("BOKEH_LOG_LEVEL", "error")
    return env


class Server:
    """A server in a child process: ``Server.dashboard(...)`` or ``Server.floor(...)``; a context manager."""

    def __init__(self, argv: list[str], port: int, ready_path: str, log: Path | None = None):
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.argv = argv
        self.ready_path = ready_path
        self.log_path = log or Path(f"/tmp/meter-dashboard-load-{port}.log")
        self.proc: subprocess.Popen | None = None

    @classmethod
    def dashboard(cls, *options: str, stats: bool = True, port: int | None = None) -> Server:
        """``meter-dashboard serve`` with ``options``; with ``stats`` the ``/_perf/stats`` route is added."""
        port = port or free_port()
        module = "tests.benchmarks.load.stats_server" if stats else "meter_dashboard"
        argv = [sys.executable, "-m", module, "serve", "--port", str(port), "--no-show", *options]
        return cls(argv, port, "/docs")  # answered without creating a session

    @classmethod
    def floor(cls, *options: str, port: int | None = None) -> Server:
        """The floor app (one input, one HTML pane, a 1,000-point line) with the dashboard's server settings."""
        port = port or free_port()
        argv = [sys.executable, "-m", "tests.benchmarks.load.floor_app", "--port", str(port), *options]
        return cls(argv, port, "/")  # the index page: no session

    def start(self, timeout: float = 120) -> Server:
        log = open(self.log_path, "w")
        # its own process group: stop() ends the processes --num-procs forks too (a signal to the first one
        # alone leaves them serving the port, orphaned)
        self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=child_env(),
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}; see {self.log_path}")
            if self._listening():
                break
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server did not start within {timeout} s; see {self.log_path}")
            time.sleep(0.25)
        return self

    def _listening(self) -> bool:
        try:
            with urllib.request.urlopen(self.base + self.ready_path, timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        """End the server and every process it forked (its process group)."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # whatever is left of the group (forked children)
        self.proc.wait()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ measurements
    def pids(self) -> list[int]:
        """The server process and its children (``--num-procs`` forks)."""
        pids = [self.proc.pid]
        with contextlib.suppress(OSError):
            for child in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split():
                pids.append(int(child))
        return pids

    def rss_mib(self) -> float:
        """Resident memory of the server (all its processes), MiB."""
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        return total / 1024

    def cpu_seconds(self) -> float:
        """User + system CPU time the server used so far (all its processes)."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / ticks

    def stats(self, trim: bool = False) -> dict:
        """Live objects in the server (``/_perf/stats``; only with ``Server.dashboard(stats=True)``)."""
        with urllib.request.urlopen(self.base + "/_perf/stats" + ("?trim=1" if trim else ""), timeout=60) as r:
            return json.loads(r.read())


# ---------------------------------------------------------------------- browsers
@contextlib.contextmanager
def chromium():
    """A headless Debian chromium (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def clock_script(selector: str) -> str:
    """A page's init script noting when its number (``selector``: :data:`NUMBER`) and live controls (:data:`LIVE`) show.

    ``window.__mdNumber`` and ``window.__mdLive``: milliseconds from navigation start, in the page's own clock,
    (the callers take the later of the number's arrival and Chromium's first contentful paint: on screen),
    checked on every change of the document while it is parsed (the answer of the first response) and on
    every frame (a number inside the live view's shadow roots); a check from outside the page would wait for
    a busy main thread and time that instead.
    """
    return f"""(() => {{
      const number = {NUMBER}, live = {LIVE}, sel = {json.dumps(selector)};
      window.__mdNumber = null; window.__mdLive = null; window.__mdShift = 0;
      new PerformanceObserver((list) => {{  // Chromium's layout-shift score, as its Web Vitals count it
        for (const e of list.getEntries()) {{ if (!e.hadRecentInput) window.__mdShift += e.value; }}
      }}).observe({{type: "layout-shift", buffered: true}});
      const check = () => {{
        if (window.__mdNumber === null && number([sel])) window.__mdNumber = performance.now();
        if (window.__mdLive === null && window.__mdNumber !== null && live()) window.__mdLive = performance.now();
      }};
      new MutationObserver(check).observe(document, {{subtree: true, childList: true, characterData: true}});
      const frame = () => {{ check(); if (window.__mdLive === null) requestAnimationFrame(frame); }};
      requestAnimationFrame(frame);
    }})();"""


def page_load(browser, url: str, selector: str, timeout: float = 120) -> dict:
    """Load ``url`` in a new context (cold cache) until ``selector`` shows its number and the controls are live.

    Returns ``seconds`` (navigation start to the number in ``selector`` on screen: :data:`NUMBER`),
    ``live_seconds`` (to the live controls: :data:`LIVE`), ``paint_seconds`` (Chromium's first
    contentful paint), all in the page's clock, ``http_bytes`` (encoded bytes of every HTTP response, headers included, as
    Chrome counts them), ``ws_bytes`` (websocket payloads both ways, as sent: the server does not
    compress them), ``requests`` and ``decoded_bytes`` (the same responses uncompressed), ``layout_shift``
    (Chromium's layout-shift score from navigation until 300 ms after the controls are live).
    """
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    totals = {"http_bytes": 0, "ws_bytes": 0, "requests": 0, "decoded_bytes": 0}
    sizes: dict[str, int] = {}

    def finished(event):
        totals["http_bytes"] += int(event.get("encodedDataLength", 0))
        totals["requests"] += 1

    def received(event):
        sizes[event["requestId"]] = sizes.get(event["requestId"], 0) + int(event.get("dataLength", 0))

    def frame(event):
        payload = event["response"]["payloadData"]
        binary = event["response"].get("opcode") == 2
        totals["ws_bytes"] += (len(payload) * 3) // 4 if binary else len(payload.encode("utf-8"))

    cdp.on("Network.loadingFinished", finished)
    cdp.on("Network.dataReceived", received)
    cdp.on("Network.webSocketFrameReceived", frame)
    cdp.on("Network.webSocketFrameSent", frame)
    page.add_init_script(clock_script(selector))
    try:
        page.goto(url, wait_until="commit", timeout=timeout * 1000)
        page.wait_for_function("() => window.__mdLive !== null", polling=100, timeout=timeout * 1000)
        number = page.evaluate("window.__mdNumber")
        totals["live_seconds"] = page.evaluate("window.__mdLive") / 1000
        page.wait_for_timeout(300)  # late requests (fonts, icons) and the last websocket frames
        totals["layout_shift"] = page.evaluate("window.__mdShift")  # once the live view has taken over
        paint = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        totals["paint_seconds"] = paint / 1000 if paint is not None else math.nan  # navigation start -> paint
        # on screen: in the document AND painted (a number parsed while the stylesheet is still on its way is not seen)
        totals["seconds"] = max(number, paint or 0.0) / 1000
        totals["decoded_bytes"] = sum(sizes.values())
    finally:
        context.close()
    return totals


# ---------------------------------------------------------------------- figures
def percentile(values, q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation; nan for no values."""
    data = sorted(values)
    if not data:
        return math.nan
    pos = (len(data) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summary(values) -> dict:
    """n, median, p95 and max of ``values``."""
    values = list(values)
    return {"n": len(values), "p50": percentile(values, 50), "p95": percentile(values, 95),
            "max": max(values) if values else math.nan}


def ms(seconds: float) -> str:
    return "n/a" if seconds is None or math.isnan(seconds) else f"{seconds * 1000:,.0f} ms"


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.2f} MiB"


def machine_note() -> str:
    """Cores and load, printed with every figure (the machine is shared)."""
    load = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
