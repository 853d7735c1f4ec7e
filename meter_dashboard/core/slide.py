"""A slide for a meeting, for every page: title, the answer in plain words, the inputs and the chart.

One picture a team lead can drop into a deck: the same :class:`Slide` is written as SVG (text,
built here with every string escaped; its title and answer are ``<text>`` elements a reader and a
test can find) or as PNG (drawn with Pillow, which Bokeh already requires; the title, the answer and
the inputs are also stored in the PNG's text chunks ``Title``, ``Description`` and ``Comment``).
Nothing here needs a browser or a webdriver, so the CLI (``--slide out.png``), notebooks
(``result.slide("x.svg")``) and the pages' download buttons all build the same file.

Each family turns its result into a slide in its ``text.py`` (``slide(result)``); this module only
draws.  A :class:`Chart` is a few :class:`Series` (a line, steps or points) on linear or log axes,
with optional reference rules and marked points (the answer), every label kept inside the plot.

Example
-------
>>> s = Slide("Plan", "With 38,005 labelled examples we can test 10 model versions.",
...           (("δ", "0.01"),), Chart("T", "labels", (Series("incremental", (1, 10), (9000, 38005)),)))
>>> "38,005 labelled examples" in s.to_svg()
True
"""
from __future__ import annotations

import html
import importlib
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from .validation import InputError

__all__ = ["Series", "Rule", "Chart", "Slide", "SlideMixin", "SLIDE_SUFFIXES", "slide_bytes"]

#: What :meth:`Slide.save` writes, by the file name's suffix.
SLIDE_SUFFIXES = (".png", ".svg")

_W, _H, _PAD = 1280, 720, 48
_INK, _MUTED, _GRID, _BG = "#0b2a45", "#4a5a6a", "#dde5ee", "#ffffff"
_TITLE, _LEAD, _SMALL = 34, 23, 15
_CHAR = 0.56  # average glyph width as a share of the font size (wrapping; DejaVu Sans measures 0.55)


@dataclass(frozen=True)
class Series:
    """One line of a chart: ``kind`` is ``"line"``, ``"step"`` (a staircase) or ``"points"``."""

    label: str
    x: tuple
    y: tuple
    color: str = ""
    kind: str = "line"


@dataclass(frozen=True)
class Rule:
    """A reference line across the plot (``axis="y"``: horizontal at ``value``), with its label inside."""

    axis: str
    value: float
    label: str = ""
    color: str = _MUTED


@dataclass(frozen=True)
class Chart:
    """Axes and what is drawn on them; ``marks`` are (x, y, text) points to stress (the answer)."""

    x_label: str
    y_label: str
    series: tuple
    log_x: bool = False
    log_y: bool = False
    rules: tuple = ()
    marks: tuple = ()


@dataclass(frozen=True)
class Slide:
    """A slide: ``title``, ``lead`` (the page's plain-words answer), ``inputs`` (name, value) pairs, ``chart``."""

    title: str
    lead: str
    inputs: tuple = ()
    chart: Chart | None = None
    footer: str = field(default="meter-dashboard")

    # ------------------------------------------------------------------ layout (shared by SVG and PNG)
    def _layout(self) -> tuple:
        """Text lines with positions: (x, y, size, colour, bold, text), and the chart's box."""
        lines = [(_PAD, _PAD + _TITLE, _TITLE, _INK, True, t) for t in _wrap(self.title, _W - 2 * _PAD, _TITLE)[:1]]
        y = _PAD + _TITLE + 18
        for text in _wrap(self.lead, _W - 2 * _PAD, _LEAD)[:5]:
            y += _LEAD + 9
            lines.append((_PAD, y, _LEAD, _INK, False, text))
        top = y + 34
        column = 400 if self.chart is not None else _W - 2 * _PAD
        yy = top
        for name, value in self.inputs:
            if yy > _H - _PAD - 40:
                lines.append((_PAD, yy + _SMALL, _SMALL, _MUTED, False, "…"))
                break
            lines.append((_PAD, yy + _SMALL, _SMALL, _MUTED, False, str(name)))
            yy += _SMALL + 6
            for text in _wrap(str(value), column, _SMALL + 1)[:2]:
                lines.append((_PAD + 12, yy + _SMALL + 1, _SMALL + 1, _INK, True, text))
                yy += _SMALL + 7
            yy += 6
        lines.append((_PAD, _H - 18, 12, _MUTED, False, self.footer))
        box = (_PAD + column + 70, top + 8, _W - _PAD - 10, _H - _PAD - 34)
        return lines, box

    # ------------------------------------------------------------------ SVG
    def to_svg(self) -> str:
        """The slide as an SVG document (UTF-8 text; every string escaped)."""
        lines, box = self._layout()
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
               f'font-family="Helvetica, Arial, \'DejaVu Sans\', sans-serif">',
               f"<title>{_esc(self.title)}</title><desc>{_esc(self.lead)}</desc>",
               f'<rect width="{_W}" height="{_H}" fill="{_BG}"/>']
        for x, y, size, color, bold, text in lines:
            weight = ' font-weight="bold"' if bold else ""
            out.append(f'<text x="{x}" y="{y}" font-size="{size}" fill="{color}"{weight}>{_esc(text)}</text>')
        if self.chart is not None:
            out.extend(_Plot(self.chart, box).svg())
        out.append("</svg>")
        return "\n".join(out) + "\n"

    # ------------------------------------------------------------------ PNG
    def to_png(self) -> bytes:
        """The slide as a PNG (Pillow); the title, answer and inputs are in its text chunks too."""
        from PIL import Image, ImageDraw, ImageFont
        from PIL.PngImagePlugin import PngInfo

        image = Image.new("RGB", (_W, _H), _BG)
        draw = ImageDraw.Draw(image)
        fonts: dict = {}

        def font(size: int, bold: bool = False):
            if (size, bold) not in fonts:
                fonts[size, bold] = _font(ImageFont, size, bold)
            return fonts[size, bold]

        lines, box = self._layout()
        for x, y, size, color, bold, text in lines:
            draw.text((x, y), text, fill=color, font=font(size, bold), anchor="ls")
        if self.chart is not None:
            _Plot(self.chart, box).draw(draw, font)
        info = PngInfo()
        info.add_itxt("Title", self.title)
        info.add_itxt("Description", self.lead)
        info.add_itxt("Comment", "\n".join(f"{k}: {v}" for k, v in self.inputs))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", pnginfo=info)
        return buffer.getvalue()

    # ------------------------------------------------------------------ files
    def to_bytes(self, kind: str) -> bytes:
        """``kind`` ``"png"`` or ``"svg"``."""
        return slide_bytes(self, kind)

    def save(self, path) -> Path:
        """Write the slide to ``path``; its suffix (``.png`` or ``.svg``) chooses the format."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in SLIDE_SUFFIXES:
            raise InputError("slide", "a file name ending in .png or .svg", path.name)
        path.write_bytes(slide_bytes(self, suffix[1:]))
        return path

    def _repr_svg_(self) -> str:  # notebooks show the slide itself
        return self.to_svg()


def slide_bytes(slide: Slide, kind: str) -> bytes:
    """The slide's file content: ``kind`` ``"png"`` or ``"svg"``."""
    if kind == "png":
        return slide.to_png()
    if kind == "svg":
        return slide.to_svg().encode("utf-8")
    raise InputError("slide format", "'png' or 'svg'", kind)


#: TrueType fonts tried in order (Pillow looks in the system's font folders): ones that have ε, δ, −, ×, ⁻.
_FONTS = {False: ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "Arial.ttf", "Helvetica.ttc"),
          True: ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "Arial Bold.ttf", "Helvetica.ttc")}


def _font(image_font, size: int, bold: bool):
    """A Unicode TrueType font of the system, else Pillow's own (Latin only)."""
    for name in _FONTS[bold]:
        try:
            return image_font.truetype(name, size)
        except OSError:
            continue
    return image_font.load_default(size=size)


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _wrap(text: str, width: float, size: int) -> list:
    """Words into lines no wider than ``width`` pixels at font ``size`` (estimated glyph width)."""
    most = max(int(width / (size * _CHAR)), 8)
    lines: list = []
    current = ""
    for word in str(text).split():
        while len(word) > most:  # a long token (a path, a condition) is cut, never overflows
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:most])
            word = word[most:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) > most:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines or [""]


def _finite(values, log: bool) -> list:
    out = []
    for v in values:
        try:
            v = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(v) and (v > 0 or not log):
            out.append(v)
    return out


def _ticks(lo: float, hi: float, log: bool) -> list:
    """Round tick values covering [lo, hi]: powers of ten on a log axis, 1-2-5 steps otherwise."""
    if log:
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        stride = max(1, math.ceil((last - first) / 6))
        return [10.0 ** k for k in range(first, last + 1, stride)]
    span = hi - lo
    raw = span / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(lo / step) * step
    return [start + k * step for k in range(int(math.ceil((hi - start) / step)) + 1)]


def _tick_text(value: float) -> str:
    from .formatting import number

    if abs(value) >= 1e5 and value < 1e9 and value == int(value):
        return f"{value:,.0f}"
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return number(value, 2)
    return f"{value:,.10g}" if abs(value) >= 1000 else f"{value:.4g}"


class _Plot:
    """The chart of a slide, mapped into ``box`` (left, top, right, bottom) pixels."""

    def __init__(self, chart: Chart, box: tuple):
        self.chart = chart
        self.left, self.top, self.right, self.bottom = box
        xs = _finite([v for s in chart.series for v in s.x] + [m[0] for m in chart.marks]
                     + [r.value for r in chart.rules if r.axis == "x"], chart.log_x)
        ys = _finite([v for s in chart.series for v in s.y] + [m[1] for m in chart.marks]
                     + [r.value for r in chart.rules if r.axis == "y"], chart.log_y)
        (x_lo, x_hi), (y_lo, y_hi) = self._span(xs, chart.log_x), self._span(ys, chart.log_y)
        self.x_ticks = _ticks(x_lo, x_hi, chart.log_x)
        self.y_ticks = _ticks(y_lo, y_hi, chart.log_y)
        self.x_range = (self.x_ticks[0], self.x_ticks[-1])
        self.y_range = (self.y_ticks[0], self.y_ticks[-1])

    @staticmethod
    def _span(values: list, log: bool) -> tuple:
        if not values:
            return (1.0, 10.0) if log else (0.0, 1.0)
        lo, hi = min(values), max(values)
        if not log and lo > 0 and lo < 0.5 * hi:
            lo = 0.0  # counts and probabilities read best from zero
        if hi <= lo:
            hi = lo * 10 if log else lo + 1
        return lo, hi

    def _scale(self, value: float, lo: float, hi: float, log: bool) -> float:
        if log:
            value, lo, hi = math.log10(max(value, 1e-300)), math.log10(lo), math.log10(hi)
        return (value - lo) / (hi - lo) if hi > lo else 0.5

    def px(self, x: float, y: float) -> tuple:
        fx = self._scale(x, *self.x_range, self.chart.log_x)
        fy = self._scale(y, *self.y_range, self.chart.log_y)
        return (self.left + fx * (self.right - self.left), self.bottom - fy * (self.bottom - self.top))

    def _points(self, series: Series) -> list:
        pts = []
        for x, y in zip(series.x, series.y):
            if _finite([x], self.chart.log_x) and _finite([y], self.chart.log_y):
                pts.append(self.px(float(x), float(y)))
        if series.kind == "step" and len(pts) > 1:
            stairs = [pts[0]]
            for p in pts[1:]:
                stairs.extend([(p[0], stairs[-1][1]), p])
            return stairs
        return pts

    def _texts(self) -> list:
        """Every text of the plot: (x, y, size, colour, anchor, text); anchors 'ls', 'ms', 'rs', 'mm'."""
        c = self.chart
        out = []
        for t in self.x_ticks:
            x, _ = self.px(t, self.y_range[0])
            out.append((x, self.bottom + 20, 13, _MUTED, "ms", _tick_text(t)))
        for t in self.y_ticks:
            _, y = self.px(self.x_range[0], t)
            out.append((self.left - 8, y + 5, 13, _MUTED, "rs", _tick_text(t)))
        out.append(((self.left + self.right) / 2, self.bottom + 42, 15, _INK, "ms", c.x_label))
        out.append((self.left - 8, self.top - 14, 15, _INK, "ls", c.y_label))
        for k, s in enumerate(c.series):  # legend, top left inside the plot
            out.append((self.left + 34, self.top + 22 + 20 * k, 14, _INK, "ls", s.label))
        for r in c.rules:
            if r.label:
                if r.axis == "y":
                    _, y = self.px(self.x_range[0], r.value)
                    y = min(max(y - 6, self.top + 16), self.bottom - 6)
                    out.append((self.right - 6, y, 13, r.color, "rs", r.label))
                else:
                    x, _ = self.px(r.value, self.y_range[0])
                    anchor = "rs" if x > (self.left + self.right) / 2 else "ls"
                    out.append((x - 6 if anchor == "rs" else x + 6, self.bottom - 10, 13, r.color, anchor, r.label))
        for x, y, text in c.marks:
            if _finite([x], c.log_x) and _finite([y], c.log_y):
                px, py = self.px(float(x), float(y))
                anchor = "rs" if px > (self.left + self.right) / 2 else "ls"
                py = min(max(py - 12, self.top + 16), self.bottom - 6)
                out.append((px - 10 if anchor == "rs" else px + 10, py, 15, _INK, anchor, text))
        return out

    def _color(self, k: int, series: Series) -> str:
        if series.color:
            return series.color
        from .colors import PALETTE  # Bokeh's palettes: only when a series has no colour of its own

        return PALETTE[k % len(PALETTE)]

    def svg(self) -> list:
        c = self.chart
        out = [f'<g class="slide-chart"><rect x="{self.left}" y="{self.top}" width="{self.right - self.left}" '
               f'height="{self.bottom - self.top}" fill="none" stroke="{_GRID}"/>']
        for t in self.x_ticks:
            x, _ = self.px(t, self.y_range[0])
            out.append(f'<line x1="{x:.1f}" y1="{self.top}" x2="{x:.1f}" y2="{self.bottom}" stroke="{_GRID}"/>')
        for t in self.y_ticks:
            _, y = self.px(self.x_range[0], t)
            out.append(f'<line x1="{self.left}" y1="{y:.1f}" x2="{self.right}" y2="{y:.1f}" stroke="{_GRID}"/>')
        for r in c.rules:
            (x1, y1), (x2, y2) = self._rule(r)
            out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{_esc(r.color)}" '
                       f'stroke-dasharray="6 4" stroke-width="1.5"/>')
        for k, s in enumerate(c.series):
            color = _esc(self._color(k, s))
            pts = self._points(s)
            if s.kind == "points":
                out.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}"/>' for x, y in pts)
            elif pts:
                path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
                out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="3"/>')
            ly = self.top + 17 + 20 * k
            out.append(f'<line x1="{self.left + 8}" y1="{ly}" x2="{self.left + 28}" y2="{ly}" stroke="{color}" '
                       f'stroke-width="4"/>')
        for x, y, _text in c.marks:
            if _finite([x], c.log_x) and _finite([y], c.log_y):
                px, py = self.px(float(x), float(y))
                out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="7" fill="none" stroke="{_INK}" stroke-width="2.5"/>')
        anchors = {"ls": "start", "ms": "middle", "rs": "end"}
        for x, y, size, color, anchor, text in self._texts():
            out.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{_esc(color)}" '
                       f'text-anchor="{anchors[anchor]}">{_esc(text)}</text>')
        out.append("</g>")
        return out

    def _rule(self, r: Rule) -> tuple:
        if r.axis == "y":
            _, y = self.px(self.x_range[0], r.value)
            return (self.left, y), (self.right, y)
        x, _ = self.px(r.value, self.y_range[0])
        return (x, self.top), (x, self.bottom)

    def draw(self, draw, font) -> None:
        c = self.chart
        draw.rectangle((self.left, self.top, self.right, self.bottom), outline=_GRID)
        for t in self.x_ticks:
            x, _ = self.px(t, self.y_range[0])
            draw.line((x, self.top, x, self.bottom), fill=_GRID)
        for t in self.y_ticks:
            _, y = self.px(self.x_range[0], t)
            draw.line((self.left, y, self.right, y), fill=_GRID)
        for r in c.rules:
            draw.line(self._rule(r), fill=r.color, width=2)
        for k, s in enumerate(c.series):
            color = self._color(k, s)
            pts = self._points(s)
            if s.kind == "points":
                for x, y in pts:
                    draw.ellipse((x - 4, y - 4, x + 4, y + 4), fill=color)
            elif len(pts) > 1:
                draw.line(pts, fill=color, width=3, joint="curve")
            ly = self.top + 17 + 20 * k
            draw.line((self.left + 8, ly, self.left + 28, ly), fill=color, width=4)
        for x, y, _text in c.marks:
            if _finite([x], c.log_x) and _finite([y], c.log_y):
                px, py = self.px(float(x), float(y))
                draw.ellipse((px - 7, py - 7, px + 7, py + 7), outline=_INK, width=3)
        for x, y, size, color, anchor, text in self._texts():
            draw.text((x, y), text, fill=color, font=font(size), anchor=anchor)


class SlideMixin:
    """``lead()`` and ``slide(path=None)`` for a family's result object, from the family's ``text`` module.

    The family's ``text.lead(result)`` writes the page's first sentence in plain words and
    ``text.slide(result)`` composes the :class:`Slide`; a result class names that module in
    ``_text_module``.
    """

    _text_module: ClassVar[str] = ""

    def lead(self) -> str:
        """The page's first sentence, in plain words a manager can repeat."""
        return str(importlib.import_module(self._text_module).lead(self))

    def slide(self, path=None) -> Slide:
        """The slide (title, the lead, the inputs, the chart); written to ``path`` (.png or .svg) when given."""
        made = importlib.import_module(self._text_module).slide(self)
        if path is not None:
            made.save(path)
        return made
