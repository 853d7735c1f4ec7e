"""Every result type shows itself in a notebook as the CLI's table (issue 25): same columns and cells,
the inputs as the caption, the recommended variant (or the decision reached) marked with ★."""
from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from html.parser import HTMLParser
from importlib import resources

import pytest

import meter_dashboard as md
from meter_dashboard.cli import main

DATA = resources.files("meter_dashboard.data")


class _Table(HTMLParser):
    """caption, headers, rows (cell texts) and which rows are marked."""

    def __init__(self, text: str):
        super().__init__()
        self.caption, self.headers, self.rows, self.marked = "", [], [], []
        self._where, self._cell = None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "caption":
            self._where = "caption"
        elif tag == "tr":
            self._row = []
            if "md-marked" in (attrs.get("class") or ""):
                self.marked.append(len(self.rows))
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "span" and "md-mark" in (attrs.get("class") or ""):
            self._where = "mark"

    def handle_endtag(self, tag):
        if tag == "caption":
            self._where = None
        elif tag == "span" and self._where == "mark":
            self._where = None
        elif tag in ("td", "th"):
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr":
            (self.headers if not self.headers else self.rows).append(self._row) if self._row else None

    def handle_data(self, data):
        if self._where == "caption":
            self.caption += data
        elif self._cell is not None and self._where != "mark":
            self._cell += data


def _cli_rows(argv) -> tuple[list, list]:
    """The header and rows of the first table the CLI prints (cells split on runs of 2+ spaces)."""
    out = io.StringIO()
    with redirect_stdout(out):
        main(argv)
    lines = out.getvalue().splitlines()
    rule = next(i for i, line in enumerate(lines) if re.fullmatch(r"[- ]+", line) and "--" in line)
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip():
            break
        rows.append([c for c in re.split(r"\s{2,}", line.strip()) if c])
    return [c for c in re.split(r"\s{2,}", lines[rule - 1].strip()) if c], rows


def _same_table(result, argv):
    table = _Table(result._repr_html_())
    headers, rows = _cli_rows(argv)
    assert [h for h in table.headers[0] if h] == headers
    assert [[c for c in row if c] for row in table.rows] == [[c.rstrip(" *") for c in row] for row in rows]
    return table


def test_plan_shows_the_cli_table_with_inputs_and_the_recommendation():
    table = _same_table(md.plan([0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10),
                        ["plan", "--epsilon", "0.01,0.02,0.03,0.04,0.05", "--delta", "0.01", "--steps", "10"])
    assert "epsilon = [0.01, 0.02, 0.03, 0.04, 0.05]" in table.caption and "steps = 10" in table.caption
    assert [table.rows[i][0] for i in table.marked] == ["incremental"]  # the recommended variant
    assert table.rows[table.marked[0]][1] == "38,005"  # ease.ml/meter Sec. 5.1, Cor 2


def test_plan_under_the_binomial_bound_with_a_budget_and_a_cost():
    result = md.plan([0.02, 0.04, 0.06], delta=0.1, steps=10, bound="binomial", budget=20_000, cost_per_hour=30)
    table = _same_table(result, ["plan", "--epsilon", "0.02,0.04,0.06", "--delta", "0.1", "--steps", "10",
                                 "--bound", "binomial", "--budget", "20000", "--cost-per-hour", "30"])
    assert "budget = 20,000 labels" in table.caption and "bound =" in table.caption
    assert "cost" in table.headers[0] and len(table.marked) == 1


def test_ci_marks_the_adaptivity_asked_for():
    result = md.ci_labels("n - o > 0.1 +/- 0.1", reliability=0.99, adaptivity="full", steps=32)
    table = _same_table(result, ["ci", "--condition", "n - o > 0.1 +/- 0.1", "--reliability", "0.99",
                                 "--adaptivity", "full", "--steps", "32"])
    assert [table.rows[i][:2] for i in table.marked] == [["full", "5,496"]]  # README's example (Renggli Fig. 2)
    assert "reliability 0.99" in table.caption


def test_ci_replay_marks_new_test_set_alarms():
    result = md.replay_ci("n - o > 0.02 +/- 0.01", DATA / "ci_commits.csv", adaptivity="firstChange")
    table = _Table(result._repr_html_())
    assert len(table.rows) == 40 and table.marked
    assert all("ALARM" in table.rows[i][-1] for i in table.marked)
    assert "40 commits" in table.caption


def test_ladder_marks_released_scores():
    table = _same_table(md.ladder(DATA / "ladder_ties.csv", 0.25),
                        ["ladder", str(DATA / "ladder_ties.csv"), "--step", "0.25"])
    assert [table.rows[i][0] for i in table.marked] == ["first", "two_fixes"]
    assert "fixed-step Ladder, step 0.25" in table.caption


def test_approve_marks_the_approved_modifications():
    trace = md.read_modification_trace(DATA / "approve_refits.csv")
    table = _same_table(md.approve(trace, method="bonf-srgp"),
                        ["approve", str(DATA / "approve_refits.csv"), "--method", "bonf-srgp"])
    assert table.marked and all(table.rows[i][-1] == "APPROVED" for i in table.marked)
    assert "alpha = 0.1" in table.caption


def test_replay_shows_its_steps_settings_and_labels():
    result = md.replay(md.read_trace(DATA / "emocontext_trace.csv"), delta=0.1, steps=8)
    table = _Table(result._repr_html_())
    assert len(table.rows) == 8 and table.headers[0][:3] == ["step", "val_accuracy", "test_accuracy"]
    assert "δ = 0.1" in table.caption and "T = 8" in table.caption
    assert "incremental 25,376" in result._repr_html_()  # ease.ml/meter Fig. 3 settings (README)


@pytest.mark.parametrize("make,marked_text,caption_text", [
    (lambda: md.compare(DATA / "compare_paired.csv"), "significant_and_meaningful", "gamma = 0.75"),
    (lambda: md.compare_size(), "29", "P(A>B) > 0.75"),  # Noether's 29 runs (Bouthillier et al., Fig. C.1)
    (lambda: md.ladder_size(epsilon=0.05, step=0.05, submissions=100, delta=0.05), "40,343", "100 submissions"),
])
def test_single_answers_mark_the_answer(make, marked_text, caption_text):
    table = _Table(make()._repr_html_())
    assert len(table.marked) == 1 and marked_text in table.rows[table.marked[0]]
    assert caption_text in table.caption


def test_a_check_row_shows_the_simulate_table():
    rows = md.plan([0.02, 0.04, 0.06], delta=0.1, steps=10).check(meter="regular", replicates=64)
    for row in rows:
        table = _Table(row._repr_html_())
        assert table.headers[0][:3] == ["count", "labels", "runs"] and table.rows[0][2] == "64"
        assert (table.marked == [0]) == (row.verdict == "above δ")
