"""One styling mechanism: component stylesheets carrying dashboard.css (no raw_css, no inline style=)."""
from __future__ import annotations

import re
from pathlib import Path

import panel as pn

import meter_dashboard as md
from meter_dashboard.ui import style

VIEWS = Path(style.__file__).parent
CSS = style.STYLESHEET.read_text(encoding="utf-8")


def _rule_color(selector: str, prop: str = "background") -> str:
    match = re.search(re.escape(selector) + r"\s*\{\s*" + prop + r":\s*(#[0-9A-Fa-f]{6})", CSS)
    assert match, f"no {prop} rule for {selector} in dashboard.css"
    return match.group(1).upper()


def test_swatch_classes_match_the_python_palettes():
    for variant, color in style.VARIANT_COLORS.items():
        assert _rule_color(f".md-swatch.variant-{variant}") == color.upper()
    for i, color in enumerate(style.PALETTE):
        assert _rule_color(f".md-swatch.palette-{i}") == color.upper()
    for i, color in enumerate(style.SIGNAL_COLORS):
        assert _rule_color(f".md-signal.signal-{i}") == color.upper()


def test_method_text_classes_match_the_approve_page_colors():
    from meter_dashboard.approvals.view import METHOD_COLORS

    for method, color in METHOD_COLORS.items():  # the hue mixed with the theme's ink: WCAG AA in both themes
        match = re.search(re.escape(f".md-text.method-{method}") + r"\s*\{\s*color:\s*color-mix\(in srgb, "
                          r"(#[0-9A-Fa-f]{6}) (\d+)%, var\(--md-ink\)\)", CSS)
        assert match, f"no colour rule for .md-text.method-{method}"
        assert match.group(1).upper() == color.upper() and 50 <= int(match.group(2)) <= 70


def test_views_use_no_inline_styles_and_no_global_css():
    for path in VIEWS.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "raw_css" not in text or path.name == "style.py", f"{path.name} writes pn.config.raw_css"
        inline = [line for line in text.splitlines() if re.search(r"""(?<![\w])style=['"\\]""", line)]
        assert not inline, f"{path.name} has inline style= attributes: {inline[:3]}"


def test_html_pane_carries_the_stylesheet_inline_outside_a_server():
    # In a notebook (no server) Panel inlines the file's text into the component's shadow root.
    model = style.HTML("<b>x</b>").get_root()
    assert any(isinstance(s, str) and ".md-headline" in s for s in model.stylesheets)


def test_dark_theme_variables_drive_the_colors():
    # Readable in ?theme=dark: the ink and card colours come from Panel's theme variables.
    assert "var(--panel-on-background-color" in CSS and "var(--panel-surface-color" in CSS
    assert "#0b2a45" not in CSS  # the old fixed dark-blue ink would vanish on a dark background


def test_helpers_escape_what_users_typed():
    html = style.headline_html("<b>", "<i>", "<u>", "x\" onmouseover=\"y")
    assert "<b>" not in html and "&lt;i&gt;" in html and 'onmouseover="y' not in html
    assert style.error_html("") == "" and "md-error" in style.error_html("bad")
    assert style.swatch_html("variant-regular") == '<span class="md-swatch variant-regular"></span>'
    assert pn.pane.HTML in style.HTML.__mro__


def test_the_planners_budget_label_sits_on_the_dark_themes_plot_background():
    # issue 30: in dark mode the budget label kept a white box on the dark plot
    from panel.theme import DarkTheme

    from meter_dashboard.meter.figures import LabelsPlot

    dark_plot = DarkTheme.bokeh_theme._json["attrs"]["Plot"]["background_fill_color"]
    assert LabelsPlot("T", "t", dark=True).budget_label.background_fill_color == dark_plot
    assert LabelsPlot("T", "t").budget_label.background_fill_color == "white"
    pn.config.theme = "dark"
    try:
        planner = md.Planner(budget=20_000)
        assert planner.curve_plot.budget_label.background_fill_color == dark_plot
    finally:
        pn.config.theme = "default"
