"""``meter-dashboard serve`` exactly as the command line runs it, plus ``/_perf/stats`` for the load scripts.

    python -m tests.benchmarks.load.stats_server serve --port 5100 --no-show [serve options]

``/_perf/stats`` (JSON; ``?trim=1`` also returns freed heap to the system and reports the
resident memory before and after) counts what is alive in the server after a full garbage collection:
Bokeh sessions, documents, Panel's per-session registries, and the instances of every
``meter_dashboard`` class (views, models) — so a script can check that closing sessions
frees them (no per-session object kept by a module-level cache or watcher).  Test use only:
the route is added here, never by ``meter-dashboard serve``.
"""
from __future__ import annotations

import collections
import ctypes
import gc
import json
import sys


def _counts() -> dict:
    import panel as pn
    from bokeh.document import Document

    gc.collect()
    classes: collections.Counter = collections.Counter()
    documents = 0
    for obj in gc.get_objects():
        kind = type(obj)
        module = kind.__dict__.get("__module__")
        if isinstance(module, str) and module.startswith("meter_dashboard"):
            classes[f"{module}.{kind.__qualname__}"] += 1
        elif isinstance(obj, Document):
            documents += 1
    sessions = 0
    for server, _, _ in list(pn.state._servers.values()):
        sessions += len(server.get_sessions())
    return {
        "sessions": sessions,
        "documents": documents,
        "panel_views": len(pn.state._views),
        "panel_locations": len(pn.state._locations),
        "panel_periodic_callbacks": sum(len(v) for v in pn.state._periodic.values()),
        "meter_dashboard_objects": sum(classes.values()),
        "classes": dict(classes.most_common()),
    }


def _rss_kib() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _stats_route():
    from tornado.web import RequestHandler

    class StatsHandler(RequestHandler):
        def get(self):
            counts = _counts()
            if self.get_argument("trim", ""):  # hand freed heap pages back to the system (glibc)
                counts["rss_before_trim_kib"] = _rss_kib()
                ctypes.CDLL("libc.so.6").malloc_trim(0)
                counts["rss_after_trim_kib"] = _rss_kib()
            self.set_header("Content-Type", "application/json")
            self.write(json.dumps(counts))

    return (r"/_perf/stats", StatsHandler)


def main(argv=None) -> int:
    from meter_dashboard import cli
    from meter_dashboard.app import pages

    serve = pages.serve

    def serve_with_stats(*args, extra_patterns=(), **kwargs):
        return serve(*args, extra_patterns=[*extra_patterns, _stats_route()], **kwargs)

    pages.serve = serve_with_stats
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
