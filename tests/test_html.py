"""core.html: Jinja2 with autoescape is the one way markup is built (issue 21); typed text never becomes markup."""
from __future__ import annotations

import pytest
from jinja2 import UndefinedError

from meter_dashboard.core import formatting
from meter_dashboard.core.html import Markup, snippet


def test_values_are_escaped_and_markup_is_kept():
    hostile = '<script>alert("x")</script> & {{ 7*7 }}'
    out = snippet("<p>{{ text }}</p>{{ inner }}", text=hostile, inner=Markup("<b>ok</b>"))
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "{{ 7*7 }}" in out and "49" not in out  # template syntax in a value is text, never evaluated
    assert out.endswith("<b>ok</b>") and isinstance(out, Markup)


def test_number_filters_are_the_formatting_module():
    out = snippet("{{ n | integer }} {{ x | number }} {{ d | confidence }}", n=38005, x=0.0138123, d=0.01)
    assert out == f"{formatting.integer(38005)} {formatting.number(0.0138123)} {formatting.confidence(0.01)}"


def test_undefined_names_are_errors_not_blanks():
    with pytest.raises(UndefinedError):
        snippet("{{ missing }}")
