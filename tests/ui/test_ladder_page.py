"""The Ladder page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

import meter_dashboard.models.ladder as ml

pytestmark = pytest.mark.ui


def fmt(x: float) -> str:
    """How the page prints a loss: 4 decimals without trailing zeros."""
    return f"{x:.4f}".rstrip("0").rstrip(".")


def scores(page) -> list[str]:
    return [s.strip() for s in page.locator(".ladder-score").all_inner_texts()]


def test_replay_of_the_shipped_example(page, server, open_page, relevant_errors):
    open_page(page, server, "/ladder", ".ladder-score")
    expected = ml.ladder(ml.load_example())          # parameter-free
    assert scores(page) == [fmt(v) for v in expected.scores]
    assert page.locator(".ladder-releases").first.inner_text().strip() == str(expected.releases)
    assert page.locator(".ladder-labels").first.inner_text().strip() == "40,343"   # Lemma 4, eps = eta = 0.05
    assert relevant_errors(page.console_errors) == []


def test_fixed_step_from_the_url(page, server, open_page, relevant_errors):
    open_page(page, server, "/ladder?variant=fixed_step&step=0.01", ".ladder-score")
    expected = ml.ladder(ml.load_example(), step=0.01)
    expect(page.locator(".ladder-score").first).to_have_text(fmt(expected.scores[0]))
    page.wait_for_function("() => document.querySelector('body') !== null")
    assert scores(page) == [fmt(v) for v in expected.scores]
    assert page.locator(".ladder-step input").first.is_visible()
    assert relevant_errors(page.console_errors) == []


def test_upload_with_ties_then_a_bad_file(page, server, open_page, tmp_path):
    open_page(page, server, "/ladder?variant=fixed_step&step=0.25", ".ladder-score")
    good = tmp_path / "ties.csv"
    good.write_bytes(ml.example_path("ladder_ties.csv").read_bytes())
    page.locator(".ladder-upload input[type=file]").first.set_input_files(str(good))
    # hand replay with eta = 0.25 (tests/bounds/test_ladder.py): ties at the threshold are not released
    expect(page.locator(".ladder-score")).to_have_count(5)
    assert scores(page) == ["0.75", "0.75", "0.25", "0.25", "0.25"]
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n0,1\n0.5,oops\n", encoding="utf-8")
    page.locator(".ladder-upload input[type=file]").first.set_input_files(str(bad))
    message = page.locator(".ladder-error .md-error").first
    message.wait_for(state="visible")
    assert message.inner_text().strip() == "line 3, column 2 (b): loss must be a number in [0, 1]; got 'oops'"
    assert scores(page) == ["0.75", "0.75", "0.25", "0.25", "0.25"]   # the last good replay stays


def test_user_text_is_escaped(page, server, open_page, tmp_path):
    open_page(page, server, "/ladder", ".ladder-score")
    f = tmp_path / "x.csv"
    f.write_text('"<img src=x onerror=alert(1)>",b\n1,0\n0,1\n', encoding="utf-8")
    page.locator(".ladder-upload input[type=file]").first.set_input_files(str(f))
    expect(page.locator(".ladder-score")).to_have_count(2)
    assert "<img src=x onerror=alert(1)>" in page.locator(".ladder-table table").first.inner_text()
    assert page.locator(".ladder-table img").count() == 0


def test_label_bound_updates(page, server, open_page):
    open_page(page, server, "/ladder", ".ladder-labels")
    box = page.locator(".size-submissions input").first
    box.fill("1000")
    box.press("Enter")
    expected = ml.ladder_size(0.05, 0.05, 1000, 0.05).labels
    expect(page.locator(".ladder-labels").first).to_have_text(f"{expected:,}")


@pytest.mark.slow
def test_attack_runs_on_load_and_again_on_click(page, server, open_page, relevant_errors):
    open_page(page, server, "/ladder", ".attack-naive")
    default = ml.boosting_attack(4000, 400, seed=0, trials=5)
    expect(page.locator(".attack-naive").first).to_have_text(fmt(default.at()["naive_public"]))
    box = page.locator(".attack-submissions input").first
    box.fill("60")
    box.press("Enter")
    trials = page.locator(".attack-trials input").first
    trials.fill("1")
    trials.press("Enter")
    page.locator(".ladder-run button").first.click()
    small = ml.boosting_attack(4000, 60, seed=0, trials=1)
    expect(page.locator(".attack-naive").first).to_have_text(fmt(small.at()["naive_public"]), timeout=30_000)
    expect(page.locator(".attack-ladder").first).to_have_text(fmt(small.at()["ladder_public"]))
    expect(page.locator(".ladder-status").first).to_contain_text("Done")
    assert relevant_errors(page.console_errors) == []


@pytest.mark.slow
def test_attack_shows_progress_and_can_be_cancelled(page, server, open_page, relevant_errors):
    open_page(page, server, "/ladder", ".attack-naive")
    expect(page.locator(".ladder-status").first).to_contain_text("Done", timeout=60_000)
    trials = page.locator(".attack-trials input").first
    trials.fill("200")
    trials.press("Enter")
    page.locator(".ladder-run button").first.click()
    # the bar moves while it runs (the run itself would take about a minute)
    expect(page.locator(".ladder-progress progress").first).to_have_attribute("value", re.compile(r"^[1-9]"),
                                                                              timeout=30_000)
    cancel = page.locator(".ladder-cancel button").first
    expect(cancel).to_be_enabled()
    cancel.click()
    expect(page.locator(".ladder-status").first).to_contain_text("Cancelled", timeout=30_000)
    text = page.locator(".ladder-status .md-note").first.inner_text()
    done, total = (int(v.replace(",", "")) for v in re.findall(r"[\d,]+", text)[:2])
    assert 0 < done < total == 200 * 400
    expect(page.locator(".ladder-run button").first).to_be_enabled()
    assert relevant_errors(page.console_errors) == []
