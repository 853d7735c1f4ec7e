"""Parts of the planner page that are not the plan itself (Panel): sections built on demand, meeting artefacts.

- :class:`OnDemand` - the results a person opens (the budget per variant, the second plot, the
  simulation check): built, and computed, the first time.
- :class:`Artefacts` - what a meeting takes away: the table as CSV (the inputs as header lines), the
  report (HTML, with the page's link), the plots (PNG), the slide (PNG and SVG: title, answer, inputs and
  the curve) and a summary for the minutes (to the
  clipboard), each named by the plan's parameters.
"""
from __future__ import annotations

import io

import panel as pn

from ..core.runtime import in_thread
from ..core.tables import spreadsheet_frame
from ..ui.exports import DownloadRow, Exports, RowButton, row_esm
from ..ui.form import Box, Field, Form
from .text import file_stem, plan_inputs

__all__ = ["OnDemand", "Artefacts", "SECTIONS"]

#: The planner row's browser actions (:func:`~meter_dashboard.ui.exports.row_esm`): the plots on the page (the
#: curve over T, and the second plot when open) as PNG files named by the plan, and the summary for the minutes
#: (kept in the answer pane, with the plan's file name in ``data-stem``) with the page's address, to the clipboard.
#: The summary is found through the page's shadow roots.
_CLIENT_JS = r"""{
  "plots-png": () => {
    const summary = findSummary(document);
    const stem = summary !== null && summary.dataset.stem ? summary.dataset.stem : "meter-plan";
    const views = [...Bokeh.index.query((v) => v.model.name === "planner-curve" || v.model.name === "planner-sweep")];
    for (const view of views) {
      view.export("png").to_blob().then((blob) => save(blob, `${stem}_${view.model.name.replace("planner-", "")}.png`));
    }
  },
  "copy-summary": () => {
    const summary = findSummary(document);
    if (summary === null) return;
    const text = summary.textContent.trim() + "\n\nShared plan: " + window.location.href;
    const fallback = () => {
      const area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).catch(fallback);
    } else {
      fallback();
    }
  },
};

function findSummary(root) {
  const hit = root.querySelector(".planner-summary");
  if (hit) return hit;
  for (const node of root.querySelectorAll("*")) {
    if (node.shadowRoot) { const found = findSummary(node.shadowRoot); if (found) return found; }
  }
  return null;
}"""


class PlannerRow(DownloadRow):
    """The planner's row: its downloads, and two browser actions (the plots as PNG, the summary copied)."""

    _esm = row_esm(_CLIENT_JS)


#: The sections a person opens on demand (built, and computed, the first time): option -> key.
SECTIONS = {"What the budget buys ▸": "whatif", "Second plot ▸": "sweep", "Check by simulation ▸": "check"}


class OnDemand:
    """Sections built the first time someone opens them: one row of toggles, the open sections below.

    ``builders`` maps a section's key to a function returning its content; a closed section
    stays built (hidden), so opening it again costs nothing.  The toggles are a
    :class:`~meter_dashboard.ui.form.Form` (one model); the column holding the sections is made
    when the first one opens.
    """

    def __init__(self, builders: dict):
        self._builders = builders
        self.built: dict = {}
        self.toggles = Box(value="")  # the open sections' keys, comma-separated (the form's "toggles" field)
        self.form = Form([Field("sections", "Open below the curve", self.toggles, kind="toggles",
                                options=list(SECTIONS.items()), classes=("planner-open",))],
                         prefix="planner-sections", css_classes=["planner-open-form"])
        self.holder: pn.Column | None = None  # made when the first section opens
        self.layout = pn.Column(self.form, sizing_mode="stretch_width")
        self.toggles.param.watch(self._on_toggles, "value")

    @property
    def opened(self) -> list[str]:
        """The keys of the open sections."""
        return [k for k in self.toggles.value.split(",") if k]

    def open(self, key: str) -> None:
        """Open section ``key`` (as a click on its toggle does)."""
        if key not in self.opened:
            self.show([*self.opened, key])

    def show(self, keys) -> None:
        """Open exactly the sections ``keys`` (the others close, kept built)."""
        self.toggles.value = ",".join(k for k in SECTIONS.values() if k in keys)

    def _on_toggles(self, event) -> None:
        opened = self.opened
        with pn.io.hold():
            for key in opened:
                if key not in self.built:
                    self.built[key] = self._builders[key]()
            for key, section in self.built.items():
                section.visible = key in opened
            shown = [self.built[k] for k in SECTIONS.values() if k in self.built]
            if shown and self.holder is None:
                self.holder = pn.Column(sizing_mode="stretch_width", css_classes=["planner-sections"])
                self.layout.append(self.holder)
            if self.holder is not None and self.holder.objects != shown:
                self.holder.objects = shown

    def __panel__(self):
        return self.layout


class Artefacts:
    """The downloads and the summary of ``planner`` (a :class:`~meter_dashboard.meter.view.Planner`)."""

    def __init__(self, planner):
        self.planner = planner

        def button(kind: str, label: str, color: str, **how) -> RowButton:
            return RowButton(kind, label, [f"planner-{kind}"], color=color, width=200, **how)

        self.csv = button("csv", "Download table (CSV)", "primary", callback=self.csv_file, filename="meter-plan.csv")
        self.report = button("report", "Download report (HTML)", "primary", callback=self.report_file,
                             filename="meter-plan.html")
        self.png = button("png", "Download plots (PNG)", "default", client="plots-png")
        self.copy = button("copy", "Copy summary", "default", client="copy-summary")
        self.slides = Exports("planner", lambda: file_stem(self.planner.plan.result), slide=self.slide,
                              before=[self.csv, self.report, self.png, self.copy], row_class=PlannerRow)
        self.row = self.slides.row
        self.row.css_classes = ["planner-artefacts"]

    def slide(self):
        """The meeting slide of the plan shown (title, the lead in plain words, inputs, labels against T)."""
        return self.planner.plan.result.slide()

    def csv_file(self) -> io.StringIO:
        """The table with the inputs as ``# name: value`` header lines (pandas reads it with ``comment="#"``)."""
        result = self.planner.complete_result()
        self.csv.filename = f"{file_stem(result)}.csv"  # named when downloaded (the row sends the name with the file)
        buf = io.StringIO()
        for name, value in plan_inputs(result, self.planner.plan.ranges):
            buf.write(f"# {name}: {value}\n")
        spreadsheet_frame(result.to_frame()).to_csv(buf)
        buf.seek(0)
        return buf

    async def report_file(self) -> io.StringIO:
        """The report, built in a worker thread (inlining Bokeh takes longer than the event loop may wait)."""
        link = self.planner.share_link()
        self.report.filename = f"{file_stem(self.planner.plan.result)}.html"
        html = await in_thread(lambda: self.planner.report(link=link).to_html())
        return io.StringIO(html)
