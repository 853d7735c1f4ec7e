"""The Ladder page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

import meter_dashboard.leaderboard.model as ml
from tests.ui.table_pages import MALFORMED, MALFORMED_IDS, VIEWPORTS, drop, refused_upload, reveal, shown_at

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
    reveal(page, ".ladder-labels")                   # below the fold: built when scrolled to
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
    drop(page, "ladder", tmp_path / "ties.csv", ml.example_path("ladder_ties.csv").read_bytes())
    # hand replay with eta = 0.25 (tests/bounds/test_ladder.py): ties at the threshold are not released
    expect(page.locator(".ladder-score")).to_have_count(5)
    assert scores(page) == ["0.75", "0.75", "0.25", "0.25", "0.25"]
    drop(page, "ladder", tmp_path / "bad.csv", "a,b\n0,1\n0.5,oops\n")
    message = page.locator(".ladder-error .md-error").first
    message.wait_for(state="visible")
    assert message.inner_text().strip() == "line 3, column 2 (b): loss must be a number in [0, 1]; got 'oops'"
    assert scores(page) == ["0.75", "0.75", "0.25", "0.25", "0.25"]   # the last good replay stays


def test_user_text_is_escaped(page, server, open_page, tmp_path):
    open_page(page, server, "/ladder", ".ladder-score")
    drop(page, "ladder", tmp_path / "x.csv", '"<img src=x onerror=alert(1)>",b\n1,0\n0,1\n')
    expect(page.locator(".ladder-score")).to_have_count(2)
    assert "<img src=x onerror=alert(1)>" in page.locator(".ladder-table table").first.inner_text()
    assert page.locator(".ladder-table img").count() == 0


def test_label_bound_updates(page, server, open_page):
    open_page(page, server, "/ladder", ".ladder-score")
    reveal(page, ".ladder-labels")
    box = page.locator(".size-submissions input").first
    box.fill("1000")
    box.press("Enter")
    expected = ml.ladder_size(0.05, 0.05, 1000, 0.05).labels
    expect(page.locator(".ladder-labels").first).to_have_text(f"{expected:,}")


@pytest.mark.slow
def test_attack_runs_on_load_and_again_on_click(page, server, open_page, relevant_errors):
    open_page(page, server, "/ladder", ".ladder-score")
    reveal(page, ".attack-naive")
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
    open_page(page, server, "/ladder", ".ladder-score")
    reveal(page, ".attack-naive")
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
    text = page.locator(".ladder-status .md-sim-status").first.inner_text()
    done, total = (int(v.replace(",", "")) for v in re.findall(r"[\d,]+", text)[:2])
    assert 0 < done < total == 200 * 400
    expect(page.locator(".ladder-run button").first).to_be_enabled()
    assert relevant_errors(page.console_errors) == []


# --------------------------------------------------------------------------- issue 11 #4, #13; issue 15
def test_out_of_range_epsilon_is_refused_beside_the_input(page, server, open_page, relevant_errors):
    # issue 11 #4: "ε = 1.5 on /ladder: the box shows the typed value, the results silently stay"
    open_page(page, server, "/ladder", ".ladder-score")
    reveal(page, ".ladder-labels")
    box = page.locator(".size-epsilon input").first
    box.fill("1.5")
    box.press("Enter")
    message = page.locator(".size-epsilon-message .md-error").first
    expect(message).to_have_text("ε (statistical error) must be in (0, 1); got '1.5'")
    expect(page.locator(".size-stale .md-stale").first).to_contain_text("Showing the last valid label count")
    assert page.locator(".ladder-labels").first.inner_text().strip() == "40,343"   # the last good count stays
    box.fill("0.1")
    box.press("Enter")
    expected = ml.ladder_size(0.1, 0.05, 100, 0.05).labels
    expect(page.locator(".ladder-labels").first).to_have_text(f"{expected:,}")
    expect(page.locator(".size-epsilon-message .md-error")).to_have_count(0)
    expect(page.locator(".size-stale .md-stale")).to_have_count(0)
    assert relevant_errors(page.console_errors) == []


def test_a_count_beyond_the_limit_is_refused_not_shown_wrong(page, server, open_page):
    # issue 15 #1: a step of 1e-300 printed "labels: 1"; now the count is refused and the last one stays
    open_page(page, server, "/ladder", ".ladder-score")
    reveal(page, ".ladder-labels")
    box = page.locator(".size-step input").first
    box.fill("1e-300")
    box.press("Enter")
    expect(page.locator(".size-error .md-error").first).to_contain_text("step must be large enough")
    assert page.locator(".ladder-labels").first.inner_text().strip() == "40,343"


def test_bad_values_in_the_link_get_messages_and_the_page_stays_alive(page, server, open_page, relevant_errors):
    open_page(page, server, "/ladder?epsilon=2&size_step=abc&variant=bogus&submissions=1e400", ".ladder-score")
    reveal(page, ".ladder-labels")
    expect(page.locator(".size-epsilon-message .md-error").first).to_have_text(
        "ε (statistical error) must be in (0, 1); got '2'")
    expect(page.locator(".size-step-message .md-error").first).to_have_text(
        "η (the Ladder's step) must be a number; got 'abc'")
    expect(page.locator(".size-submissions-message .md-error").first).to_contain_text("whole number below 1e30")
    expect(page.locator(".ladder-link-message .md-error").first).to_contain_text("variant")
    assert page.locator(".ladder-labels").first.inner_text().strip() == "40,343"
    assert scores(page) == [fmt(v) for v in ml.ladder(ml.load_example()).scores]
    assert relevant_errors(page.console_errors) == []


@pytest.mark.parametrize("content,needle", MALFORMED["ladder"], ids=MALFORMED_IDS)
def test_malformed_uploads_are_named_by_line_and_column(page, server, open_page, tmp_path, content, needle):
    open_page(page, server, "/ladder", ".ladder-score")
    before = scores(page)
    refused_upload(page, "ladder", tmp_path, content, needle)
    assert scores(page) == before


def test_a_cr_only_file_is_read(page, server, open_page, tmp_path):
    open_page(page, server, "/ladder?variant=fixed_step&step=0.25", ".ladder-score")
    drop(page, "ladder", tmp_path / "cr.csv", ml.example_path("ladder_ties.csv").read_bytes().replace(b"\n", b"\r"))
    expect(page.locator(".ladder-score")).to_have_count(5)
    assert scores(page) == ["0.75", "0.75", "0.25", "0.25", "0.25"]


def test_a_large_upload_is_replayed_off_the_event_loop(page, server, open_page, tmp_path):
    # 600 examples x 500 submissions (300,000 losses, above OFFLOAD_CELLS): parsed and replayed in worker threads
    rng = np.random.default_rng(3)
    losses = (rng.random((600, 500)) < np.linspace(0.5, 0.2, 500)).astype(int)
    f = tmp_path / "big.csv"
    f.write_text(",".join(f"s{i}" for i in range(500)) + "\n"
                 + "\n".join(",".join(map(str, row)) for row in losses) + "\n", encoding="utf-8")
    open_page(page, server, "/ladder", ".ladder-score")
    page.locator(".ladder-upload input[type=file]").first.set_input_files(str(f))
    expected = ml.ladder(losses.astype(float))
    releases = page.locator(".ladder-releases").first
    expect(releases).to_have_text(f"{expected.releases:,}", timeout=60_000)
    expect(page.locator(".ladder-score")).to_have_count(ml_table_rows(500))


def ml_table_rows(k: int) -> int:
    from meter_dashboard.leaderboard.view import TABLE_ROWS

    return min(k, TABLE_ROWS)


@VIEWPORTS
def test_no_console_warnings_and_no_sideways_scroll(browser, server, open_page, viewport, query):
    # issue 11 #11-#13: readable on a phone and in the dark theme; no "could not set initial ranges" warnings
    width, messages = shown_at(browser, server, open_page, viewport, query, "ladder", ".ladder-score",
                               lambda pg: (reveal(pg, ".attack-naive"),
                                          expect(pg.locator(".attack-naive").first).to_be_visible(timeout=60_000)))
    assert width[0] <= width[1], f"the page scrolls sideways: {width}"
    assert [m for m in messages if m[0] in ("warning", "error")] == []


def test_the_replayed_board_feeds_the_sizing(page, server, open_page, relevant_errors):
    """Issue 24: the replay's submissions and test-set size feed the sizing (Lemma 4, never hard-coded)."""
    from meter_dashboard.bounds import ladder as lb

    open_page(page, server, "/ladder", ".ladder-score")
    reveal(page, ".ladder-board-labels")
    board = ml.ladder(ml.load_example())                      # 15 submissions on 2,000 examples
    eta, eps, _ = lb.best_step(0.1, 15, 0.05)                  # the sizing's eps + eta = 0.1, the board's k and delta
    needed = lb.exact_labels(eps, eta, 15, 0.05)
    assert (board.submissions, board.examples) == (15, 2000)
    card = page.locator(".ladder-board-labels").first
    expect(card).to_have_text(f"{needed:,}")
    sentence = page.locator(".ladder-board-sentence").first
    error = lb.leaderboard_error(2000, 15, 0.05)[0]
    expect(sentence).to_contain_text(f"15 submissions on 2,000 test labels, so its error is at most ±{error:.4f}")
    expect(sentence).to_contain_text(f"For ±0.1 you need {needed:,} labels")
    expect(sentence).to_contain_text(f"{needed - 2000:,} more than it has")
    box = page.locator(".size-epsilon input").first               # a new target: the card follows
    box.fill("0.15")
    box.press("Enter")
    eta, eps, _ = lb.best_step(0.2, 15, 0.05)
    expect(card).to_have_text(f"{lb.exact_labels(eps, eta, 15, 0.05):,}", timeout=20_000)
    page.locator(".ladder-use-board button").first.click()      # the board's k into the sizing
    expect(page.locator(".size-submissions input").first).to_have_value("15", timeout=20_000)
    expect(page.locator(".ladder-labels").first).to_have_text(f"{lb.exact_labels(0.15, 0.05, 15, 0.05):,}")
    assert relevant_errors(page.console_errors) == []


def test_the_sections_below_the_fold_are_built_when_scrolled_to(browser, server, open_page, relevant_errors):
    """Issue 29: at 1440×900 the label bound and the attack are below the fold: built when a person scrolls to them."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = context.new_page()
    errors: list = []
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        open_page(pg, server, "/ladder", ".ladder-score")
        pg.wait_for_timeout(1500)
        assert pg.locator(".ladder-size").count() == 0 and pg.locator(".ladder-attack").count() == 0
        height = pg.evaluate("document.documentElement.scrollHeight")
        reveal(pg, ".ladder-labels")
        expect(pg.locator(".ladder-labels").first).to_have_text(f"{ml.ladder_size(0.05, 0.05, 100, 0.05).labels:,}")
        expect(pg.locator(".ladder-size .bk-Canvas")).to_have_count(1)   # the figure, drawn
        reveal(pg, ".attack-naive")
        default = ml.boosting_attack(4000, 400, seed=0, trials=5)
        expect(pg.locator(".attack-naive").first).to_have_text(fmt(default.at()["naive_public"]), timeout=60_000)
        expect(pg.locator(".ladder-attack .bk-Canvas")).to_have_count(1)
        assert abs(pg.evaluate("document.documentElement.scrollHeight") - height) <= 8  # the boxes held their places
        assert relevant_errors(errors) == []
    finally:
        context.close()
