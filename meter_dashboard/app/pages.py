"""Whole pages: the served layer above the views (bounds -> models -> views -> pages).

Every page component is a :class:`~meter_dashboard.ui.base.DashboardView`; this module
is the only place templates are built, so the same components render unwrapped in
notebooks.  ``apps/*.py``, ``meter-dashboard serve`` and the tests all call :func:`build`.

Each served page

- loads only the Panel extensions its component declares (``pn.extension(*names)`` in
  the session, so Panel sends that page's JavaScript and no other page's);
- uses Panel's Vanilla template (no web fonts, no design-system bundle: it renders
  offline and first paints fast), with a viewport tag for phones and projectors and
  Panel's theme toggle (``?theme=dark`` works as a link);
- has the navigation to the others, in the order a team uses them.

``/`` is a landing page (``templates/index.html``): what the tool answers and the pages.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import panel as pn

from ..core import runtime
from ..core.serving import DEFAULT_ADDRESS, DEFAULT_THREADS, SESSION_LIFETIME_MS, server_options
from ..ui.style import HTML, Bar, esc

__all__ = ["PAGES", "Page", "SITE_TITLE", "available_pages", "build", "landing_items", "INDEX_TEMPLATE", "docs_html", "serve"]

SITE_TITLE = "meter-dashboard"
INDEX_TEMPLATE = Path(__file__).parent / "templates" / "index.html"


@dataclass(frozen=True)
class Page:
    """One served page: its title, the view module providing ``page()``, and one line on what it answers."""

    title: str
    module: str
    summary: str


#: name -> Page, in navigation order.  The URL of each page is /<name>.
PAGES = {
    "planner": Page("Planner", "meter_dashboard.meter.view",
                    "How many labels must the test set have for T more development steps within ε, with "
                    "probability 1 − δ — and what does a label budget buy?"),
    "session": Page("Session replay", "meter_dashboard.session.view",
                    "Replay a development history through the five-colour meter: signals, the distributional "
                    "bound, budget and alarms."),
    "ci": Page("ease.ml/ci", "meter_dashboard.ci.view",
               "Labels for a CI pass/fail condition such as n − o > 0.02 ± 0.01, and replay of a commit trace."),
    "ladder": Page("Ladder", "meter_dashboard.leaderboard.view",
                   "A leaderboard that stays honest under adaptive submissions, and the labels it needs."),
    "compare": Page("P(A>B)", "meter_dashboard.comparison.view",
                    "Is pipeline A really better than B across training runs? Significant, meaningful, or neither."),
    "approve": Page("Approve", "meter_dashboard.approvals.view",
                    "Approve model modifications on a reused test set with a controlled rate of bad approvals "
                    "(SRGP)."),
    "testsets": Page("Test sets", "meter_dashboard.testsets.view",
                     "Guarded test sets, live: developers submit predictions and see only the meter's signal or "
                     "pass/fail, while the budget is enforced."),
}


def available_pages() -> list[str]:
    """The page names whose view modules exist, in navigation order (found without importing them)."""
    return [name for name, spec in PAGES.items() if importlib.util.find_spec(spec.module) is not None]


def landing_items() -> list[tuple[str, str, str]]:
    """(name, title, summary) of every available page, for the landing page."""
    return [(name, PAGES[name].title, PAGES[name].summary) for name in available_pages()]


def _nav(current: str) -> HTML:
    links = "".join(
        f'<a href="./{name}" class="{"md-nav-current" if name == current else ""}">{esc(PAGES[name].title)}</a>'
        for name in available_pages()
    )
    return HTML(f'<nav class="md-nav"><a href="./" class="md-nav-home">{SITE_TITLE}</a>{links}</nav>',
                sizing_mode="stretch_width")


_THEME_SWITCH = """
const url = new URL(window.location.href);
url.searchParams.set("theme", dark ? "default" : "dark");
window.location.href = url.toString();
"""


def _theme_toggle() -> pn.widgets.Button:
    """Light/dark switch: reloads the page with ``?theme=dark`` (or back), keeping the rest of its URL."""
    dark = pn.config.theme == "dark"
    button = pn.widgets.Button(label="☀ Light" if dark else "☾ Dark", button_type="light", width=90,
                               css_classes=["md-theme-toggle"], margin=(6, 10))
    button.js_on_click(args={"dark": dark}, code=_THEME_SWITCH)
    return button


def _page_template():
    """Panel's own page template (``panel.io.resources.BASE_TEMPLATE``) plus the head tags a phone needs."""
    from panel.io.resources import BASE_TEMPLATE

    return BASE_TEMPLATE.environment.from_string(
        "{% extends 'base.html' %}{% block postamble %}"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="description" content="{{ page_description | e }}">'
        "{% endblock %}"
    )


def build(name: str):
    """Page ``name``: a header with the navigation and the theme switch, then the view's controls and results.

    One root, no template: a template adds roots that make Bokeh ship MathJax (1.7 MiB) to
    every page, and a design-system bundle; this page loads Bokeh, Panel and the page's own
    extensions only.
    """
    if name not in PAGES:
        raise KeyError(f"page must be one of {', '.join(PAGES)}; got {name!r}")
    module = importlib.import_module(PAGES[name].module)
    view = module.page()
    pn.extension(*type(view).extensions)  # this session loads this page's extensions, no other page's
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        if pn.config.theme == "dark":
            from panel.theme import DarkTheme

            doc.theme = DarkTheme.bokeh_theme
        doc.template = _page_template()
        doc.template_variables["page_description"] = PAGES[name].summary
    header = Bar(_nav(name), _theme_toggle(), css_classes=["md-header"], sizing_mode="stretch_width")
    controls = view.controls()
    if controls is None:
        body = pn.Column(view.results(), sizing_mode="stretch_width", css_classes=["md-main"])
    else:
        body = Bar(pn.Column(controls, width=340, css_classes=["md-sidebar"]),
                   pn.Column(view.results(), sizing_mode="stretch_width", css_classes=["md-main"]),
                   sizing_mode="stretch_width", css_classes=["md-body", f"md-body-{name}"])
    return pn.Column(header, body, sizing_mode="stretch_width", css_classes=["md-page", f"md-page-{name}"])


def docs_html() -> str:
    """The README (from the installed package's metadata) as one offline HTML page, for ``/docs``."""
    from importlib import metadata

    from markdown_it import MarkdownIt  # Panel's own Markdown renderer

    try:
        text = metadata.metadata("meter-dashboard").get_payload() or ""
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        text = ""
    if not text.strip():
        readme = Path(__file__).resolve().parents[2] / "README.md"
        text = readme.read_text(encoding="utf-8") if readme.is_file() else "# meter-dashboard"
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{SITE_TITLE} · documentation</title><style>"
        "body{margin:0 auto;max-width:960px;padding:16px 24px 48px;font-family:'Helvetica Neue',Arial,"
        "'DejaVu Sans',sans-serif;line-height:1.5;color:#1b2733}pre{background:#f5f8fb;padding:10px;overflow-x:auto}"
        "code{background:#f5f8fb;padding:1px 3px}table{border-collapse:collapse}td,th{border:1px solid #dde5ee;"
        "padding:4px 8px}a{color:#0072B2}@media (prefers-color-scheme: dark){body{background:#212529;color:#e8eef4}"
        "pre,code{background:#2b3035}a{color:#56B4E9}}</style></head><body>"
        f'<p><a href="./">← {SITE_TITLE}</a></p>{body}</body></html>'
    )


def _docs_handler():
    from tornado.web import RequestHandler

    page = docs_html()  # rendered once per process

    class DocsHandler(RequestHandler):
        def get(self):
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.write(page)

    return DocsHandler


def serve(port: int = 5006, address: str | None = DEFAULT_ADDRESS, show: bool = True, pages=None,
          websocket_origin=None, *, num_threads: int = DEFAULT_THREADS, num_procs: int = 1,
          session_lifetime_ms: int = SESSION_LIFETIME_MS, extra_patterns=(), **kwargs):
    """Serve the pages (all available ones by default) and the landing page with one Bokeh server.

    Listens on ``address`` (this machine only by default); ``num_threads`` worker threads do the
    long work of every session (:data:`~meter_dashboard.core.serving.DEFAULT_THREADS`,
    :func:`meter_dashboard.core.runtime.configure`; 0 does it on the event loop);
    ``num_procs`` processes share the port (Bokeh's ``--num-procs``: a session lives in the
    process its websocket reached).  ``extra_patterns``: Tornado routes added beside the
    pages and ``/docs``.  The server settings are :func:`meter_dashboard.core.serving.server_options`;
    other keyword arguments go to ``pn.serve``.
    """
    names = pages or available_pages()
    apps = {name: (lambda n=name: build(n)) for name in names}
    runtime.configure(num_threads)
    options = server_options(port, address, websocket_origin=websocket_origin, num_procs=num_procs,
                             session_lifetime_ms=session_lifetime_ms,
                             extra_patterns=[(r"/docs", _docs_handler()), *extra_patterns])
    options.update(kwargs)
    return pn.serve(
        apps,
        show=show,
        title={name: f"{SITE_TITLE} · {PAGES[name].title}" for name in names},
        index=str(INDEX_TEMPLATE),
        **options,
    )
