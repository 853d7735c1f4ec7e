"""The /approve page in a real browser (Playwright + Debian chromium)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

import meter_dashboard.approvals.model as ap
from meter_dashboard.core import formatting as fmt

pytestmark = pytest.mark.ui

MAIN = "td.approve-decision:not(.approve-compare)"


def text(page, selector: str) -> str:
    return page.locator(selector).first.inner_text().strip()


def decisions(page) -> list[bool]:
    cells = page.locator(MAIN)
    return [cells.nth(i).get_attribute("data-approved") == "true" for i in range(cells.count())]


def test_decisions_method_switch_and_levels(page, server, open_page, relevant_errors):
    open_page(page, server, "/approve", MAIN)
    model = ap.ApproveModel()  # the page's defaults: refits example, fsSRGP, alpha 0.1, margin step 0.01
    expected = model.result
    expect(page.locator(MAIN)).to_have_count(15, timeout=30_000)
    assert decisions(page) == expected.approved.tolist()
    assert text(page, ".approve-count") == f"{expected.approvals} of 15"
    assert text(page, ".approve-first-level") == "0.08"  # 0.8 x alpha: the first edge from the start
    assert text(page, ".approve-fwer") == "≤ 0.1"

    # switch to Bonferroni over the tree: every test at 0.1 / (2**15 - 1) = 3.05e-6
    page.locator(".approve-method select").first.select_option(label="Bonferroni")
    bonf = ap.approve(model.trace, "bonferroni", margin_step=0.01)
    expect(page.locator(".approve-count").first).to_have_text(f"{bonf.approvals} of 15", timeout=30_000)
    assert decisions(page) == bonf.approved.tolist()
    # one precision rule for every page (issue 11 #13: views/formatting.py): 3.05e-06 is now written 3.052×10⁻⁶
    assert text(page, ".approve-first-level") == fmt.number(0.1 / (2 ** 15 - 1)) == "3.052×10⁻⁶"

    # alpha typed in: bonfSRGP's first level is 0.8 x 0.05
    page.locator(".approve-method select").first.select_option(label="bonfSRGP")
    box = page.locator(".approve-alpha input").first
    box.fill("0.05")
    box.press("Enter")
    expect(page.locator(".approve-first-level").first).to_have_text("0.04", timeout=30_000)
    page.wait_for_function("() => window.location.search.includes('alpha=0.05')")
    srgp = ap.approve(model.trace, "bonf-srgp", alpha=0.05, margin_step=0.01)
    assert decisions(page) == srgp.approved.tolist()
    assert relevant_errors(page.console_errors) == []


def test_overfitting_example_side_by_side(page, server, open_page, relevant_errors):
    open_page(page, server, "/approve?example=adversary&method=naive", MAIN)
    naive = ap.approve(ap.load_example("adversary")[0], "naive")
    expect(page.locator(".approve-count").first).to_have_text(f"{naive.approvals} of 50", timeout=60_000)
    assert naive.approvals >= 2
    assert text(page, ".approve-fwer") == "not controlled"
    page.get_by_text("Compare procedures", exact=True).first.click()
    for method in ap.METHODS:
        cells = page.locator(f"td.approve-compare[data-method='{method}']")
        expect(cells).to_have_count(50, timeout=120_000)  # pres-srgp streams in last; slow under load
        approved = page.locator(f"td.approve-compare[data-method='{method}'][data-approved='true']").count()
        if method == "naive":
            assert approved == naive.approvals
        else:  # every procedure that controls the FWER refuses the overfit modifications
            assert approved == 0, method
    assert relevant_errors(page.console_errors) == []


def test_upload_a_trace_then_a_malformed_one(page, server, open_page, relevant_errors, tmp_path):
    open_page(page, server, "/approve", MAIN)
    good = tmp_path / "mine.csv"
    good.write_text("orig,m1,m2,m3\n1.0,0.5,1.1,0.5\n1.0,0.4,0.9,0.4\n1.0,0.6,1.1,0.6\n1.0,0.5,0.9,0.5\n")
    page.locator(".approve-upload input[type=file]").first.set_input_files(str(good))
    expect(page.locator(MAIN)).to_have_count(3, timeout=30_000)
    # fsSRGP on the hand-checked trace (see tests/cli/test_approve.py): m1 and m3 approved, margin step 0.01
    assert decisions(page) == [True, False, True]
    expect(page.locator(".approve-example select").first).to_have_value("uploaded")  # an option's value: the model's

    bad = tmp_path / "bad.csv"
    bad.write_text("orig,m1\n1,0.5\n1,oops\n")
    page.locator(".approve-upload input[type=file]").first.set_input_files(str(bad))
    expect(page.locator(".md-error").first).to_have_text(
        "line 3, column 2: loss (m1) must be a finite number; got 'oops'", timeout=30_000)
    assert decisions(page) == [True, False, True]  # the last good trace stays
    assert relevant_errors(page.console_errors) == []


def test_simulation_runs_with_progress_and_can_be_cancelled(page, server, open_page, relevant_errors):
    open_page(page, server, "/approve", MAIN)
    page.get_by_text("Simulations", exact=True).first.click()
    for selector, value in ((".approve-fwer-replicates input", "2"), (".approve-fwer-steps input", "6")):
        box = page.locator(selector).first
        box.fill(value)
        box.press("Enter")
    page.locator(".approve-fwer-run button").first.click()
    cells = page.locator("td.approve-sim-fwer")
    expect(cells).to_have_count(6, timeout=120_000)
    expect(page.locator(".approve-fwer-status").first).to_contain_text("done: 2 replicates")
    expected = ap.ApprovalSimulation(kind="fwer", replicates=2, steps=6).run()
    for i, method in enumerate(ap.METHODS):
        assert cells.nth(i).get_attribute("data-method") == method
        assert float(cells.nth(i).inner_text()) == pytest.approx(expected.fwer[method])

    box = page.locator(".approve-power-replicates input").first
    box.fill("500")
    box.press("Enter")
    page.locator(".approve-power-run button").first.click()
    expect(page.locator(".approve-power-cancel button").first).to_be_enabled(timeout=30_000)
    page.locator(".approve-power-cancel button").first.click()
    expect(page.locator(".approve-power-status").first).to_contain_text("cancelled after", timeout=60_000)
    expect(page.locator(".approve-power-run button").first).to_be_enabled()
    assert relevant_errors(page.console_errors) == []


def test_refused_alpha_gets_a_message_and_keeps_the_last_result(page, server, open_page, relevant_errors):
    # issue 11 #4: alpha = 2 used to be silently ignored
    open_page(page, server, "/approve?method=bonf-srgp", MAIN)
    expect(page.locator(".approve-first-level").first).to_have_text("0.08", timeout=30_000)
    before = decisions(page)
    box = page.locator(".approve-alpha input").first
    box.fill("2")
    box.press("Enter")
    message = page.locator(".md-input-message .md-error").first
    expect(message).to_have_text("α (family-wise error rate) must be in (0, 1); got '2'", timeout=20_000)
    assert text(page, ".approve-first-level") == "0.08" and decisions(page) == before
    expect(page.locator(".md-stale").first).to_contain_text("Showing the last valid decisions")
    box.fill("0.05")
    box.press("Enter")
    expect(page.locator(".approve-first-level").first).to_have_text("0.04", timeout=30_000)
    expect(page.locator(".md-input-message .md-error")).to_have_count(0)
    expect(page.locator(".md-stale")).to_have_count(0)
    assert relevant_errors(page.console_errors) == []


def test_a_bad_link_value_is_named_and_the_page_stays_alive(page, server, open_page, relevant_errors):
    open_page(page, server, "/approve?alpha=2&method=holm&margin_step=0.02", MAIN)
    expect(page.locator(".approve-error .md-error").first).to_contain_text("Link: method must be one of",
                                                                            timeout=30_000)
    expect(page.locator(".approve-error")).to_contain_text("Link: alpha must be in (0, 1); got '2'")
    expect(page.locator(".approve-count").first).to_have_text(
        f"{ap.ApproveModel(margin_step=0.02).result.approvals} of 15", timeout=30_000)
    assert relevant_errors(page.console_errors) == []


def test_no_empty_plot_frames_no_range_warnings_and_a_time_estimate(page, server, open_page):
    warnings = []
    page.on("console", lambda msg: warnings.append(msg.text) if "initial ranges" in msg.text else None)
    open_page(page, server, "/approve", MAIN)
    page.get_by_text("Simulations", exact=True).first.click()
    expect(page.locator(".approve-fwer-run button").first).to_be_visible(timeout=20_000)
    expect(page.locator(".approve-fwer-plots")).to_have_count(1)
    expect(page.locator(".approve-fwer-plots").first).to_be_hidden()  # no empty plot frames before a run
    expect(page.locator(".approve-fwer-table").first).to_contain_text("Not run yet")
    box = page.locator(".approve-fwer-replicates input").first
    box.fill("8")
    box.press("Enter")
    page.locator(".approve-fwer-run button").first.click()
    # the time estimate while running is tests/views/test_approve_view.py's (a fast machine may finish first)
    expect(page.locator(".approve-fwer-status").first).to_contain_text("done: 8 replicates", timeout=180_000)
    expect(page.locator(".approve-fwer-plots").first).to_be_visible(timeout=20_000)
    page.get_by_text("Compare procedures", exact=True).first.click()
    expect(page.locator("td.approve-compare[data-method='pres-srgp']")).to_have_count(15, timeout=60_000)
    page.wait_for_timeout(500)
    assert warnings == []


def test_a_file_too_big_is_refused_before_it_is_sent(page, server, open_page, relevant_errors, tmp_path):
    # issue 15: a file over ~15 MiB closed the websocket (Bokeh's message cap) and the session died silently
    open_page(page, server, "/approve?method=bonf-srgp", MAIN)
    expect(page.locator(MAIN)).to_have_count(15, timeout=30_000)
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(len(payload))))
    big = tmp_path / "big.csv"
    big.write_bytes(b"orig,m1\n" + b"1.000000,0.500000\n" * 1_100_000)  # 19.9 MB
    page.locator(".approve-upload input[type=file]").first.set_input_files(str(big))
    expect(page.locator(".approve-upload").first).to_contain_text("File is too large", timeout=20_000)
    page.wait_for_timeout(1000)
    assert sum(sent) < 100_000  # nothing of the file went over the websocket
    box = page.locator(".approve-alpha input").first  # the session is alive: a change still answers
    box.fill("0.05")
    box.press("Enter")
    expect(page.locator(".approve-first-level").first).to_have_text("0.04", timeout=30_000)
    assert relevant_errors(page.console_errors) == []


def test_the_plot_and_the_advanced_settings_arrive_when_needed(page, server, open_page, relevant_errors):
    """Issue 19: the first document carries what the first view shows; the plot follows; the advanced
    settings are a closed drawer of the procedure's form (issue 29), shown when "Advanced" is clicked."""
    open_page(page, server, "/approve", MAIN)
    page.locator(".approve-decision-plot-place").first.scroll_into_view_if_needed()  # built when scrolled to
    expect(page.locator(".approve-decision-plot").first).to_be_visible(timeout=30_000)
    tests = page.evaluate("""() => { for (const m of Bokeh.documents[0].all_models) {
        if (m.data != null && m.data.level !== undefined && m.data.decision !== undefined)
            return Array.from(m.data.test); } return null; }""")
    assert tests == list(range(1, 16))
    expect(page.locator(".approve-seed input").first).to_be_hidden()
    page.locator("summary", has_text="Advanced").first.click()
    expect(page.locator(".approve-seed input").first).to_be_visible(timeout=20_000)
    expect(page.locator(".approve-seed input").first).to_have_value("0")
    seed = page.locator(".approve-seed input").first
    seed.fill("3")
    seed.press("Enter")  # the box is wired to the model: the link follows
    page.wait_for_function("() => window.location.search.includes('seed=3')", timeout=20_000)
    assert relevant_errors(page.console_errors) == []


def test_a_link_sets_the_procedure_and_follows_it(page, server, open_page, relevant_errors):
    """Issue 21: /approve reads and writes its URL through ui/urlstate (bounded; other keys kept)."""
    open_page(page, server, "/approve?method=bonferroni&alpha=0.05&keep=me", MAIN)
    bonf = ap.approve(ap.load_example("refits")[0], "bonferroni", alpha=0.05, margin_step=0.01)
    expect(page.locator(".approve-count").first).to_have_text(f"{bonf.approvals} of 15", timeout=30_000)
    assert text(page, ".approve-first-level") == fmt.number(0.05 / (2 ** 15 - 1))
    page.locator(".approve-method select").first.select_option(label="bonfSRGP")
    page.wait_for_function("() => window.location.search.includes('method=bonf-srgp')", timeout=20_000)
    assert "keep=me" in page.evaluate("() => window.location.search")  # a key the page does not own stays
    assert relevant_errors(page.console_errors) == []


FIGURE_POINTS = """() => { for (const m of Bokeh.documents[0].all_models) {
    if (m.data != null && m.data.level !== undefined && m.data.decision !== undefined)
        return Array.from(m.data.test).length; } return null; }"""


def test_the_decision_plot_below_the_fold_is_built_when_scrolled_to(page, server, open_page, relevant_errors):
    """Issue 29: at 1440x900 the 50 decisions push the plot far below the fold: it is not built on load (no figure
    in the document, its place a box of its height); scrolled to, it arrives with its 50 points where the box was."""
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, server, "/approve?example=adversary", MAIN)
    expect(page.locator(MAIN)).to_have_count(50, timeout=60_000)
    page.wait_for_timeout(1500)  # anything the page would build on its own has arrived
    assert page.locator(".approve-decision-plot").count() == 0 and page.evaluate(FIGURE_POINTS) is None
    box_top = page.locator(MAIN).first.bounding_box()["y"]
    place = page.locator(".approve-decision-plot-place").first
    box = place.bounding_box()
    assert box["y"] > 900 + 240  # below the fold and beyond the look-ahead (ui.lazy.AHEAD_PX)
    height = page.evaluate("document.documentElement.scrollHeight")
    place.scroll_into_view_if_needed()
    expect(page.locator(".approve-decision-plot").first).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => ({FIGURE_POINTS})() === 50", timeout=30_000)
    shown = page.locator(".approve-decision-plot").first.bounding_box()
    top = page.locator(MAIN).first.bounding_box()["y"]  # the page scrolled: positions relative to the table
    assert abs((shown["y"] - top) - (box["y"] - box_top)) < 1 and abs(shown["height"] - box["height"]) < 1
    assert page.evaluate("document.documentElement.scrollHeight") == height  # nothing below it moved either
    assert relevant_errors(page.console_errors) == []


def test_the_first_response_says_what_it_computes_and_for_how_long(page, server_not_waiting, relevant_errors):
    """Issue 29: a plain HTTP client reads what /approve computes for the link and at most how long it takes
    (approvals.text.Pace: never less than the calibrated bound; more once this server measured slower), when the
    decisions are not known in time (a server that does not wait for them; tests/ui/test_approve_first_answer.py)."""
    server = server_not_waiting
    import html
    import re
    import urllib.request

    from meter_dashboard.approvals.text import Pace

    with urllib.request.urlopen(server + "/approve?example=adversary&method=pres-srgp", timeout=60) as response:
        body = html.unescape(response.read().decode("utf-8"))
    said = re.search(r"computing the approvals of the 50 modifications on the link's trace with presSRGP "
                     r"\((under 1 s|up to (\d+) s) of computing on this server\) and building the page…", body)
    assert said is not None, body[-3000:]
    assert int(said.group(2) or 1) >= Pace().seconds(50, "pres-srgp")  # the bound, rounded up
    page.goto(server + "/approve?example=adversary&method=pres-srgp", wait_until="commit")
    expect(page.locator(".md-boot").first).to_contain_text(said.group(0), timeout=30_000)  # on screen at once
    expect(page.locator(".approve-lead").first).to_contain_text("We can ship", timeout=120_000)
    assert relevant_errors(page.console_errors) == []
