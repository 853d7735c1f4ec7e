"""What a meeting takes away from any page: the table as CSV, the slide as PNG and SVG, the offline report.

:class:`Exports` is one row of download buttons over three functions of the page (each returns
``None`` while the page has no answer yet): ``csv()`` the table as text, ``slide()`` a
:class:`~meter_dashboard.core.slide.Slide`, ``report()`` a :class:`~meter_dashboard.core.report.Report`.
Each file is built in a worker thread (:func:`~meter_dashboard.core.runtime.in_thread`): drawing a
PNG or inlining Bokeh into a report takes longer than the event loop may wait.  Files are named by
``stem()`` (the page and its inputs).
"""
from __future__ import annotations

import io
from collections.abc import Callable

import panel as pn

from ..core.runtime import in_thread
from ..core.slide import slide_bytes
from .style import esc

__all__ = ["Exports", "lead_markup"]


class Exports:
    """The downloads of one page: ``prefix`` names their CSS classes (``{prefix}-csv``, ``{prefix}-slide-png`` …).

    ``csv``, ``slide`` and ``report`` are callables (any may be None: no such button); ``row`` goes into the page.
    """

    def __init__(self, prefix: str, stem: Callable[[], str], *, csv: Callable | None = None,
                 slide: Callable | None = None, report: Callable | None = None):
        self.stem = stem
        self._csv, self._slide, self._report = csv, slide, report
        # at most 170 px, adding nothing to its row's minimum width: a phone wraps the row, never scrolls sideways
        size = dict(sizing_mode="stretch_width", max_width=170, margin=(4, 5))
        buttons = []

        def button(kind: str, label: str, callback, suffix: str):
            made = pn.widgets.FileDownload(callback=callback, filename=f"{prefix}.{suffix}", label=label,
                                           color="light", css_classes=[f"{prefix}-{kind}", f"md-export-{kind}"], **size)
            buttons.append(made)
            return made

        if csv is not None:
            self.csv = button("csv", "⤓ Table (CSV)", self.csv_file, "csv")
        if slide is not None:
            self.png = button("slide-png", "⤓ Slide (PNG)", self.png_file, "png")
            self.svg = button("slide-svg", "⤓ Slide (SVG)", self.svg_file, "svg")
        if report is not None:
            self.report = button("report", "⤓ Report (HTML)", self.report_file, "html")
        self.row = pn.FlexBox(*buttons, flex_wrap="wrap", sizing_mode="stretch_width",
                              css_classes=[f"{prefix}-exports", "md-exports"])

    def _named(self, widget, suffix: str) -> None:
        widget.filename = f"{self.stem()}.{suffix}"  # Panel sends the name with the file

    async def csv_file(self) -> io.StringIO:
        self._named(self.csv, "csv")
        make = self._csv
        text = None if make is None else await in_thread(make)
        return io.StringIO(text or "")

    async def _slide_file(self, kind: str) -> io.BytesIO:
        self._named(self.png if kind == "png" else self.svg, kind)
        make = self._slide

        def build() -> bytes:
            made = None if make is None else make()
            return b"" if made is None else slide_bytes(made, kind)

        return io.BytesIO(await in_thread(build))

    async def png_file(self) -> io.BytesIO:
        return await self._slide_file("png")

    async def svg_file(self) -> io.BytesIO:
        return await self._slide_file("svg")

    async def report_file(self) -> io.StringIO:
        self._named(self.report, "html")
        make = self._report

        def build() -> str:
            made = None if make is None else make()
            return "" if made is None else made.to_html()

        return io.StringIO(await in_thread(build))


def lead_markup(text: str, prefix: str) -> str:
    """The page's first sentence in plain words (``text.lead``), as the page shows it first."""
    return f'<p class="md-lead page-lead {esc(prefix)}-lead">{esc(text)}</p>' if text else ""
