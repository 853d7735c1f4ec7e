"""The planner page's own cost, in process (issue 19): figures to report, never asserted.

Run with:  python -m pytest tests/benchmarks/test_bench_planner_models.py --benchmark-enable

- opening: the page as ``pages.build`` makes it, its models and their serialization (what a
  session's first response and document pull cost the server), beside the floor app built the
  same way, with the model counts in ``extra_info``;
- a change: δ typed into the box until every update is made (the model, the answer's markup,
  the curve's changed columns).  Each distinct δ is new (nothing cached), and a cycle over four
  values shows what the per-process caches save.

The served figures (server CPU per session and per change against the floor, first render in
Chromium) are ``python -m tests.benchmarks.load.cost`` and ``...load.browser_figures``.
"""
from __future__ import annotations

import itertools

import panel as pn
from bokeh.document import Document
from panel.io.state import set_curdoc

from meter_dashboard.app import pages
from meter_dashboard.meter import stages
from meter_dashboard.meter.curves import hoeffding_curve
from meter_dashboard.meter.view import Planner
from tests.benchmarks.load.floor_app import build as floor_build


def _open(build) -> int:
    doc = Document()
    with set_curdoc(doc):
        doc.add_root(build().get_root(doc))
        doc.to_json()
    return len(doc.models)


def test_open_planner(benchmark):
    models = benchmark.pedantic(_open, args=(lambda: pages.build("planner"),), rounds=10, iterations=1,
                                warmup_rounds=2)
    benchmark.extra_info["bokeh_models"] = models


def test_open_floor(benchmark):
    models = benchmark.pedantic(_open, args=(floor_build,), rounds=10, iterations=1, warmup_rounds=2)
    benchmark.extra_info["bokeh_models"] = models


def _page():
    doc = Document()
    with set_curdoc(doc):
        view = Planner(sync_url=True)
        doc.add_root(pn.Column(view.controls(), view.results()).get_root(doc))
    return view, doc


def test_change_delta_new_values(benchmark):
    """Every δ new to the process: the plan, the curve and the answer computed."""
    view, doc = _page()
    values = (f"{0.011 + 0.00013 * i:.5f}" for i in itertools.count())

    def change():
        with set_curdoc(doc):
            view.delta.text.value = next(values)

    benchmark.pedantic(change, rounds=30, iterations=1, warmup_rounds=3)
    assert view.plan.result.delta >= 0.011 and f"{view.plan.result.labels['regular']:,}" in view.headlines.object


def test_change_delta_cycle_cached(benchmark):
    """Four δ in turn (the load scripts' cycle): after the first round each plan comes from the caches."""
    view, doc = _page()
    values = itertools.cycle(["0.05", "0.02", "0.1", "0.01"])

    def change():
        with set_curdoc(doc):
            view.delta.text.value = next(values)

    benchmark.pedantic(change, rounds=40, iterations=1, warmup_rounds=4)
    benchmark.extra_info["cache"] = {**stages.cache_info(), "curves": hoeffding_curve.cache_info()._asdict()}
