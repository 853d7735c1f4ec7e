"""The exact binomial counts of one ease.ml/ci setting, computed as a background job.

:func:`~meter_dashboard.ci.plan.ci_labels` with ``bound='binomial'`` searches the
exact count of every clause and adaptivity (Section 4.3's tight numerical bounds): from a
tenth of a second to a few seconds.  :class:`ExactCounts` runs that search through the
dashboard's one mechanism for long work (:class:`~meter_dashboard.core.runtime.BackgroundJob`):
in a worker thread on a served page (``arun``), at once in scripts (``run``), with a status
line and cancel.  :class:`~meter_dashboard.ci.model.CIModel` owns one.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019.  Section 4.3 (tight numerical bounds).
"""
from __future__ import annotations

import param

from ..core.runtime import BackgroundJob
from .plan import CIResult, ci_labels

__all__ = ["ExactCounts"]


class ExactCounts(BackgroundJob):
    """``ci_labels(**settings, bound='binomial')`` as a cancellable job; the answer in :attr:`result`.

    References
    ----------
    Renggli et al. 2019, Section 4.3.
    """

    result = param.ClassSelector(class_=CIResult, default=None, allow_None=True, constant=True,
                                 doc="The binomial CIResult of the last settings computed to the end.")

    def __init__(self, **params):
        super().__init__(**params)
        self.settings: dict | None = None  # what the running (or last) search is for

    def start(self, settings: dict) -> None:
        """Remember the settings of the next run (the model starts it)."""
        self.settings = dict(settings)

    def work(self, report, should_stop):
        report(0.0, "searching the exact binomial counts…")
        return ci_labels(**self.settings, bound="binomial")

    def finish(self, result, cancelled: bool) -> str:
        if cancelled:
            return "cancelled: showing Hoeffding's counts"
        self._set(result=result)
        return "exact binomial counts"
