"""Whole pages: the served layer above the views (bounds -> models -> views -> pages).

Every page component is a :class:`~meter_dashboard.ui.base.DashboardView`; this module
is the only place templates are built, so the same components render unwrapped in
notebooks.  ``apps/*.py``, ``meter-dashboard serve`` and the tests all call :func:`build`.

Each served page

- answers its first request with the header bar (every page, Docs, the light/dark switch) and its
  answer for the link's settings (:mod:`meter_dashboard.app.first_answer`), as plain HTML painted
  before any script loaded, with the answer in the title and the link preview; then builds its view
  once the browser has connected (:func:`build`), which takes the answer's place once it shows the
  same number: in a full room everyone sees the number at once and the controls follow;
- loads only the Panel extensions its component declares (``pn.extension(*names)`` in
  the session, so Panel sends that page's JavaScript and no other page's);
- uses Panel's page template (no web fonts, no design-system bundle: it renders offline and
  first paints fast) with a viewport tag for phones and projectors, the dashboard's one
  stylesheet, and the dark theme as a link (``?theme=dark``), every widget themed
  (:class:`meter_dashboard.ui.style.DashboardDesign`).

``/`` (the landing page) and ``/docs`` (the README) are :mod:`meter_dashboard.app.documents`.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import gc
import importlib
import logging
import time
import weakref
from pathlib import Path

import panel as pn
import param
from panel.io.state import set_curdoc

from ..core import runtime
from ..core.html import Markup, escape, render, snippet
from ..core.serving import DEFAULT_ADDRESS, DEFAULT_THREADS, SESSION_LIFETIME_MS, quiet_closed_writes, server_options
from ..ui import style
from ..ui.base import DashboardView
from ..ui.sections import one_message
from ..ui.style import HTML, Bar
from ..ui.urlstate import MAX_QUERY_CHARS
from . import documents, write_queue
from .first_answer import COMPUTING, first_answer, render_first
from .registry import PAGES, SITE_TITLE, Page, available_pages

__all__ = ["PAGES", "Page", "SITE_TITLE", "available_pages", "build", "view_classes",
           "page_template", "first_response", "serve", "serve_page"]

TEMPLATES = Path(__file__).parent / "templates"
log = logging.getLogger(__name__)


def view_classes(module) -> list[type[DashboardView]]:
    """The :class:`DashboardView` classes a page module defines (found without building one)."""
    return [obj for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, DashboardView) and obj.__module__ == module.__name__]


@functools.lru_cache(maxsize=1)
def page_template():
    """Panel's page template (``panel.io.resources.BASE_TEMPLATE``) with the shell's head tags and header.

    ``app/templates/page.html``, compiled once per process in Panel's own Jinja2 environment.
    """
    from panel.io.resources import BASE_TEMPLATE

    return BASE_TEMPLATE.environment.from_string((TEMPLATES / "page.html").read_text(encoding="utf-8"))


#: The first responses computed lately, by (page, theme, query): a room opening one link computes it once.
_FIRST: collections.OrderedDict = collections.OrderedDict()
_FIRST_KEPT = 256


def first_response(name: str, theme: str, query: str = "", url: str = "") -> tuple[str, str, str]:
    """(head tags, title, header + the page's answer) of page ``name`` for the link's ``query``.

    The answer is the page's headline for the URL's settings (:func:`~meter_dashboard.app.first_answer.first_answer`),
    readable before any script ran; the head carries it as the title and the link preview (``og:``, ``twitter:``;
    ``url`` is the page's address for ``og:url``).  Kept per page, theme and query (the last :data:`_FIRST_KEPT`).
    """
    key = (name, theme, query)
    kept = _FIRST.get(key)
    if kept is None:
        answer = first_answer(name, query)
        page = PAGES[name]
        title = f"{answer.headline} · {SITE_TITLE} {page.title}" if answer else f"{SITE_TITLE} · {page.title}"
        description = answer.sentence if answer else page.summary
        top = documents.header_html(name, theme) + render_first(answer, name, title=page.title, theme=theme, query=query)
        kept = (answer.headline if answer else title, description, str(escape(title)), Markup(top))
        # a pending exact count, and /approve's decisions not known yet (COMPUTING), are asked again next time
        if answer is None and name not in COMPUTING or answer is not None and "computing" not in answer.answer:
            _FIRST[key] = kept
            while len(_FIRST) > _FIRST_KEPT:
                _FIRST.popitem(last=False)
    else:
        _FIRST.move_to_end(key)
    preview, description, title, top = kept
    head = documents.head_html(description) + Markup(render("app/templates/preview.html", site=SITE_TITLE,
                                                            title=preview, description=description, url=url))
    return head, title, top


def _fill(root: pn.Column, name: str, module) -> None:
    """Build page ``name``'s view into ``root`` (once the browser has connected): one message."""
    try:
        view = module.page()
        controls = view.controls()
        if controls is None:
            body = pn.Column(view.results(), sizing_mode="stretch_width", css_classes=["md-main"])
        else:
            body = Bar(pn.Column(controls, width=340, css_classes=["md-sidebar"]),
                       pn.Column(view.results(), sizing_mode="stretch_width", css_classes=["md-main"]),
                       sizing_mode="stretch_width", css_classes=["md-body", f"md-body-{name}"])
    except Exception as exc:  # noqa: BLE001 - shown on the page (one line) and logged, never a blank page
        log.exception("page %s could not be built", name)
        body = HTML(snippet('<div class="md-error">This page could not be built: {{ what }}. Reload to try '
                            "again; if it persists, the server log has the details.</div>",
                            what=f"{type(exc).__name__}: {exc}"[:300]), sizing_mode="stretch_width")
    doc = pn.state.curdoc
    served = doc if doc is not None and doc.session_context is not None else None
    # two messages, in this order, before anything the view sends next: the view, then its readiness
    # (which hides the loading state). Sent together, BokehJS lays the view out beside the loading
    # state and keeps that width: the page scrolled sideways by 12 px.
    with one_message(served):
        root.objects = [body]
    with one_message(served):
        root.css_classes = [*root.css_classes, "md-ready"]


#: After each build the builder lets the event loop run this long (serving other requests meanwhile), so the
#: page's message (100-200 KB, written in several frames) reaches the network before the next build holds
#: the loop (5 ms: a room of 50 gets its last live page about 1 s sooner than with 20 ms, in the same order).
_FLUSH_SECONDS = 0.005
_QUEUES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> its pages waiting to be built
#: A view is built once no page was requested for this long (the room's first responses go out first) ...
ARRIVAL_QUIET_SECONDS = 0.15
#: ... or once it has waited this long for that (people who keep arriving do not hold everyone's views back).
ARRIVAL_WAIT_SECONDS = 3.0
_ARRIVALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> when a page was last requested


def _arrived() -> None:
    """Note that a page was requested now (its first response is being made on this process's loop)."""
    with contextlib.suppress(RuntimeError):  # no loop: a session made by hand (tests)
        _ARRIVALS[asyncio.get_running_loop()] = time.monotonic()


async def _after_arrivals() -> None:
    """Return once no page was requested for :data:`ARRIVAL_QUIET_SECONDS` (at most :data:`ARRIVAL_WAIT_SECONDS`).

    A first response costs the server a few milliseconds and carries the answer; a view costs hundreds and
    holds the event loop while it is built.  When a room opens a link at once, the views of the first
    to connect were built while the others' requests waited for the loop: the last person got the page
    (and its number) only after most views were built.  Waiting for the requests to stop first sends every
    first response, then builds the views in arrival order.
    """
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + ARRIVAL_WAIT_SECONDS
    while (quiet := time.monotonic() - _ARRIVALS.get(loop, 0.0)) < ARRIVAL_QUIET_SECONDS \
            and time.monotonic() < deadline:
        await asyncio.sleep(ARRIVAL_QUIET_SECONDS - quiet)


def _enqueue(root: pn.Column, name: str, module) -> None:
    """Queue this session's view for this process's builder (called when the browser reported ready)."""
    loop = asyncio.get_running_loop()
    queue = _QUEUES.get(loop)
    if queue is None:
        queue = _QUEUES[loop] = asyncio.Queue()
        # in an empty context: a task keeps the context it was created in, here this session's document
        contextvars.Context().run(loop.create_task, _builder(queue))
    queue.put_nowait((pn.state.curdoc, root, name, module))
    log.debug("page %s queued for building (%d waiting)", name, queue.qsize())


async def _builder(queue: asyncio.Queue) -> None:
    """Build the queued pages one at a time, in the order their browsers arrived, each sent before the next.

    A page's message (its whole view) is large and needs a few turns of the event loop to reach the
    network.  When every session built its view in its own ``document_ready`` handler, a room of
    people arriving together queued their builds back to back and every message left after the last
    build: with 10 people, everyone saw the numbers at the time of the last one.  Here each build
    runs under its document's lock (Bokeh's public ``with_locked_document``), then the loop has
    :data:`_FLUSH_SECONDS` to send it (and to answer other requests) before the next build: the first
    to arrive is the first to see the numbers.  No build starts while pages are still being requested
    (:func:`_after_arrivals`): a room's first responses, which carry the answer, go out first.
    """
    while True:
        await _build_next(queue)  # nothing of a built page is held here between builds (its memory goes with it)


async def _build_next(queue: asyncio.Queue) -> None:
    doc, root, name, module = await queue.get()
    await _after_arrivals()
    context = doc.session_context
    if context is None or context.destroyed:  # the browser left before its turn
        log.debug("page %s not built: its session ended before its turn", name)
        return
    try:
        # what the view asks to run once it is on screen (ui.lazy.on_screen) runs on the next tick, after this message
        await context.with_locked_document(functools.partial(_fill_in, root=root, name=name, module=module))
        log.debug("page %s built for session %s", name, context.id)
    except Exception:  # noqa: BLE001 - one page's failure must not stop the others' builds
        log.exception("page %s could not be built", name)
    await asyncio.sleep(_FLUSH_SECONDS)  # the event loop hands the page's message to the network first


def _fill_in(doc, *, root: pn.Column, name: str, module) -> None:
    with set_curdoc(doc):
        _fill(root, name, module)


def build(name: str):
    """Page ``name``: the first response carries the header and the answer for the link; the view follows.

    Everything that is the same for every visitor — the header bar, the template, the stylesheet —
    is built once per process (:mod:`meter_dashboard.app.documents`); the answer for the request's
    query is computed on the request (:func:`first_response`, kept per link), and both go out in the
    page's first response as plain HTML, before any JavaScript arrived.  The view itself is built when the browser has connected
    (``pn.state.onload``), in arrival order by this process's builder (:func:`_builder`), and arrives
    in one message; until then the document holds one empty column.  What a view asks to run once it is
    on screen it asks through :func:`meter_dashboard.ui.lazy.on_screen` (the next tick, after the view's
    message), since ``pn.state.onload`` runs at once in a session that has loaded.  One root, no Panel template (a template's extra roots make Bokeh ship MathJax, 1.7 MiB,
    and a design-system bundle): this page loads Bokeh, Panel and its own extensions only.
    Outside a server (a notebook, a script) the view is built at once.
    """
    if name not in PAGES:
        raise KeyError(f"page must be one of {', '.join(PAGES)}; got {name!r}")
    module = importlib.import_module(PAGES[name].module)
    extensions = sorted({e for cls in view_classes(module) for e in cls.extensions})
    doc = pn.state.curdoc
    served = doc is not None and doc.session_context is not None
    # this page's extensions only; a served session skips Panel's IDE signatures (``apply_signatures``), which
    # every call would otherwise rewrite for every Panel class (2.3 ms of server CPU per session opened)
    pn.extension(*extensions, design=style.DashboardDesign, **({"apply_signatures": False} if served else {}))
    root = pn.Column(sizing_mode="stretch_width", css_classes=["md-page", f"md-page-{name}"])
    if not served:
        _fill(root, name, module)
        return root
    write_queue.install()  # `panel serve apps/...` as much as `meter-dashboard serve`
    with contextlib.suppress(RuntimeError):  # no loop: a session made by hand (tests), no server to quiet
        quiet_closed_writes(asyncio.get_running_loop())  # the server's loop: a browser that leaves is no traceback
    theme = documents.theme_of(pn.config.theme)
    if theme == "dark":
        from panel.theme import DarkTheme

        doc.theme = DarkTheme.bokeh_theme
    doc.template = page_template()
    request = doc.session_context.request
    query = getattr(request, "query", "") or ""
    url = f"{request.protocol}://{request.host}{request.path}" + (f"?{query}" if query else "") \
        if getattr(request, "host", None) else ""
    head, title, top = first_response(name, theme, query, url)
    doc.template_variables.update(md_head=head, md_title=Markup(title), md_top=top)
    _arrived()
    pn.state.onload(functools.partial(_enqueue, root, name, module))
    return root


def serve_page(name: str):
    """Page ``name`` (:func:`build`) attached to this session's document, as ``panel serve apps/<page>.py`` and
    ``meter-dashboard serve`` serve it; outside a server it is :func:`build` alone.

    Attached with Panel's documented ``server_doc(doc, title, location)``: the Location is Panel's own, made
    from the request, unless the query is longer than the pages read (:func:`_location_unparsed`).
    """
    root = build(name)
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        request = doc.session_context.request
        query = getattr(request, "query", "") or ""
        location = _location_unparsed(request, query) if len(query) >= MAX_QUERY_CHARS else True
        root.server_doc(doc, title=f"{SITE_TITLE} · {PAGES[name].title}", location=location)
    return root


def _location_unparsed(request, query: str):
    """The page's ``pn.state.location`` for a query longer than the pages read, made without parsing it.

    Panel makes a session's Location from the request and parses its query at once, ``int()`` of
    every digit string: a value of over 4,300 digits raised there and the request got a 500 instead
    of the page saying the link was not applied.  Here the Location holds the query as text (its
    watchers, which parse it, are not run); :func:`serve_page` hands it to ``server_doc``, which makes it
    the session's ``pn.state.location``, and the page's :class:`~meter_dashboard.ui.urlstate.UrlState`
    then refuses the query as a whole, by its length, as it does any query over ``MAX_QUERY_CHARS``.
    """
    from panel.io.location import Location
    from panel.util import edit_readonly

    location = Location()
    with edit_readonly(location), param.parameterized.discard_events(location):
        location.param.update(protocol=f"{request.protocol}:", pathname=request.path, search=f"?{query}",
                              href=f"{request.protocol}://{request.host}{request.path}?{query}")
    return location


def _app(name: str):
    """``pn.serve``'s function for page ``name``: :func:`serve_page` attaches the page, so Panel has nothing to attach."""
    def app() -> None:
        serve_page(name)
    return app


def serve(port: int = 5006, address: str | None = DEFAULT_ADDRESS, show: bool = True, pages=None,
          websocket_origin=None, *, num_threads: int = DEFAULT_THREADS, num_procs: int = 1,
          session_lifetime_ms: int = SESSION_LIFETIME_MS, extra_patterns=(), **kwargs):
    """Serve the pages (all available ones by default) and the landing page with one Bokeh server.

    Listens on ``address`` (this machine only by default); ``num_threads`` worker threads do the
    long work of every session (:data:`~meter_dashboard.core.serving.DEFAULT_THREADS`,
    :func:`meter_dashboard.core.runtime.configure`; 0 does it on the event loop);
    ``num_procs`` processes share the port (Bokeh's ``--num-procs``: a session lives in the
    process its websocket reached).  ``extra_patterns``: Tornado routes added beside the
    pages, ``/`` and ``/docs`` (:func:`meter_dashboard.app.documents.routes`).  The server settings are :func:`meter_dashboard.core.serving.server_options`;
    other keyword arguments go to ``pn.serve``.
    """
    names = pages or available_pages()
    write_queue.install()
    for name in names:  # imported once (before the processes fork), not on a first visitor's request
        importlib.import_module(PAGES[name].module)
    # the collector: what is loaded now lives as long as the server (frozen: never walked again), and young objects
    # are collected per 20,000 allocations, not 700 (a room of 50 opening the planner: 1.35 s of its 13 s of CPU
    # in collections before, 0.5 s after; python -m tests.benchmarks.load.room --client protocol)
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    apps = {name: _app(name) for name in names}
    runtime.configure(num_threads)
    options = server_options(port, address, websocket_origin=websocket_origin, num_procs=num_procs,
                             session_lifetime_ms=session_lifetime_ms,
                             extra_patterns=[*documents.routes(), *extra_patterns])
    options.update(kwargs)
    return pn.serve(apps, show=show, title={name: f"{SITE_TITLE} · {PAGES[name].title}" for name in names},
                    **options)
