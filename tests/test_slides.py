"""Issue 30: every page's answer in plain words, its slide (PNG and SVG), its CSV and its offline report.

The words are checked against the numbers of the result objects they come from (never typed in the
test by hand, except the README's worked plan: 38,005 labels, Hubis et al. 2019); the slides are read
back: the SVG's text elements, the PNG's text chunks and pixels.
"""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import meter_dashboard as md
from meter_dashboard.bounds.ladder import leaderboard_error
from meter_dashboard.cli import main
from meter_dashboard.comparison.model import load_example as compare_example
from meter_dashboard.core import formatting as fmt
from meter_dashboard.core.plain import points, times_in
from meter_dashboard.core.report import csv_with_inputs, result_report
from meter_dashboard.core.slide import Chart, Series, Slide
from meter_dashboard.leaderboard import text as ladder_text
from meter_dashboard.leaderboard.model import load_example as ladder_example

SVG = "{http://www.w3.org/2000/svg}"


def _results() -> dict:
    """One result per page, from the shipped examples."""
    trace = md.read_trace(_emocontext())
    return {
        "planner": md.plan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10),
        "session": md.replay(trace, epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=20, test_size=60_000),
        "ci": md.ci_labels(),
        "ladder": md.ladder(ladder_example()),
        "compare": md.compare(compare_example().a, compare_example().b),
        "approve": md.approve(md.read_modification_trace(_approve_example())),
    }


def _emocontext():
    from importlib.resources import files

    return files("meter_dashboard") / "data" / "emocontext_trace.csv"


def _approve_example():
    from importlib.resources import files

    return files("meter_dashboard") / "data" / "approve_refits.csv"


@pytest.fixture(scope="module")
def results():
    return _results()


def svg_text(svg: str) -> tuple[str, str, str]:
    """(title, desc, every visible text joined by spaces) of a slide's SVG."""
    root = ET.fromstring(svg)
    visible = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    return root.find(SVG + "title").text, root.find(SVG + "desc").text, visible


# ---------------------------------------------------------------------------- plain words
def test_chances_and_points_in_plain_words():
    assert times_in(0.01) == "99 times in 100"
    assert times_in(0.05) == "95 times in 100"
    assert times_in(1e-4) == "9,999 times in 10,000"
    assert times_in(0.0001234) == "with probability 0.9998766"  # not a whole number of millionths
    assert times_in(1e-300) == "with probability 1 − 10⁻³⁰⁰"  # never "always"
    assert points([0.01, 0.02, 0.05]) == "1–5 points"
    assert points([0.01]) == "1 point" and points([0.02, 0.02]) == "2 points" and points([0.005]) == "0.5 points"


def test_the_planner_lead_is_the_issues_sentence():
    # README's worked plan (Hubis et al. 2019): 38,005 labels for 10 steps, ε 0.01..0.05, δ 0.01
    r = md.plan(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10)
    assert r.lead() == ("With 38,005 labelled examples we can test 10 model versions, each reported accuracy "
                        "within 1–5 points of the truth, 99 times in 100.")
    other = md.plan(epsilon=[0.02], delta=0.05, steps=30)
    assert other.lead() == (f"With {other.labels['incremental']:,} labelled examples we can test 30 model versions, "
                            "each reported accuracy within 2 points of the truth, 95 times in 100.")


def test_every_lead_states_its_results_numbers(results):
    s = results["session"]
    # the versions left are the planner's inverse after the steps used (what 60,000 labels support), not T - used
    left = s.steps_left.left
    assert left == s.steps_left.supported - int(s.steps_used[-1]) and left > 20
    assert s.lead() == (f"With 60,000 labelled examples we can test {left:,} more model versions, each reported "
                        "accuracy within 1–5 points of the truth, 99 times in 100.")
    c = results["ci"]
    assert c.lead().startswith(f"With {c.labels:,} labelled examples we can check {c.steps} new commits against "
                               f"\"{c.condition}\"")
    assert f"{c.optimized:,} labelled examples are enough" in c.lead() and "9,999 times in 10,000" in c.lead()
    lad = results["ladder"]
    total = leaderboard_error(lad.examples, lad.submissions, 0.05)[0]
    words = ladder_text.lead(lad, 0.05)
    assert f"ranked {lad.submissions} submissions on {lad.examples:,} labelled examples" in words
    assert f"a new best score {lad.releases} times" in words
    assert f"within {points([total])} of the truth, 95 times in 100" in words
    cmp = results["compare"]
    assert cmp.lead().startswith(f"Model A beat model B in {fmt.percent(cmp.p_a_gt_b)} of {cmp.runs} paired runs "
                                 f"(between {fmt.percent(cmp.ci[0])} and {fmt.percent(cmp.ci[1])}, 95 times in 100)")
    a = results["approve"]
    assert a.lead().startswith(f"We can ship {a.approvals} of {len(a.names)} modifications ({a.label})")
    assert times_in(a.alpha) in a.lead()


def test_a_short_test_set_is_never_promised_the_planned_accuracy():
    trace = md.read_trace(_emocontext())
    r = md.replay(trace, epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=20, test_size=10_000)
    supported = r.steps_left.supported
    assert supported < int(r.steps_used[-1])
    assert r.lead().startswith(f"Our 10,000 labelled examples support {supported:,} model version")
    assert "not guaranteed" in r.lead() and "times in" not in r.lead()


# ---------------------------------------------------------------------------- slides
@pytest.mark.parametrize("page", ["planner", "session", "ci", "ladder", "compare", "approve"])
def test_every_pages_slide_holds_its_title_answer_and_inputs(results, page, tmp_path):
    r = results[page]
    path = tmp_path / f"{page}.svg"
    made = r.slide(path)
    title, desc, visible = svg_text(path.read_text(encoding="utf-8"))
    assert title == made.title and desc == r.lead() == made.lead
    assert made.title in visible and r.lead() in visible  # drawn, line by line, in reading order
    for name, value in made.inputs[:3]:
        assert name in visible
    png = tmp_path / f"{page}.png"
    r.slide(png)
    image = Image.open(png)
    assert image.size == (1280, 720)
    assert image.text["Title"] == made.title and image.text["Description"] == r.lead()


def test_the_png_draws_its_title_and_answer():
    """Pixels: the title's and the answer's bands are inked only when they have text."""
    chart = Chart("T", "labels", (Series("incremental", (1, 10), (9000, 38005)),))
    full = Slide("Test-set plan", "With 38,005 labelled examples we can test 10 model versions.", (), chart)
    empty = Slide("", "", (), chart)

    def dark(slide, top, bottom):
        pixels = np.asarray(Image.open(io.BytesIO(slide.to_png())).convert("L"))
        return int((pixels[top:bottom, 40:1240] < 128).sum())

    assert dark(full, 40, 92) > 500 and dark(empty, 40, 92) == 0  # the title
    assert dark(full, 100, 140) > 500 and dark(empty, 100, 140) == 0  # the answer's first line


def test_text_is_escaped_in_the_svg():
    made = Slide("<script>alert(1)</script>", "a & b", (("x", "<b>"),))
    svg = made.to_svg()
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert svg_text(svg)[0] == "<script>alert(1)</script>"


def test_a_slide_refuses_other_formats(tmp_path):
    with pytest.raises(md.InputError, match=r"slide must be a file name ending in \.png or \.svg; got 'x\.pdf'"):
        md.plan(epsilon=[0.01], delta=0.01, steps=10).slide(tmp_path / "x.pdf")


# ---------------------------------------------------------------------------- the command line
@pytest.mark.parametrize("args", [
    ["plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "10"],
    ["replay", "--example", "emocontext"],
    ["ci", "--condition", "n - o > 0.02 +/- 0.01"],
    ["ladder", "--example", "ladder_leaderboard.csv"],
    ["compare", "--example", "compare_paired.csv"],
    ["approve", "--example", "refits"],
], ids=lambda a: a[0])
def test_every_command_writes_the_slide(args, tmp_path, capsys):
    path = tmp_path / "slide.svg"
    assert main([*args, "--slide", str(path)]) == 0
    out = capsys.readouterr().out
    title, desc, visible = svg_text(path.read_text(encoding="utf-8"))
    assert desc in visible and title in visible
    if args[0] != "replay":  # replay prints its own table, unchanged
        assert f"slide: {path}" in out
    if args[0] in ("ci", "ladder", "compare", "approve"):
        assert desc in out  # the plain-words answer, printed too


def test_a_bad_slide_name_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["compare", "--example", "compare_paired.csv", "--slide", "x.pdf"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--slide must be a file name ending in .png or .svg; got 'x.pdf'" in err


def test_the_lead_is_in_the_json_too(capsys):
    assert main(["ci", "--condition", "n - o > 0.02 +/- 0.01", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lead"] == md.ci_labels("n - o > 0.02 +/- 0.01").lead()


# ---------------------------------------------------------------------------- CSV and report
def test_csv_carries_the_inputs_and_reads_back(results):
    r = results["ci"]
    from meter_dashboard.ci.text import inputs

    text = csv_with_inputs(inputs(r), r.to_frame())
    assert text.startswith(f"# Condition: {r.condition}\n")
    back = pd.read_csv(io.StringIO(text), comment="#", index_col=0)
    assert back.loc[r.adaptivity, "labels"] == r.labels


@pytest.mark.parametrize("page", ["ci", "ladder", "compare", "approve"])
def test_the_offline_report_of_every_page(results, page):
    r = results[page]
    html = result_report(r).to_html()
    assert fmt_escape(r.lead()) in html
    assert "data:image/svg+xml;base64," in html and "cdn.bokeh.org" not in html and "<script src" not in html
    headers = list(r.to_frame().columns)
    assert all(f">{h}</th>" in html for h in headers)


def fmt_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_the_planner_and_session_reports_lead_with_plain_words(results):
    import html

    for r, report in ((results["planner"], md.plan_report(results["planner"])),
                      (results["session"], md.session_report(results["session"]))):
        page = report.to_html()
        first = page.index('class="md-sentence"')
        assert page[first:].startswith('class="md-sentence">' + html.escape(r.lead(), quote=True))
