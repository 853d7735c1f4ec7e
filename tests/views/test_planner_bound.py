"""The planner component with the exact bound, without a browser (issue 12).

While the exact counts compute (on a served page: in a worker thread, see ``MeterPlan.work_in_background``)
the page shows Hoeffding's counts and "computing…"; the exact ones replace them as they arrive.
Counts: ease.ml/meter Sec. 5.1 (Hoeffding 38,005) and issue 12's exact 27,151 / 9,801.
"""
from __future__ import annotations

import asyncio

import meter_dashboard as md
from meter_dashboard.meter.text import confidence_shown, steps_shown
from meter_dashboard.meter.view_check import shown_interval
from meter_dashboard.meter.view_html import PENDING

NONUNIFORM = [0.01, 0.02, 0.03, 0.04, 0.05]


def test_hoeffding_shows_while_the_exact_counts_compute():
    async def go():
        planner = md.Planner(epsilon=NONUNIFORM, delta=0.01, steps=10, exact_points=2)  # in a loop: background
        planner.plan.bound = "binomial"
        assert PENDING in planner.table.object  # the exact counts are not there yet ...
        assert 'hoeffding-count-incremental">38,005<' in planner.table.object  # ... Hoeffding's are
        assert "38,005" in planner.headlines.object and "computing" in planner.headlines.object
        await planner.plan.settled()
        assert 'label-count-incremental">27,151<' in planner.table.object and PENDING not in planner.table.object
        assert 'bound-saving-incremental">10,854' in planner.table.object

    asyncio.run(go())


def test_range_caveat_beside_the_outputs_that_use_it():
    planner = md.Planner(epsilon=NONUNIFORM, delta=0.01, steps=10, bound="binomial", max_error_rate=0.1,
                         exact_points=2)
    assert 'label-count-incremental">9,801<' in planner.table.object
    assert "error rate ≤ 0.1" in planner.headlines.object and "errs at most 0.1" in planner.headlines.object
    assert 'range-without-incremental">27,151<' in planner.range_check.object
    assert "every model" in planner.range_check.object
    planner.plan.bound = "hoeffding"
    assert planner.range_check.object == "" and "hoeffding-count" not in planner.table.object


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
    panel.job.replicates = 64
    panel.job.configure(panel.plan.result, panel.plan.ranges)
    panel.job.run()
    assert "plan-check-naive" in panel.table.object and "within δ" in panel.table.object
    assert "choose the regular meter to see the naive count fail" in panel.table.object


def test_in_a_jupyter_kernel_the_exact_work_follows_the_cell():
    """A notebook cell returns at once with Hoeffding's counts; the exact ones arrive on the kernel's loop."""
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
    assert "pending True" in out[0]
    assert "exact 27151 True" in out[1]
    for cell in notebook.cells:
        assert not [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"], cell.outputs
