"""HTML from Jinja2 templates with autoescaping: the one way pages and reports build markup.

Every value put into a template is escaped unless it is :class:`Markup` (HTML built by another
template), so text a person typed or uploaded can never become markup; nothing is evaluated.
Templates live beside the code that uses them (``<family>/templates/*.html``) and are named by
their path inside the package (``render("meter/templates/headlines.html", ...)``); a short piece
of markup can be a :func:`snippet` (compiled once).  The number formats of
:mod:`meter_dashboard.core.formatting` are filters (``{{ n | integer }}``, ``{{ x | number }}``,
``{{ d | confidence }}``, ...), so a template shows numbers exactly like the CLI and the reports.

Jinja2 is the engine Bokeh itself renders pages with (installed with it); no Panel here.
"""
from __future__ import annotations

import functools
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from . import formatting

__all__ = ["render", "snippet", "Markup", "escape", "environment"]

_PACKAGE = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def environment() -> Environment:
    """The package's Jinja2 environment: autoescape on, undefined names are errors, formats as filters."""
    env = Environment(loader=FileSystemLoader(str(_PACKAGE)), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)
    env.filters.update(integer=formatting.integer, number=formatting.number, scientific=formatting.scientific,
                       number_list=formatting.number_list, confidence=formatting.confidence,
                       steps=formatting.steps_text, hours=formatting.hours, money=formatting.money,
                       percent=formatting.percent, interval=formatting.interval)
    return env


def render(template: str, /, **context) -> str:
    """Render the template at ``template`` (a path inside the package) with ``context``."""
    return environment().get_template(template).render(**context)


@functools.lru_cache(maxsize=256)
def _compiled(source: str):
    return environment().from_string(source)


def snippet(source: str, /, **context) -> Markup:
    """Render a short template given as text (compiled once per distinct text); returns Markup."""
    return Markup(_compiled(source).render(**context))
