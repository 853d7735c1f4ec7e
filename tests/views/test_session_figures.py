"""The session's Bokeh figures: decimation keeps every bucket's extremes; plot data are binary arrays."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from meter_dashboard.core.gauge import GaugeFigure
from meter_dashboard.session.figures import LOD_POINTS, ScorePlot, SignalPlot, decimate
from meter_dashboard.session.model import replay
from meter_dashboard.session.trace import Trace, load_example

FIG3 = dict(ranges=[0, 0.005, 0.01, 0.02, 0.05, 1], epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.1)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 20_000), st.integers(2, 300), st.integers(0, 10**6))
def test_decimation_keeps_the_extremes_of_every_bucket(n, buckets, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=n), rng.integers(1, 6, size=n)
    idx = decimate([a, b], buckets=buckets)
    assert np.all(np.diff(idx) > 0) and idx[0] == 0 and idx[-1] == n - 1
    assert idx.size <= max(n, 0) and (n <= 2 * buckets or idx.size <= 5 * buckets + 1)
    assert a[idx].max() == a.max() and a[idx].min() == a.min() and b[idx].max() == b.max()
    if n > 2 * buckets:  # each bucket's own extremes survive
        size = -(-n // buckets)
        for k in range(0, buckets, max(1, buckets // 7)):
            lo, hi = k * size, min(n, (k + 1) * size)
            if lo < hi:
                kept = idx[(idx >= lo) & (idx < hi)]
                assert a[kept].max() == a[lo:hi].max() and a[kept].min() == a[lo:hi].min()


def test_a_window_is_decimated_on_its_own():
    a = np.sin(np.arange(100_000) / 50.0)
    idx = decimate([a], 40_000, 41_000, buckets=100)
    assert idx.min() >= 40_000 and idx.max() == 40_999 and a[idx].max() == a[40_000:41_000].max()


def big_trace(n=200_000):
    rng = np.random.default_rng(1)
    val = rng.uniform(0.7, 0.95, n)
    return Trace(steps=np.arange(1, n + 1), val=val, test=np.clip(val - 0.01, 0, 1), reverted=rng.random(n) < 0.01)


def test_plots_send_binary_arrays_and_decimate_long_traces():
    small = replay(load_example("emocontext"), **FIG3)
    scores = ScorePlot()
    scores.update(small)
    data = scores.source.data
    assert all(isinstance(v, np.ndarray) for v in data.values()) and data["step"].tolist() == list(range(1, 9))
    assert not scores.decimated and scores.val_dots.visible
    r = replay(big_trace(), **FIG3)
    scores.update(r)
    signals = SignalPlot()
    signals.update(r)
    assert scores.decimated and signals.decimated and not scores.val_dots.visible
    assert len(scores.source.data["step"]) < 8 * 1500 and len(scores.reverts.data["step"]) <= LOD_POINTS
    assert signals.source.data["signal"].dtype == np.int32
    assert scores.source.data["val"].max() == r.trace.val.max()  # the spikes survive
    scores.show_window(1000, 2000)  # zoomed in: every step of the window
    assert scores.source.data["step"].tolist() == list(range(1000, 2001))


def test_gauge_labels_stay_inside_the_figure():
    g = GaugeFigure()
    for x, shown, sup in ((0.0161, 0.03, 0.0776), (0.9, 0.05, 0.9), (0.001, 0.01, None)):
        g.update([0, 0.005, 0.01, 0.02, 0.05, 1], [0.01, 0.02, 0.03, 0.04, 0.05], x, 3, 4, shown, sup)
        for xpos, align in zip(g.texts.data["x"], g.texts.data["align"]):
            assert 0 <= xpos <= 1.0 and (align == "left") == (xpos < 0.56)
    g.update(list(np.linspace(0, 1, 41)), list(np.linspace(0.01, 0.2, 40)), 0.5, 20, 20, 0.1, None)
    assert len(g.bounds.data["x"]) <= 11  # 40 signals: the boundary labels are thinned, not overlapping
