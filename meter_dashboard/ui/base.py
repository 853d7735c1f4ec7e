"""The page base: every dashboard component is a :class:`DashboardView`.

A page is two parts, the same in a notebook cell and in a served page:

- :meth:`DashboardView.controls`: the inputs (the sidebar of a served page), or None;
- :meth:`DashboardView.results`: what the inputs give (the main area).

``__panel__`` lays them side by side for notebooks; :mod:`meter_dashboard.app.pages` puts
them in the template.  ``extensions`` names the Panel extensions the component needs
(``"filedropper"``): a served page loads exactly those (and no other
page's), and a notebook loads them the first time a component is displayed, so
``md.Planner(...)`` renders in a fresh notebook without ``pn.extension`` (Panel's own
``pn.extension(*names)``, called for the user).
"""
from __future__ import annotations

import sys
import warnings
from typing import ClassVar

import panel as pn

__all__ = ["DashboardView", "load_notebook_extensions", "SUBSHELL_ADVICE", "warn_if_subshell"]

_NOTEBOOK_LOADED: set[str] = set()  # per kernel (notebooks only; a served page declares its own)
_NOTEBOOK_READY = False


def _in_notebook_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def load_notebook_extensions(names) -> None:
    """In a Jupyter kernel, run ``pn.extension(...)`` for the extensions not loaded yet (once each)."""
    global _NOTEBOOK_READY
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        return  # served: pages.build declares the page's extensions
    if not _in_notebook_kernel():
        return
    missing = [n for n in names if n not in _NOTEBOOK_LOADED]
    if missing or not _NOTEBOOK_READY:
        pn.extension(*missing)
        _NOTEBOOK_LOADED.update(missing)
        _NOTEBOOK_READY = True


#: what to do when a component's messages reach the kernel on a subshell (README, "In a notebook or a script")
SUBSHELL_ADVICE = (
    "meter-dashboard: this kernel handles the components' messages on subshell threads, beside the cell "
    "that is running (JupyterLab's 'Kernel Comms over subshells', with ipykernel 7 or later). Panel's "
    "messages are not safe there: a value typed into a component can be held back until the next one is "
    "typed. Set Settings > Settings Editor > Kernels > 'Kernel Comms over subshells' to 'Disabled' and "
    "reload the page (README: In a notebook or a script).")

_subshell_warned = False


def _kernel_subshells() -> list[str]:
    """The running ipykernel's subshells (a frontend sending comms over subshells opens them); [] elsewhere."""
    kernelapp = sys.modules.get("ipykernel.kernelapp")  # loaded in a kernel; ipykernel is no dependency of ours
    if kernelapp is None or not kernelapp.IPKernelApp.initialized():
        return []
    manager = getattr(getattr(kernelapp.IPKernelApp.instance().kernel, "shell_channel_thread", None), "manager", None)
    try:
        return list(manager.list_subshell()) if manager is not None else []
    except Exception:  # an ipykernel without subshells, or one shutting down
        return []


def warn_if_subshell() -> None:
    """Warn once per kernel, when a component is displayed, if the kernel has subshells open.

    JupyterLab 4.4+ sends comm messages to kernel subshells by default (``commsOverSubshells``), so
    Panel's handlers run beside the executing cell; acknowledgements get lost and the browser then holds
    later inputs back (tests/ui/test_jupyterlab.py saw a typed value never sent).  A page that sends
    comms over subshells opens them as soon as it loads Panel's extension, so by the time a component is
    displayed the kernel has them; the warning then shows under that cell.  (Raised on a subshell thread,
    a warning would go to no cell: JupyterLab shows output of cell executions only.)
    """
    global _subshell_warned
    if not _subshell_warned and _kernel_subshells():
        _subshell_warned = True
        warnings.warn(SUBSHELL_ADVICE, RuntimeWarning, stacklevel=2)


class DashboardView(pn.viewable.Viewer):
    """Base class of the dashboard's page components (controls + results over one or more models)."""

    #: The page's title (navigation, template, landing page).
    title: ClassVar[str] = ""
    #: Panel extensions the component needs.
    extensions: ClassVar[tuple[str, ...]] = ()

    def controls(self):
        """The inputs (a served page's sidebar); None when the component has no separate inputs."""
        return None

    def results(self):
        """What the inputs give (a served page's main area)."""
        raise NotImplementedError

    def __panel__(self):
        if getattr(self, "_layout", None) is None:
            controls = self.controls()
            results = self.results()
            if controls is None:
                self._layout = results
            else:
                self._layout = pn.Row(pn.Column(controls, width=340), results, sizing_mode="stretch_width")
        return self._layout

    def _repr_mimebundle_(self, include=None, exclude=None):
        load_notebook_extensions(self.extensions)
        warn_if_subshell()
        return super()._repr_mimebundle_(include, exclude)

    @classmethod
    def page(cls):
        """The served page's component (URL-synced)."""
        return cls(sync_url=True)
