"""``md.extension(inline=True)``: the components in a notebook that cannot reach a CDN.

By default a notebook loads the JavaScript of Bokeh and Panel from a CDN (Panel's default: small
notebook files). A firewalled or offline Jupyter cannot reach it, and every component then
renders blank ("Bokeh or Panel library is missing" in the browser console). Either switch puts the
libraries in the notebook itself (about 5 MB in the saved file):

- ``md.extension(inline=True)`` in the first cell, before any component is displayed;
- or ``PANEL_INLINE=1`` (Panel's own setting) in the environment Jupyter starts the kernel in.

tests/ui/test_jupyterlab.py runs the README's cells in a real JupyterLab with every request
beyond the machine refused.
"""
from __future__ import annotations

import panel as pn

from .base import load_notebook_extensions

__all__ = ["extension"]

#: every Panel extension a component declares (each component's ``extensions``)
EXTENSIONS = ("filedropper",)


def extension(*, inline: bool = True) -> None:
    """Load the components' JavaScript into this notebook, inlined (``inline=True``) or from the CDN.

    Call it in the first cell, before any component is displayed: a notebook loads the libraries
    once. Outside a Jupyter kernel it only sets ``pn.config.inline``.
    """
    if not isinstance(inline, bool):
        from ..core.validation import InputError

        raise InputError("inline", "True or False", inline)
    pn.config.inline = inline
    load_notebook_extensions(EXTENSIONS)
