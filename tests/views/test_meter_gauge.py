"""The meter gauge's drawing helpers (piecewise-linear axis, colours) and the session view's wiring, no browser."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.ui.meter_gauge import MeterGauge, display_position, signal_colors

RANGES = [0, 0.005, 0.01, 0.02, 0.05, 1]


def test_boundaries_sit_at_equal_steps_and_values_inside_their_segment():
    assert display_position(RANGES, RANGES).tolist() == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    # 0.0161 lies in [0.01, 0.02): 61% of the way through segment 3 -> (2 + 0.61) / 5
    assert np.isclose(display_position([0.0161], RANGES)[0], (2 + 0.61) / 5)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=40))
def test_the_axis_is_monotone(values):
    v = np.sort(np.asarray(values))
    pos = display_position(v, RANGES)
    assert np.all(np.diff(pos) >= 0) and pos.min() >= 0 and pos.max() <= 1


def test_colours_are_distinct():
    for m in (1, 2, 5, 8, 12, 40):
        colors = signal_colors(m)
        assert len(colors) == m and len(set(colors)) == m


def test_gauge_draws_the_step_it_is_given():
    g = MeterGauge(empirical_overfitting=0.0161, signal=3, incremental_signal=4, epsilon_shown=0.04,
                   supported_epsilon=0.08)
    segments = g.layout["segments"]
    assert [s["number"] for s in segments] == ["1", "2", "3", "4", "5"]
    assert segments[2]["current"] and segments[3]["worst"]  # this step solid, worst so far outlined
    assert np.isclose(g.layout["gap"]["end"], (2 + 0.61) / 5)  # the solid bar ends at the gap
    assert np.isclose(g.layout["eps"]["end"], display_position([0.04], RANGES)[0])  # the grey bar at eps_4
    assert np.isclose(g.layout["hatch"]["end"], display_position([0.08], RANGES)[0])  # what the labels support
    assert [k["text"] for k in g.layout["marks"]] == ["this step", "worst so far"]
    html = g.pane.object
    assert html.count("class=\"md-gauge-seg") == 5 and "md-gauge-current" in html and "md-gauge-hatch" in html
    assert "width: 52.200%" in html and "0.0161 → signal 3" in html
    g.param.update(ranges=[0, 0.5, 1], epsilon=[0.01, 0.02], signal=1, incremental_signal=1, supported_epsilon=None)
    assert [s["number"] for s in g.layout["segments"]] == ["1", "2"] and g.layout["hatch"] is None
    assert "md-gauge-hatch" not in g.pane.object


def test_the_gauge_is_html_escaped_and_creates_no_bokeh_figure():
    g = MeterGauge(meter_name="<b>x</b>", epsilon_shown=0.03, epsilon_note="none <i>guaranteed</i>")
    assert "<b>x</b>" not in g.pane.object and "&lt;b&gt;x&lt;/b&gt;" in g.pane.object
    assert "none &lt;i&gt;guaranteed&lt;/i&gt;" in g.pane.object
    assert not hasattr(g, "figure")


def test_session_view_renders_the_models_step():
    from meter_dashboard.session.view import Session

    view = Session(example="emocontext")
    assert 'meter-signal">3<' in view.cards.object and 'meter-epsilon">0.03<' in view.cards.object
    assert 'meter-guaranteed">0.07763<' in view.cards.object  # n = 5,509 < 36,889: what these labels guarantee
    view.model.step_back()
    assert 'session-step">7<' in view.cards.object and 'meter-signal">2<' in view.cards.object
    assert not view.model.load(b"step,val_accuracy,test_accuracy\n1,0.5,x\n", name="<b>bad</b>.csv")
    assert "row 2, column 3 (test_accuracy)" in view.trace_error.object
    assert 'session-step">7<' in view.cards.object  # the previous trace stays
    view.model.load(b"step,val_accuracy,test_accuracy\n1,0.5,0.4\n", name="<script>x</script>.csv")
    assert "<script>" not in view.title.object and "&lt;script&gt;" in view.title.object
