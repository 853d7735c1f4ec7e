"""A page's section as a Panel ``Viewer``: its panes and widgets in order, built once.

A page (``/compare``, ``/ladder``) is a few sections over its models: the inputs, the answer, the
figures, the exports.  Each is a :class:`PageSection`: :meth:`~PageSection.parts` lists what it
shows, in order, so the page can place them in its titled blocks (:func:`~meter_dashboard.ui.sections.section`)
without an extra wrapper; shown alone (a notebook cell), a section is its :meth:`~PageSection.layout`,
by default the parts in one column, built the first time it is shown and kept.
"""
from __future__ import annotations

import panel as pn

__all__ = ["PageSection"]


class PageSection(pn.viewable.Viewer):
    """One section of a page: :meth:`parts` in order; :meth:`layout` (built once) when shown alone."""

    def parts(self) -> list:
        """The panes and widgets the section shows, in order."""
        raise NotImplementedError

    def layout(self):
        """How the section looks alone: its parts in one column (a titled block in some sections)."""
        return pn.Column(*self.parts(), sizing_mode="stretch_width")

    def __panel__(self):
        if getattr(self, "_shown_layout", None) is None:
            self._shown_layout = self.layout()
        return self._shown_layout
