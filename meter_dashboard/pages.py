"""Whole pages: the served layer above the views (bounds -> models -> views -> pages).

Each page module under ``meter_dashboard.views`` exposes ``page()`` returning its main
component, or ``(main, sidebar)``.  This module is the only place templates are built,
so the same components render unwrapped in notebooks.  ``apps/*.py`` and
``meter-dashboard serve`` both call :func:`build`.
"""
from __future__ import annotations

import importlib
import importlib.util

import panel as pn
from panel.theme.fast import Fast

from .views._style import ACCENT, ensure_css

# Panel's Fast design links the Open Sans web font from Google Fonts.  The dashboard must
# render offline (air-gapped meeting rooms, CI) without failed requests in the console,
# so the served pages use the system sans-serif stack instead (see ``font`` below).
Fast._resources = {**Fast._resources, "font": {}}

#: name -> (title, module).  The URL of each page is /<name>.
PAGES = {
    "planner": ("Planner", "meter_dashboard.views.planner"),
    "session": ("Session replay", "meter_dashboard.views.session"),
    "ci": ("ease.ml/ci", "meter_dashboard.views.ci"),
    "ladder": ("Ladder", "meter_dashboard.views.ladder"),
    "compare": ("P(A>B)", "meter_dashboard.views.compare"),
    "approve": ("Approve", "meter_dashboard.views.approve"),
}

SITE_TITLE = "meter-dashboard"


def _module(name: str):
    title, module_name = PAGES[name]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise


def available_pages() -> list[str]:
    """The page names whose view modules exist, in navigation order (found without importing them)."""
    return [name for name in PAGES if importlib.util.find_spec(PAGES[name][1]) is not None]


def _nav(current: str) -> pn.pane.HTML:
    links = []
    for name in available_pages():
        title = PAGES[name][0]
        style = "font-weight:700;text-decoration:underline;" if name == current else ""
        links.append(f'<a href="./{name}" style="color:white;margin-right:18px;{style}">{title}</a>')
    return pn.pane.HTML(
        '<nav class="md-nav" style="font-size:15px;padding-top:6px">' + "".join(links) + "</nav>",
        sizing_mode="stretch_width",
    )


def build(name: str):
    """The template for page ``name`` with navigation to the others."""
    if name not in PAGES:
        raise KeyError(f"page must be one of {', '.join(PAGES)}; got {name!r}")
    module = _module(name)
    if module is None:
        raise KeyError(f"page {name!r} is not available")
    ensure_css()
    content = module.page()
    main, sidebar = content if isinstance(content, tuple) else (content, None)
    template = pn.template.FastListTemplate(
        title=f"{SITE_TITLE} · {PAGES[name][0]}",
        header=[_nav(name)],
        main=[main],
        sidebar=[sidebar] if sidebar is not None else [],
        accent_base_color=ACCENT,
        header_background=ACCENT,
        theme_toggle=False,
        # No web fonts: the page must render offline (and in air-gapped meeting rooms).
        font="'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif",
        main_layout=None,
        sidebar_width=340,
    )
    return template


def serve(port: int = 5006, address: str | None = None, show: bool = True, pages=None,
          websocket_origin=None, **kwargs):
    """Serve the pages (all available ones by default) with one Bokeh server."""
    names = pages or available_pages()
    apps = {name: (lambda n=name: build(n)) for name in names}
    origins = websocket_origin or [f"localhost:{port}", f"127.0.0.1:{port}"]
    return pn.serve(
        apps,
        port=port,
        address=address,
        show=show,
        title={name: f"{SITE_TITLE} · {PAGES[name][0]}" for name in names},
        websocket_origin=origins,
        **kwargs,
    )
