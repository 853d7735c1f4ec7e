"""Labeling effort shared by every family: labels -> labeler-hours and calendar hours.

Pure numpy (no param, no Panel).  The meter planner, ease.ml/ci and any later family turn
label counts into hours with the one function here.

References
----------
.. [1] C. Renggli et al. "Continuous Integration of Machine Learning Models with
   ease.ml/ci", SysML 2019, Section 2.3 (2 seconds per label as the working figure).
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import InputError, check_int
from ._types import FloatArray

__all__ = ["labeling_hours"]


def labeling_hours(n: ArrayLike, seconds_per_label: float = 2.0, labelers: int = 1) -> tuple[FloatArray, FloatArray]:
    """Labeling effort: ``(labeler_hours, calendar_hours)`` for ``n`` labels.

    ``labeler_hours = n * seconds_per_label / 3600`` is the work to pay for;
    ``calendar_hours`` divides it among ``labelers`` working in parallel.

    Parameters
    ----------
    n : int or array_like
        Label counts.
    seconds_per_label : float
        Labeling time per example (> 0).
    labelers : int
        Labelers working in parallel (>= 1).

    Returns
    -------
    (ndarray, ndarray)
        Labeler-hours and calendar hours, shaped like ``n``.

    References
    ----------
    The ease.ml/ci paper's working figure is 2 seconds per label (Renggli et al. 2019,
    Section 2.3).

    Examples
    --------
    >>> work, calendar = labeling_hours(3600, 2.0, 4)
    >>> float(work), float(calendar)
    (2.0, 0.5)
    """
    if seconds_per_label <= 0 or not math.isfinite(seconds_per_label):
        raise InputError("seconds_per_label", "a finite number > 0", seconds_per_label)
    labelers = check_int("labelers", labelers, minimum=1)
    work = np.asarray(n, dtype=float) * seconds_per_label / 3600.0
    return work, work / labelers
