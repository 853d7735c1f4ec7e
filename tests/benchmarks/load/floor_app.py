"""The floor: the least a Panel page can be — one input, one HTML pane and a 1,000-point Bokeh line.

Served with the dashboard's own server settings (:func:`meter_dashboard.core.serving.server_options`
and :func:`meter_dashboard.core.runtime.configure`), so "planner vs floor" compares the
pages, not the servers::

    python -m tests.benchmarks.load.floor_app --port 5100 [--num-threads N]

``/floor``: the input (``.floor-input``) takes a number x; the pane (``.floor-count``) shows
``ceil(1e6 / x)`` with thousands separators, the same kind of answer as the planner's count.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
import panel as pn
from bokeh.plotting import figure

from meter_dashboard.core import runtime
from meter_dashboard.core.serving import DEFAULT_THREADS, server_options


def answer(text: str) -> str:
    """What the pane shows for the input's text."""
    try:
        x = float(text)
    except ValueError:
        return "?"
    return f"{math.ceil(1e6 / x):,}" if x > 0 else "?"


def build():
    box = pn.widgets.TextInput(value="0.01", name="x", css_classes=["floor-input"], width=200)
    pane = pn.pane.HTML(f'<span class="floor-count">{answer(box.value)}</span>')
    x = np.arange(1000)
    fig = figure(height=300, width=700, title="1,000 points")
    fig.line(x, np.sin(x / 50.0))

    def update(event):
        pane.object = f'<span class="floor-count">{answer(event.new)}</span>'

    box.param.watch(update, "value")
    return pn.Column(box, pane, pn.pane.Bokeh(fig))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=5100)
    parser.add_argument("--num-threads", type=int, default=DEFAULT_THREADS)
    args = parser.parse_args(argv)
    runtime.configure(args.num_threads)
    pn.serve({"floor": build}, show=False, **server_options(args.port, "127.0.0.1"))


if __name__ == "__main__":
    main()
