"""The meter planner (ease.ml/meter): how many labels T development steps need, and what a budget buys.

Roles: :mod:`.model` (``plan()`` and the ``MeterPlan`` model), :mod:`.result` (``PlanResult``),
:mod:`.stages` (the plan computed in stages: Hoeffding at once, exact work later), :mod:`.check`
(the Monte Carlo check of a plan), :mod:`.defaults`, :mod:`.text` (sentences), :mod:`.figures`
(Bokeh), :mod:`.report` (the HTML report), :mod:`.view`, :mod:`.view_html`, :mod:`.view_check`
(the page), :mod:`.cli` and :mod:`.cli_simulate` (the ``plan`` and ``simulate`` verbs)."""
