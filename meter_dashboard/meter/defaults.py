"""The meter's default settings, defined once for the page, the notebook and the CLI.

A module without imports, so that the command line can show these defaults in its help
without loading the meter's engine (numpy, scipy, param) for verbs that never use it.
:class:`~meter_dashboard.meter.model.MeterPlan` takes its parameter defaults from here.

References
----------
.. [1] F. A. Hubis, W. Wu, C. Zhang. "Quantitative Overfitting Management for
   Human-in-the-loop ML Application Development with ease.ml/meter", 2019.  Section 5
   (the evaluation's settings: five signals, eps = 0.01..0.05, delta = 0.01, T = 10).
"""

#: Empirical-overfitting range boundaries 0 = r_0 < ... < r_m = 1 (five signals).
DEFAULT_RANGES = (0.0, 0.005, 0.01, 0.02, 0.05, 1.0)
#: Distributional tolerances eps_1 <= ... <= eps_m, one per signal.
DEFAULT_EPSILON = (0.01, 0.02, 0.03, 0.04, 0.05)
#: Failure probability: the guarantee holds with probability 1 - delta.
DEFAULT_DELTA = 0.01
#: T: development steps the test set must support.
DEFAULT_STEPS = 10
#: The largest label budget a plan answers for (10**15 labels): the engines count labels in
#: floats and 64-bit integers, exact far beyond this; a larger budget is refused by name.
MAX_BUDGET = 10**15

__all__ = ["DEFAULT_DELTA", "DEFAULT_EPSILON", "DEFAULT_RANGES", "DEFAULT_STEPS", "MAX_BUDGET"]
