"""``meter-dashboard serve``: start the dashboard (the one verb that imports Panel)."""
from __future__ import annotations

from .._validation import check_int


def register(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the dashboard in a browser",
        description="Serve every dashboard page (planner, session, ci, ladder, compare, approve) "
        "with one Bokeh server; open http://localhost:PORT/planner.",
    )
    p.add_argument("--port", default=5006, help="port to listen on (default 5006; 0 picks a free one)")
    p.add_argument("--address", default=None, help="address to bind (default: all interfaces)")
    p.add_argument("--no-show", action="store_true", help="do not open a browser tab")
    p.add_argument("--pages", default=None, help="comma-separated page names (default: all)")
    p.add_argument("--store", default=None, help="guarded test sets' store: sqlite:///PATH or postgresql+psycopg://... "
                   "(default $METER_DASHBOARD_STORE, else a SQLite file in the user's data directory)")
    p.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=None,
        help="host[:port] allowed to connect (repeatable; default localhost and 127.0.0.1)",
    )
    p.set_defaults(run=run)


def run(args) -> int:
    port = check_int("--port", args.port, minimum=0, maximum=65535)
    from .. import pages  # Panel is imported here, never by the other verbs

    names = None
    if args.pages:
        names = [n.strip() for n in args.pages.split(",") if n.strip()]
        unknown = [n for n in names if n not in pages.available_pages()]
        if unknown:
            from .._validation import InputError

            raise InputError("--pages", "names from " + ", ".join(pages.available_pages()), args.pages)
    from ..testsets import api, store

    store_url = store.configure(args.store)  # opened on first use: the other pages never need it
    pages.serve(port=port, address=args.address, show=not args.no_show, pages=names,
                websocket_origin=args.allow_websocket_origin, extra_patterns=api.patterns(store_url))
    return 0
