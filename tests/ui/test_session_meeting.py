"""Issue 30 on the session page: how many steps a used test set has left, one bound everywhere, links both ways."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from meter_dashboard.meter.model import plan
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.ui

EPS = [0.01, 0.02, 0.03, 0.04, 0.05]


def text(page, selector: str) -> str:
    return page.locator(selector).first.inner_text().strip()


def twelve_steps(tmp_path):
    path = tmp_path / "twelve.csv"
    path.write_text("step,val_accuracy,test_accuracy\n"
                    + "".join(f"{k},{0.80 + 0.005 * k:.3f},{0.79 + 0.004 * k:.3f}\n" for k in range(1, 13)))
    return path


def test_a_used_test_set_answers_how_many_steps_it_has_left(page, server, open_page, relevant_errors, tmp_path):
    # "Our test set has 10,000 labels and was used 12 times: how many more steps can it take?"
    open_page(page, server, "/session", ".meter-signal")
    page.locator(".trace-upload input[type=file]").first.set_input_files(str(twelve_steps(tmp_path)))
    expect(page.locator(".session-title").first).to_contain_text("twelve.csv", timeout=30_000)
    size = page.locator(".test-size-input input").first
    size.fill("10000")
    size.press("Enter")
    inverse = plan(EPS, 0.01, 12, budget=10_000)  # the planner's answer for this budget
    assert inverse.max_steps["incremental"] == 0
    left = page.locator(".session-steps-left").first
    expect(left).to_have_text("none", timeout=20_000)
    card = page.locator(".md-headline", has=page.locator(".session-steps-left")).first
    expect(card).to_contain_text("10,000 labels support 0 steps at the planned ε (Hoeffding's bound); 12 used")
    expect(card).to_contain_text(f"still guarantee ε₁ = {inverse_eps_over(12, 10_000)}")
    answer = page.locator(".session-steps-answer").first
    expect(answer).to_contain_text("10,000 labels support 0 steps at the planned ε = 0.01, 0.02, 0.03, 0.04, 0.05")
    expect(answer).to_contain_text("12 used, none left")
    # T is the trace's length, and the page says so: never "the last of the T = 12 steps this test set supports"
    expect(page.locator(".session-used").first).to_have_text("12 / 12")
    used = page.locator(".md-headline", has=page.locator(".session-used")).first
    expect(used).to_contain_text("the trace's length (no T was given)")
    expect(page.locator(".session-alarms").first).to_contain_text("No T was given: T = 12")
    assert "used the last of the T = 12 steps" not in page.locator("body").inner_text()
    # more labels: the planner's 110 steps at these settings, 98 left
    size.fill("50000")
    size.press("Enter")
    assert plan(EPS, 0.01, 12, budget=50_000).max_steps["incremental"] == 110
    expect(left).to_have_text("98", timeout=20_000)
    expect(card).to_contain_text("50,000 labels support 110 steps at the planned ε")
    page.screenshot(path=str(ARTIFACTS / "session-steps-left.png"), full_page=False)
    assert relevant_errors(page.console_errors) == []


def test_a_trace_past_the_plans_t_says_one_thing_on_the_card_the_alarm_and_the_lead(page, server, open_page,
                                                                                     relevant_errors, tmp_path):
    # issue 30: 12 steps past a plan of T = 10 with 50,000 labels read "the last of the T = 10 steps this test set
    # supports: draw a new test set" beside a card saying 98 steps were left; with 10,000 the card says none
    open_page(page, server, "/session?steps=10&test_size=50000", ".meter-signal")
    page.locator(".trace-upload input[type=file]").first.set_input_files(str(twelve_steps(tmp_path)))
    expect(page.locator(".session-title").first).to_contain_text("twelve.csv", timeout=30_000)
    left = page.locator(".session-steps-left").first
    card = page.locator(".md-headline", has=page.locator(".session-steps-left")).first
    alarm = page.locator(".session-alarm.alarm-budget_used_up").first
    lead = page.locator(".session-lead").first
    assert plan(EPS, 0.01, 12, budget=50_000).max_steps["incremental"] == 110
    expect(left).to_have_text("98", timeout=20_000)
    expect(card).to_contain_text("50,000 labels support 110 steps at the planned ε (Hoeffding's bound); 12 used")
    expect(card).to_contain_text("the plan's T = 10 steps are used up (2 beyond it): raise T to 110 in a new plan "
                                 "to take the 98 left")
    capacity = "these 50,000 labels support 110 steps at the planned ε (Hoeffding's bound): 12 used, 98 left"
    expect(alarm).to_contain_text(capacity)
    expect(alarm).to_contain_text("or raise T to 110 in a new plan to take the 98 left")
    expect(lead).to_contain_text("these 50,000 labelled examples support 110 model versions at the planned accuracy")
    expect(lead).to_contain_text("raise T to 110 in a new plan to test 98 more model versions")
    assert "steps this test set supports" not in page.locator("body").inner_text()
    # fewer labels than the plan needs: none left, and every one of them says to draw a new test set
    size = page.locator(".test-size-input input").first
    size.fill("10000")
    size.press("Enter")
    assert plan(EPS, 0.01, 12, budget=10_000).max_steps["incremental"] == 0
    expect(left).to_have_text("none", timeout=20_000)
    expect(card).to_contain_text("the plan's T = 10 steps are used up (2 beyond it): draw a new test set")
    expect(alarm).to_contain_text("these 10,000 labels support 0 steps at the planned ε (Hoeffding's bound): "
                                  "12 used, none left — draw a new test set")
    expect(lead).to_contain_text("these 10,000 labelled examples support 0 model versions at the planned accuracy")
    expect(lead).to_contain_text("draw a new test set.")
    for where in (card, alarm, lead):
        expect(where).not_to_contain_text("raise T")
    assert relevant_errors(page.console_errors) == []


def inverse_eps_over(steps: int, n: int) -> str:
    """ε₁ that n labels guarantee over ``steps`` steps, as the page writes it (four significant digits)."""
    from meter_dashboard.core import formatting as fmt

    return fmt.number(plan(EPS, 0.01, steps, budget=n).min_epsilon["incremental"])


def test_the_planners_exact_bound_is_the_sessions(page, server, open_page, relevant_errors):
    # the planner with the exact bound said 27,151; its "Replay a trace with this meter" replayed Hoeffding's 38,005
    open_page(page, server, "/planner?bound=binomial", ".label-count-incremental")
    exact = plan(EPS, 0.01, 10, bound="binomial").labels["incremental"]
    assert exact == 27_151
    expect(page.locator(".label-count-incremental").first).to_have_text(f"{exact:,}", timeout=60_000)
    link = page.locator(".share-link a").first
    assert "bound=binomial" in link.get_attribute("href")
    link.click()
    page.locator(".meter-signal").first.wait_for(timeout=60_000)
    needed = page.locator(".session-needed").first
    expect(needed).to_contain_text(f"(exact binomial bound): incremental meter {exact:,}", timeout=60_000)
    assert "38,005" not in needed.inner_text()
    expect(page.locator(".meter-summary-text").first).to_contain_text("exact binomial bound")
    # the card's guarantee and its steps left use it too (the example's 5,509 labels)
    expect(page.locator(".session-steps-answer").first).to_contain_text("exact binomial bound")
    # the report says the same
    with page.expect_download() as info:
        page.locator(".session-report button").first.click()
    report = open(info.value.path(), encoding="utf-8").read()
    assert f"incremental meter {exact:,}" in report and "exact binomial bound" in report
    assert relevant_errors(page.console_errors) == []


def test_links_carry_every_input_both_ways(page, server, open_page, relevant_errors):
    # /session?test_size=10000 -> "Open this meter in the planner" dropped n
    open_page(page, server, "/session?example=emocontext&test_size=10000&delta=0.05&bound=binomial"
                            "&max_error_rate=0.2", ".meter-signal")
    link = page.locator(".planner-link a").first
    expect(link).to_have_attribute("href", re.compile(r"budget=10000"), timeout=20_000)
    query = parse_qs(urlparse(link.get_attribute("href")).query)
    assert query["budget"] == ["10000"] and query["delta"] == ["0.05"] and query["bound"] == ["binomial"]
    assert query["max_error_rate"] == ["0.2"] and query["epsilon"] == ["0.01,0.02,0.03,0.04,0.05"]
    link.click()
    page.locator(".label-count-incremental").first.wait_for(timeout=60_000)
    expect(page.locator(".budget-input input").first).to_have_value(re.compile(r"^10,?000$"))
    expect(page.locator(".bound-select .md-choice[aria-pressed=true]").first).to_have_text("Exact binomial")
    search = page.evaluate("() => window.location.search")
    assert "budget=10000" in search and "max_error_rate=0.2" in search and "delta=0.05" in search
    # and back: the planner's link to the session carries the bound, ε, δ
    back = page.locator(".share-link a").first
    q = parse_qs(urlparse(back.get_attribute("href")).query)
    assert q["bound"] == ["binomial"] and q["max_error_rate"] == ["0.2"] and q["delta"] == ["0.05"]
    assert relevant_errors(page.console_errors) == []


def test_a_guarded_test_set_shows_the_plans_bound(page, open_page, relevant_errors, tmp_path):
    # /testsets: a test set planned with the exact bound counts, replays and is shown with it
    from meter_dashboard.testsets import service as S
    from meter_dashboard.testsets import signals as G
    from meter_dashboard.testsets.store import Store
    from tests.testsets.conftest import Data
    from tests.testsets.serving import Server

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store, data = Store(url), Data()
    settings = G.meter_settings(epsilon=EPS, delta=0.1, steps=3, bound="binomial")
    admin = S.create(store, "exact", data.labels_csv(), settings)["admin_token"]
    S.submit(store, "exact", data.mapping(data.predictions(2400)), 0.93, tenant="alice")
    exact = plan(EPS, 0.1, 3, bound="binomial").labels["incremental"]
    server = Server(url, tmp_path / "logs", pages="testsets")
    try:
        open_page(page, server.base, "/testsets", ".testset-card")
        page.locator(".testset-admin-token input").first.fill(admin)
        page.locator(".testset-show button").first.click()
        card = page.locator(".testset-card").first
        expect(card).to_contain_text("exact binomial bound", timeout=20_000)
        expect(card.locator(".md-headline", has=page.locator(".testset-labels"))).to_contain_text(
            f"the plan needs {exact:,}")
        assert exact < plan(EPS, 0.1, 3).labels["incremental"]  # not Hoeffding's count
        assert relevant_errors(page.console_errors) == []
    finally:
        server.stop()
        store.dispose()
