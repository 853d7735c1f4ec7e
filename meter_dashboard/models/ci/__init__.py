"""ease.ml/ci: sample sizes, evaluation and commit-trace replay for CI conditions.

The same objects serve notebooks, the CLI (``meter-dashboard ci``) and the ``/ci`` page.
One module per concern:

- :mod:`.inputs` - :class:`CIInputs`, every input with its default (read by the
  functions, the page and the CLI), and the checks that turn typed values into valid ones.
- :mod:`.plan` - :func:`ci_labels` (the label counts of Sections 3-4, a :class:`CIResult`
  with a :class:`ClausePlan` per clause) and :func:`ci_curves` (counts against H).
- :mod:`.evaluation` - :func:`evaluate` (interval arithmetic, Section 3.5, Appendix A.2)
  and its vectorized form over exact columns.
- :mod:`.trace` - :func:`read_ci_trace`, :func:`example_trace`, :class:`CITrace`.
- :mod:`.replay` - :func:`replay_ci`: a commit history into pass/fail signals and
  new-testset alarms (:class:`CIReplay`).
- :mod:`.model` - :class:`CIModel`, the ``param.Parameterized`` model of the page, and
  the paper's :data:`PRESETS`.

The condition language itself is :mod:`meter_dashboard.models.ci_grammar`; the
mathematics is :mod:`meter_dashboard.bounds.ci`.

References
----------
.. [1] C. Renggli, B. Karlas, B. Ding, F. Liu, K. Schawinski, W. Wu, C. Zhang.
   "Continuous Integration of Machine Learning Models with ease.ml/ci: Towards a
   Rigorous Yet Practical Treatment", SysML 2019.
"""
from ..ci_grammar import ConditionError, parse_condition
from .evaluation import (
    RESULT_FALSE,
    RESULT_TRUE,
    RESULT_UNKNOWN,
    ClauseEvaluation,
    Evaluation,
    ExactColumn,
    evaluate,
    evaluate_columns,
)
from .inputs import ADAPTIVITIES, ALARM_ON, DEFAULT_CONDITION, MODES, CIInputs, delta_from_reliability
from .model import PRESETS, CIModel
from .plan import ADAPTIVITY_TITLES, ASSUMPTIONS, TEXT_ROUNDING_NOTE, CIResult, ClausePlan, ci_curves, ci_labels
from .replay import CIReplay, replay_ci
from .trace import EXAMPLES, CITrace, example_trace, read_ci_trace

__all__ = [
    "ADAPTIVITIES",
    "ALARM_ON",
    "MODES",
    "DEFAULT_CONDITION",
    "EXAMPLES",
    "PRESETS",
    "ADAPTIVITY_TITLES",
    "ASSUMPTIONS",
    "TEXT_ROUNDING_NOTE",
    "RESULT_TRUE",
    "RESULT_FALSE",
    "RESULT_UNKNOWN",
    "CIInputs",
    "ci_labels",
    "ci_curves",
    "CIResult",
    "ClausePlan",
    "evaluate",
    "evaluate_columns",
    "Evaluation",
    "ClauseEvaluation",
    "ExactColumn",
    "read_ci_trace",
    "example_trace",
    "CITrace",
    "replay_ci",
    "CIReplay",
    "CIModel",
    "delta_from_reliability",
    "parse_condition",
    "ConditionError",
]
