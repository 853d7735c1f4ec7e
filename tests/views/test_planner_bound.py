"""The planner component with the exact bound, without a browser (issue 12).

While the exact counts compute (on a served page: in a worker thread, see ``MeterPlan.work_in_background``)
the page shows Hoeffding's counts and "computing…"; the exact ones replace them as they arrive.
Counts: ease.ml/meter Sec. 5.1 (Hoeffding 38,005) and issue 12's exact 27,151 / 9,801.
"""
from __future__ import annotations

import asyncio
import time
from html import unescape

import meter_dashboard as md
from meter_dashboard.meter import model, stages
from meter_dashboard.meter.view import HOLD_SECONDS
from meter_dashboard.meter.text import confidence_shown, steps_shown
from meter_dashboard.meter.view_check import shown_interval

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]
PENDING = '<span class="md-pending">computing…</span>'  # a value still computing, as the page shows it


def test_exact_counts_come_in_the_first_update_when_quick():
    """Issue 18: the exact counts take milliseconds, so the page's first update after a change already has them."""
    async def go():
        planner = md.Planner(epsilon=NONUNIFORM, delta=0.01, steps=10, exact_points=2)  # in a loop: background
        before = planner.table.object
        planner.plan.bound = "binomial"
        # the exact counts at once (engine loaded, modest counts) or, while they come, the last answer as it was
        assert planner.table.object == before or 'label-count-incremental">27,151<' in planner.table.object
        assert PENDING not in planner.table.object  # nothing half-done is shown meanwhile
        await asyncio.sleep(HOLD_SECONDS / 2)
        await planner.plan.settled()
        assert 'label-count-incremental">27,151<' in planner.table.object and PENDING not in planner.table.object
        assert 'hoeffding-count-incremental">38,005<' in planner.table.object
        assert 'bound-saving-incremental">10,854' in planner.table.object

    asyncio.run(go())


def test_hoeffding_shows_while_slow_exact_counts_compute(monkeypatch):
    """When the exact counts take longer than the hold, Hoeffding's show with "computing…" until they come."""
    real = stages.chosen_counts

    def slow(inputs):
        time.sleep(4 * HOLD_SECONDS)
        return real(inputs)

    monkeypatch.setattr(stages, "chosen_counts", slow)
    monkeypatch.setattr(model, "QUICK_LABELS", 0)  # counts this large are found off the loop

    async def go():
        planner = md.Planner(epsilon=NONUNIFORM, delta=0.01, steps=10, exact_points=2)
        planner.plan.bound = "binomial"
        await asyncio.sleep(2 * HOLD_SECONDS)
        assert PENDING in planner.table.object  # the exact counts are not there yet ...
        assert 'hoeffding-count-incremental">38,005<' in planner.table.object  # ... Hoeffding's are
        assert "38,005" in planner.headlines.object and "computing" in planner.headlines.object
        await planner.plan.settled()
        assert 'label-count-incremental">27,151<' in planner.table.object and PENDING not in planner.table.object

    asyncio.run(go())


def test_range_caveat_beside_the_outputs_that_use_it():
    planner = md.Planner(epsilon=NONUNIFORM, delta=0.01, steps=10, bound="binomial", max_error_rate=0.1,
                         exact_points=2)
    assert 'label-count-incremental">9,801<' in planner.table.object
    assert "error rate ≤ 0.1" in planner.headlines.object and "errs at most 0.1" in planner.headlines.object
    assert 'range-without-incremental">27,151<' in planner.table.object  # beside the counts, in the same pane
    assert "every model" in planner.table.object
    planner.plan.bound = "hoeffding"
    assert "planner-range" not in planner.table.object and "hoeffding-count" not in planner.table.object


def test_report_of_the_page_has_both_counts(tmp_path):
    planner = md.Planner(epsilon=NONUNIFORM, delta=0.01, steps=10, bound="binomial", exact_points=2)
    html = planner.report().to_html()
    assert "27,151" in html and "38,005" in html and "exact binomial" in html


def test_shown_numbers():
    assert steps_shown(79_884_252_832) == "7.98×10¹⁰" and steps_shown(16) == "16"
    assert confidence_shown(1 - 0.88015234) == "0.88" and confidence_shown(2.0) == "none"
    assert confidence_shown(0.01) == "0.99"
    assert shown_interval((2e-19, 0.0076)) == (0.0, 0.0076)


def test_check_panel_points_to_the_regular_meter_when_the_naive_count_passes():
    from meter_dashboard.meter.model import MeterPlan
    from meter_dashboard.meter.view_check import PlanCheckPanel

    panel = PlanCheckPanel(MeterPlan(epsilon=[0.02, 0.04, 0.06], delta=0.1, steps=10, exact_points=2))
    panel.job.param.update(replicates=64, meter="incremental")
    panel.job.configure(panel.plan.result, panel.plan.ranges)
    panel.job.run()
    assert "plan-check-naive" in panel.table.object and "within δ" in panel.table.object
    assert "Here the naive count (3,745 labels) also stayed within δ" in panel.table.object
    assert "choose the regular meter to see the naive count fail" in panel.table.object


def test_the_default_check_makes_the_point_and_leads_with_it():
    """Issue 24: the default run shows the naive count failing above δ and the planned one holding, said first."""
    from meter_dashboard.meter.model import MeterPlan
    from meter_dashboard.meter.view_check import PlanCheckPanel

    panel = PlanCheckPanel(MeterPlan(epsilon=[0.02, 0.04, 0.06], delta=0.1, steps=10))
    assert panel.job.meter == "regular" and panel.job.replicates == 500  # the page's defaults
    panel.job.configure(panel.plan.result, panel.plan.ranges)
    panel.job.run()
    naive, planned = (next(r for r in panel.job.rows if r.key == k) for k in ("naive", "hoeffding"))
    assert naive.verdict == "above δ" and planned.verdict == "within δ"
    html = unescape(panel.table.object)
    lead = f"The naive count ({naive.labels:,} labels) failed in {100 * naive.result.failure_rate:.3g}% of the runs"
    assert html.startswith('<p class="md-sentence plan-check-lead">' + lead)
    assert f"the regular meter's planned count ({planned.labels:,} labels) held at or below δ" in html


def test_in_a_jupyter_kernel_the_exact_work_follows_the_cell():
    """A notebook cell returns at once (with Hoeffding's counts if the exact ones are not ready yet);
    the exact ones arrive on the kernel's loop and the shown table follows."""
    import pytest

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "import asyncio, time\nimport meter_dashboard as md\nstarted = time.perf_counter()\n"
        "p = md.Planner(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.01, steps=10, bound='binomial')\n"
        "print('pending', p.plan.result.is_pending('labels', 'incremental'))\np",
        "for _ in range(1200):\n    if p.plan.result.complete:\n        break\n    await asyncio.sleep(0.1)\n"
        "print('exact', p.plan.result.labels['incremental'], 'label-count-incremental\">27,151<' in p.table.object)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False).execute()
    out = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
           for cell in notebook.cells]
    assert out[0] in ("pending True\n", "pending False\n")  # returns with or without the exact counts yet
    assert "exact 27151 True" in out[1]
    for cell in notebook.cells:
        assert not [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"], cell.outputs
