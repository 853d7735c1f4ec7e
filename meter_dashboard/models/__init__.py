"""The models layer: what a person chose, validated, and everything derived from it.

One module per family, each holding its ``param.Parameterized`` model, its result
objects and its file readers (no widgets, no Panel): :mod:`.plan` (the meter planner),
:mod:`.trace` and :mod:`.session` (development traces and their replay), :mod:`.ci`
and :mod:`.ci_grammar` (ease.ml/ci), :mod:`.ladder`, :mod:`.compare` (P(A>B)) and
:mod:`.approve` (SRGP approvals).  Notebooks, the CLI, the pages and the tests all
drive these same objects; the mathematics lives one layer down in
:mod:`meter_dashboard.bounds`.
"""
