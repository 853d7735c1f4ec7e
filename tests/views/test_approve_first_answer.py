"""/approve's first answer (issue 29): the link's decisions in the first response, the live view's own words.

The decisions of a shipped example are computed on the request within ``APPROVE_SECONDS`` (a worker thread), the
same for everyone: one computation per link and process.  When they are not known in time the first response
says what is computed and for how long, and the computation goes on for the next person (never kept as "none").
"""
from __future__ import annotations

import html
import threading

import pytest

from meter_dashboard.app import first_answer as fa
from meter_dashboard.approvals import view_text
from meter_dashboard.approvals.model import EXAMPLES, METHODS, ApproveModel, approve, clear_shared_results, load_example
from meter_dashboard.approvals.view import Approve
from meter_dashboard.ui.style import error_html


@pytest.fixture
def patient(monkeypatch):
    """A budget no machine misses: which links are cheap enough is measured (benchmarks), not asserted here."""
    monkeypatch.setattr(fa, "APPROVE_SECONDS", 120.0)


@pytest.mark.parametrize("example", list(EXAMPLES))
@pytest.mark.parametrize("method", METHODS)
def test_the_first_answer_has_the_live_views_decisions(patient, example, method):
    a = fa.first_answer("approve", f"example={example}&method={method}")
    view = Approve(example=example, method=method)  # the notebook's view: its panes hold what the live page shows
    for pane in (view.lead, view.headlines, view.sentence, view.table, view.decisions.method_note):
        assert pane.object and pane.object in a.answer, pane
    trace, pres = load_example(example)
    r = approve(trace, method, prespecified=pres)  # the plain function, on its own path
    shown = [flag == "true" for flag in __import__("re").findall(r"data-approved='(\w+)'", a.answer)]
    assert shown == [bool(x) for x in r.approved]
    assert a.headline.startswith(f"{r.approvals} of {len(r.names)} modifications approved ({r.label}, α 0.1)")
    assert a.sentence == r.lead() and a.live == ".approve-lead" and not a.message
    assert ("Trace", view_text.EXAMPLE_LABELS[example]) in a.inputs and ("Procedure", r.label) in a.inputs


def test_the_decisions_are_the_same_every_time_they_are_computed():
    values, errors = fa.approve_link({"example": "adversary", "method": "fs-srgp", "seed": "4"})
    assert not errors
    clear_shared_results()
    first = fa._decided(values).result.to_dict()
    clear_shared_results()
    assert fa._decided(values).result.to_dict() == first  # so one computation can answer everyone


def test_a_link_is_read_as_the_live_page_reads_it():
    query = {"example": "adversary", "method": "fsSRGP", "alpha": "0.05", "margin": "x", "steps": "3"}
    values, errors = fa.approve_link(query)
    model = ApproveModel(compare_active=False)
    assert model.update_from_query(dict(query)) == errors and errors == ["margin must be a number; got 'x'"]
    assert values == {"example": "adversary", "method": "fs-srgp", "alpha": 0.05} and model.method == "fs-srgp"
    assert fa.approve_link(query, "too long") == ({}, ["too long"])


def test_a_bad_method_gets_the_pages_message(patient):
    a = fa.first_answer("approve", "example=adversary&method=nope")
    view = Approve(example="adversary")
    errors = view.model.update_from_query({"method": "nope"})
    view.inputs.draw(errors)  # what the live page shows beside its procedure for this link
    assert view.error.object and view.error.object in a.answer
    assert a.message == a.sentence == "Link: method must be one of naive, bonferroni, weighted-bonferroni, " \
                                      "bonf-srgp, fs-srgp, pres-srgp; got 'nope'"
    assert error_html(a.message) in a.answer and "got 'nope'" in html.unescape(a.answer)
    assert a.headline.startswith(f"{view.model.result.approvals} of 50 modifications approved (fsSRGP")  # the default


class _Held:
    """``first_answer._decided`` held until released (a computation slower than the budget), counting its calls."""

    def __init__(self, fail: int = 0):
        self.release, self.calls, self.fail = threading.Event(), 0, fail
        self._decided = fa._decided

    def __call__(self, values):
        self.calls += 1
        assert self.release.wait(60)
        if self.calls <= self.fail:
            raise RuntimeError("the worker failed")
        return self._decided(values)


def test_decisions_not_known_in_time_say_what_is_computed_and_come_with_the_next_request(monkeypatch):
    from meter_dashboard.app.pages import first_response

    held = _Held()
    monkeypatch.setattr(fa, "_decided", held)
    monkeypatch.setattr(fa, "APPROVE_SECONDS", 0.01)
    query = "example=adversary&method=fs-srgp&seed=314159"  # a link no other test computes
    assert fa.first_answer("approve", query) is None
    assert fa.computing("approve", query).startswith(
        "computing the approvals of the 50 modifications on the link's trace with fsSRGP (")
    top = first_response("approve", "light", query)[2]
    assert "computing the approvals of the 50 modifications" in top and "approve-count" not in top
    assert first_response("approve", "light", query)[2] == top  # still computing: said again
    held.release.set()
    fa.approval(fa.approve_link({"example": "adversary", "method": "fs-srgp", "seed": "314159"})[0]).result(60)
    a = fa.first_answer("approve", query)  # the next person: the decisions, from the same computation
    assert a is not None and held.calls == 1 and "approve-count" in a.answer
    top = first_response("approve", "light", query)[2]
    assert "approve-count" in top and a.answer.split("<table")[0] in top  # the response was not kept as "computing"


def test_a_failed_computation_is_computed_again(monkeypatch):
    held = _Held(fail=1)
    held.release.set()
    monkeypatch.setattr(fa, "_decided", held)
    monkeypatch.setattr(fa, "APPROVE_SECONDS", 60.0)
    query = "example=refits&method=naive&seed=271828"
    assert fa.first_answer("approve", query) is None  # logged; the first response says what is computed
    assert fa.first_answer("approve", query) is not None and held.calls == 2
    assert fa.first_answer("approve", query) is not None and held.calls == 2  # kept once known


def test_first_responses_compute_a_bounded_number_of_links_at_once(monkeypatch):
    held = _Held()
    monkeypatch.setattr(fa, "_decided", held)
    monkeypatch.setattr(fa, "APPROVE_SECONDS", 0.01)
    monkeypatch.setattr(fa, "APPROVALS_RUNNING", 1)
    one, other = "example=refits&method=naive&seed=1618", "example=refits&method=naive&seed=1619"
    assert fa.first_answer("approve", one) is None and held.calls == 1  # computing (held)
    assert fa.first_answer("approve", other) is None and held.calls == 1  # not started: a thread is busy
    held.release.set()
    fa.approval(fa.approve_link({"example": "refits", "method": "naive", "seed": "1618"})[0]).result(60)
    assert fa.first_answer("approve", one) is not None
    monkeypatch.setattr(fa, "APPROVE_SECONDS", 60.0)
    assert fa.first_answer("approve", other) is not None and held.calls == 2  # started once a thread was free
