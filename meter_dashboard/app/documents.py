"""The shell's HTML, built once per process: the header bar, the landing page ``/`` and ``/docs``.

Everything here is the same for every visitor, so it is rendered once per process (per page and
theme) from the Jinja2 templates in ``app/templates/`` through :mod:`meter_dashboard.core.html`
(autoescape on) and kept; a request only picks the cached text.  The landing page and the docs
are plain Tornado handlers (no Bokeh session, no JavaScript framework).

The header bar is plain HTML too: the served pages put it into the first response (Panel's page
template, :mod:`meter_dashboard.app.pages`), so a visitor sees it before any JavaScript arrived.
Its links are relative to the server (``./planner``), whatever host and port the dashboard is
reached at, and carry ``?theme=dark`` in the dark theme so the theme survives navigation.

One stylesheet: every document links ``dashboard.css`` at the URL the components use
(:func:`meter_dashboard.ui.style.stylesheet_url`), so a browser fetches it once.
"""
from __future__ import annotations

import functools
import re
from importlib import metadata
from pathlib import Path
from urllib.parse import urlencode

from ..core.html import Markup, render
from ..ui.style import stylesheet_url
from .registry import PAGES, SITE_TITLE, available_pages

__all__ = ["THEMES", "theme_of", "header_html", "head_html", "landing_html", "docs_html", "paper_example_link",
           "readme_text", "routes"]

#: The two themes (Panel's names): ``?theme=dark`` or the default.
THEMES = ("default", "dark")
#: Absolute links the README uses for "this server" (any port): shown relative to the server instead.
_LOCAL_LINK = re.compile(r"^https?://(?:localhost|127\.0\.0\.1)(?::\d+)?/?")
_COMMENT = re.compile(r"<!--.*?-->\s*", re.DOTALL)


def theme_of(value) -> str:
    """``"dark"`` for ``dark`` (any case), else ``"default"``: a query value is never used as it came."""
    return "dark" if str(value or "").strip().lower() == "dark" else "default"


def _pages():
    return SITE_TITLE, [(name, PAGES[name]) for name in available_pages()]


def _context(current: str, theme: str) -> dict:
    site, pages = _pages()
    return {"site_title": site, "current": current, "theme": theme, "pages": pages,
            "theme_query": "?theme=dark" if theme == "dark" else "", "stylesheet": stylesheet_url()}


@functools.lru_cache(maxsize=64)
def header_html(current: str, theme: str = "default") -> Markup:
    """The header bar: home, every page, Docs, and the light/dark switch (``current`` is marked)."""
    return Markup(render("app/templates/header.html", **_context(current, theme_of(theme))))


@functools.lru_cache(maxsize=64)
def head_html(description: str) -> Markup:
    """Tags a served page adds to its ``<head>``: viewport, description, the stylesheet (inline)."""
    return Markup(render("app/templates/head.html", description=description, stylesheet_text=_stylesheet_text()))


@functools.lru_cache(maxsize=1)
def _stylesheet_text() -> Markup:
    """``dashboard.css`` itself (the package's own file, read once per process) for a served page's ``<head>``."""
    from ..ui.style import STYLESHEET

    return Markup(STYLESHEET.read_text(encoding="utf-8"))


def paper_example_link() -> tuple[str, str]:
    """(href, incremental count) of the planner with the paper's worked example (ease.ml/meter, Secs. 4-5)."""
    from ..bounds import meter as M
    from ..meter.model import MeterPlan

    plan = MeterPlan()  # the defaults are the paper's example: eps 0.01..0.05, delta 0.01, T = 10
    count = M.labels("incremental", list(plan.epsilon), plan.delta, plan.steps)
    query = urlencode({k: plan.to_query()[k] for k in ("epsilon", "delta", "steps")}, safe=",")
    return f"./planner?{query}", f"{count:,}"


@functools.lru_cache(maxsize=4)
def landing_html(theme: str = "default") -> str:
    """The landing page ``/``: what the tool answers, "start here", every page, the docs."""
    context = _context("", theme_of(theme))
    href, count = paper_example_link()
    return render("app/templates/index.html", example_href=href, example_count=count, **context)


def readme_text() -> str:
    """The README: the checkout's file when running from one (it is the current text), else the package's metadata."""
    readme = Path(__file__).resolve().parents[2] / "README.md"
    if readme.is_file():
        return readme.read_text(encoding="utf-8")
    try:
        description = metadata.metadata("meter-dashboard").json.get("description")  # the long description
        return str(description) if description else "# meter-dashboard"
    except metadata.PackageNotFoundError:
        return "# meter-dashboard"


def _slug(text: str, seen: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, k = base, 2
    while slug in seen:
        slug, k = f"{base}-{k}", k + 1
    seen.add(slug)
    return slug


def _markdown():
    from markdown_it import MarkdownIt  # Panel's own Markdown renderer

    md = MarkdownIt("commonmark", {"html": False}).enable("table")  # raw HTML in the text is shown, never run

    def table_open(renderer, tokens, idx, options, env):  # wide tables scroll in their box on a phone
        return '<div class="md-scroll-x">' + renderer.renderToken(tokens, idx, options, env)

    def table_close(renderer, tokens, idx, options, env):
        return renderer.renderToken(tokens, idx, options, env) + "</div>"

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    return md


def _label_cells(tokens) -> None:
    """Each table cell names its column (``data-label``): on a phone a row becomes a card of labelled cells."""
    headers: list[str] = []
    column = 0
    for k, token in enumerate(tokens):
        if token.type == "thead_open":
            headers = []
        elif token.type == "th_open":
            headers.append(tokens[k + 1].content)
        elif token.type == "tr_open":
            column = 0
        elif token.type == "td_open":
            if column < len(headers) and headers[column]:
                token.attrSet("data-label", headers[column])
            column += 1


def _sections(contents: list[tuple[int, str, str]]) -> list[dict]:
    """The contents as a tree: each h2 with its h3s (numbered lists count the h2s only, as written)."""
    tree: list[dict] = []
    for level, anchor, text in contents:
        if level == 3 and tree:
            tree[-1]["children"].append({"anchor": anchor, "text": text})
        else:
            tree.append({"anchor": anchor, "text": text, "children": []})
    return tree


def _rewrite(tokens) -> list[tuple[int, str, str]]:
    """Ids on the headings, local links made relative; returns the contents (level, id, text) of h2/h3."""
    contents: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    _label_cells(tokens)
    for k, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h2", "h3"):
            text = tokens[k + 1].content
            slug = _slug(text, seen)
            token.attrSet("id", slug)
            contents.append((int(token.tag[1]), slug, text))
        for child in token.children or ():
            href = child.attrGet("href") if child.type == "link_open" else None
            if href and _LOCAL_LINK.match(href):
                child.attrSet("href", "./" + _LOCAL_LINK.sub("", href))
            elif child.type == "text" and _LOCAL_LINK.match(child.content):
                child.content = "/" + _LOCAL_LINK.sub("", child.content)
    return contents


@functools.lru_cache(maxsize=4)
def docs_html(theme: str = "default") -> str:
    """``/docs``: the README as one page with a contents list, the pages, and links relative to the server.

    The README's HTML comments (markers for the CI and the notebook tests) are dropped, its raw
    HTML is shown as text (never as markup), its links to ``http://localhost:5006/...`` become
    links to this server, and its tables fit a phone (each row a card of labelled cells).  The
    contents number the sections as the README does (the subsections are nested under theirs),
    and a "back to top" link stays at hand on a long page.
    """
    md = _markdown()
    tokens = md.parse(_COMMENT.sub("", readme_text()))
    contents = _rewrite(tokens)
    if tokens and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
        tokens = tokens[3:]  # the title is the page's own heading
    html = md.renderer.render(tokens, md.options, {})
    # this server in the examples (curl, --server): the address the reader reached it at (docs.html's script)
    body = Markup(html.replace("http://localhost:5006", '<span class="md-origin">http://localhost:5006</span>'))
    return render("app/templates/docs.html", body=body, sections=_sections(contents), **_context("docs", theme_of(theme)))


def routes() -> list:
    """Tornado routes of ``/`` and ``/docs`` (each answers from the per-process cache)."""
    from tornado.web import RequestHandler

    def handler(page):
        class Document(RequestHandler):
            def get(self):
                self.set_header("Content-Type", "text/html; charset=utf-8")
                self.write(page(theme_of(self.get_argument("theme", ""))))

        return Document

    return [(r"/", handler(landing_html)), (r"/docs", handler(docs_html))]
