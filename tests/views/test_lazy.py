"""ui/lazy.py: a part built when it comes near the screen (served), at once elsewhere."""
from __future__ import annotations

import panel as pn
import pytest

from meter_dashboard.ui import lazy


def _part(calls):
    def build():
        calls.append(1)
        return pn.pane.HTML("the part", css_classes=["the-part"])
    return build


def test_outside_a_server_the_part_is_built_at_once():
    calls: list = []
    section = lazy.WhenSeen(_part(calls), height=300, text="scroll")
    assert calls == [1] and section.built
    assert section.holder.objects == [section.part]


@pytest.fixture
def as_served(monkeypatch):
    monkeypatch.setattr(lazy, "served", lambda: True)


def test_served_the_part_waits_for_the_box_to_be_seen_then_is_built_once(as_served):
    calls: list = []
    section = lazy.WhenSeen(_part(calls), height=300, text="The curve is drawn when you scroll to it")
    assert calls == [] and not section.built
    (watch,) = section.holder.objects
    assert isinstance(watch, lazy.SeenWatch) and watch.height == 300
    assert watch.text == "The curve is drawn when you scroll to it"
    watch.seen = True  # what the box's script sets when it comes near the screen
    assert calls == [1] and section.built and section.holder.objects == [section.part]
    watch.seen = False  # the script never does this; nothing is built twice either way
    watch.seen = True
    assert section.ensure() is section.part and calls == [1]


def test_asking_for_the_part_builds_it(as_served):
    calls: list = []
    section = lazy.WhenSeen(_part(calls), height=100)
    part = section.ensure()
    assert calls == [1] and section.holder.objects == [part]


def test_the_box_script_watches_the_screen_with_a_margin():
    assert "IntersectionObserver" in lazy.SeenWatch._esm
    assert f"{lazy.AHEAD_PX}px" in lazy.SeenWatch._esm


def test_on_screen_outside_a_server_is_panels_onload(monkeypatch):
    seen = []
    monkeypatch.setattr(pn.state, "onload", lambda cb, threaded=False: seen.append(cb))
    callback = lambda: None  # noqa: E731
    lazy.on_screen(callback)
    assert seen == [callback]
