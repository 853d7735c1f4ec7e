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

The condition language itself is :mod:`meter_dashboard.ci.grammar`; the
mathematics is :mod:`meter_dashboard.bounds.ci`.

References
----------
.. [1] C. Renggli, B. Karlas, B. Ding, F. Liu, K. Schawinski, W. Wu, C. Zhang.
   "Continuous Integration of Machine Learning Models with ease.ml/ci: Towards a
   Rigorous Yet Practical Treatment", SysML 2019.
"""
import importlib

# public name -> submodule, imported on first use: the CLI's counts never load the trace
# reader, the replay or the param model.
_EXPORTS = {
    "ConditionError": ".grammar",
    "parse_condition": ".grammar",
    **dict.fromkeys(["RESULT_FALSE", "RESULT_TRUE", "RESULT_UNKNOWN", "ClauseEvaluation", "Evaluation", "ExactColumn",
                     "evaluate", "evaluate_columns"], ".evaluation"),
    **dict.fromkeys(["ADAPTIVITIES", "ALARM_ON", "DEFAULT_CONDITION", "MODES", "CIInputs",
                     "delta_from_reliability"], ".inputs"),
    **dict.fromkeys(["PRESETS", "CIModel"], ".model"),
    **dict.fromkeys(["ADAPTIVITY_TITLES", "ASSUMPTIONS", "TEXT_ROUNDING_NOTE", "CIResult", "ClausePlan", "ci_curves",
                     "ci_labels"], ".plan"),
    **dict.fromkeys(["CIReplay", "replay_ci"], ".replay"),
    **dict.fromkeys(["EXAMPLES", "CITrace", "example_trace", "read_ci_trace"], ".trace"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))
