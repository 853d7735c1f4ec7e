"""Each page's first answer (issue 29) without a server: the live view's own markup, bounded, never failing."""
from __future__ import annotations

import html

import pytest

from meter_dashboard.app.first_answer import ANSWERS, first_answer, planner_result, query_of
from meter_dashboard.bounds import meter as M
from meter_dashboard.meter import view_html
from meter_dashboard.meter.text import file_stem, plan_inputs, summary_text
from meter_dashboard.ui.urlstate import MAX_QUERY_CHARS

EPS = "0.01,0.02,0.03,0.04,0.05"


def test_the_planners_first_answer_is_the_live_views_markup():
    a = first_answer("planner", f"epsilon={EPS}&delta=0.01&steps=10&budget=20000")
    r, ranges, message = planner_result({"epsilon": EPS, "delta": "0.01", "steps": "10", "budget": "20000"})
    assert not message
    live = view_html.answer(r, stale=False, summary=summary_text(r, plan_inputs(r, ranges)), stem=file_stem(r))
    assert str(a.answer) == live  # the same function, the same result: the same text
    assert a.headline == "38,005 labels — 10 steps within ε 0.01–0.05, probability 0.99 (incremental meter)"
    assert a.sentence == r.lead() and a.sentence.startswith("With 38,005 labelled examples we can test 10 model")
    assert ("Label budget", "20,000") in a.inputs
    assert 'headline-budget-steps">' in live and "short" in live  # 20,000 labels fall short of T = 10


def test_a_planner_link_with_one_epsilon_and_other_settings():
    a = first_answer("planner", "epsilon=0.05&delta=0.05&steps=20")
    n = M.labels("incremental", [0.05], 0.05, 20)
    assert a.headline == f"{n:,} labels — 20 steps within ε 0.05, probability 0.95 (incremental meter)"


def test_a_bad_link_answers_the_defaults_with_the_pages_message():
    a = first_answer("planner", "steps=0")
    assert a.message.startswith("The link's settings were not applied: steps must be")
    assert a.sentence == a.message and a.message in html.unescape(str(a.answer))
    assert a.headline.startswith("38,005 labels")  # the plan the page shows instead: the defaults


def test_the_query_is_read_within_the_pages_bound():
    assert query_of("a=1&b=2") == ({"a": "1", "b": "2"}, "")
    query, refused = query_of("steps=" + "9" * MAX_QUERY_CHARS)
    assert query == {} and f"(at most {MAX_QUERY_CHARS:,})" in refused


@pytest.mark.parametrize("name", list(ANSWERS))
@pytest.mark.parametrize("query", ["", "epsilon=%3Cb%3Ex%3C/b%3E&step=%3Cscript%3E&condition=%3Ci%3E&variant=%3Cb%3E"
                                       "&example=..%2F..%2Fetc%2Fpasswd&gamma=1e400&resamples=-1",
                                   "delta=0&reliability=nan&steps=-5&step=1e309&paired=maybe"])
def test_every_first_answer_survives_any_query_and_escapes_it(name, query):
    a = first_answer(name, query)
    assert a is not None, name
    assert "<script>" not in a.answer and "<b>x" not in a.answer and "<i>" not in a.answer
    assert a.headline and a.sentence and a.inputs
