"""P(A>B) comparisons of two training pipelines over repeated runs (models).

Plain functions returning small result objects, for notebooks and the CLI:

>>> import meter_dashboard.comparison.model as mc
>>> runs = mc.load_example("compare_paired.csv")
>>> mc.compare(runs.a, runs.b).conclusion                # doctest: +SKIP
'significant_and_meaningful'
>>> mc.sample_size(alpha=0.05, beta=0.05, gamma=0.75).runs
29

and :class:`CompareModel`, the ``param`` model the page, notebooks and tests drive.
Its outputs (``table``, ``result``, ``size``, ``error``, ``busy``) are read-only.
Invalid input keeps the last good result and sets ``error``.  Runs files are parsed by
:meth:`CompareModel.prepare` (a served page calls it in a worker thread and then
:meth:`CompareModel.apply_table`); with ``offload`` on, comparisons of more than
:data:`OFFLOAD_RUNS` runs are computed in a worker thread.

The mathematics is in :mod:`meter_dashboard.bounds.compare`.

References
----------
.. [1] X. Bouthillier et al. "Accounting for Variance in Machine Learning Benchmarks".
   MLSys 2021: Section 4.1 (Eq. 9), Appendix C.3-C.6.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import param

from ..core.slide import SlideMixin
from ..core.formatting import strict_json
from ..bounds import compare as compare_bounds
from ..core.files import check_csv_shape, read_text
from ..core.tables import UPLOADED, BadCells, TableModel, csv_rows, data_file, first_row, numeric_table
from ..core.validation import InputError, check_int, check_number, check_probability, check_real_array

__all__ = [
    "COMPARE_EXAMPLES",
    "OFFLOAD_RUNS",
    "FAST_PATH_CHARS",
    "RunsTable",
    "parse_runs",
    "read_runs",
    "load_example",
    "example_path",
    "CompareResult",
    "compare",
    "SampleSize",
    "sample_size",
    "sample_size_curve",
    "CompareModel",
]

#: Shipped example runs files (synthetic, see meter_dashboard/data/compare.md).
COMPARE_EXAMPLES = {
    "compare_paired.csv": "30 paired runs: A clearly better (synthetic)",
    "compare_many_runs.csv": "400 paired runs: A better, but by little (synthetic)",
    "compare_unpaired.csv": "20 runs of A, 25 of B, not paired (synthetic)",
}

#: Comparisons of more runs than this are computed in a worker thread by an ``offload`` model.
OFFLOAD_RUNS = 200_000
#: Texts longer than this are parsed by pandas' C parser first.
FAST_PATH_CHARS = 256 * 1024

_CONCLUSION_TEXT = {
    "not_significant": "Not significant: noise alone could explain the difference (the interval reaches 0.5).",
    "significant_not_meaningful": "Significant but not meaningful: A beats B more often than chance, "
                                  "but not often enough (the interval stays at or below γ).",
    "significant_and_meaningful": "Significant and meaningful: A is better than B "
                                  "(the interval is above 0.5 and reaches beyond γ).",
}


@dataclass(frozen=True, repr=False)
class RunsTable:
    """Performances of runs of A and B (higher is better).

    ``complete_rows`` is True when every row has both a and b, so the rows can be
    taken as pairs.
    """

    a: np.ndarray
    b: np.ndarray
    complete_rows: bool
    source: str = ""

    def __repr__(self) -> str:
        paired = "paired rows" if self.complete_rows else "not paired"
        return (f"RunsTable({self.a.size} runs of A, {self.b.size} of B, {paired}"
                + (f", from {self.source!r}" if self.source else "") + ")")


def _columns(header: list[str], header_line: int) -> dict[str, int]:
    """Positions of the columns a and b (any case, any position)."""
    lowered = [h.strip().lower() for h in header]
    columns: dict[str, int] = {}
    for name in ("a", "b"):
        if name not in lowered:
            raise InputError("header", "a row naming columns a and b", ",".join(header)[:60],
                             location=f"line {header_line}")
        columns[name] = lowered.index(name)
    return columns


def _parse_rows_exactly(text: str, columns: dict[str, int]) -> tuple[dict, bool]:
    """The csv-module reader: cell by cell, each bad cell named by line and column."""
    values: dict[str, list[float]] = {"a": [], "b": []}
    complete, bad = True, BadCells()
    for line, cells in csv_rows(text, parameter="runs file")[1:]:
        for name, j in columns.items():
            cell = cells[j] if j < len(cells) else ""
            if cell == "":
                complete = False
                continue
            try:
                value = float(cell)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                bad.add(InputError(name, "a finite number (a performance, higher is better)", cell,
                                   location=f"line {line}, column {j + 1}"))
            values[name].append(value)
    bad.check()
    return {k: np.asarray(v, dtype=float) for k, v in values.items()}, complete


def _parse_clean(text: str, header: list[str], columns: dict[str, int]) -> tuple[dict, bool] | None:
    """pandas' C parser for large files where every row has a number for a and for b; None otherwise."""
    order = sorted(columns, key=columns.__getitem__)  # usecols come back in file order
    arr = numeric_table(text, columns=len(header), usecols=[columns[name] for name in order])
    if arr is None or not np.all(np.isfinite(arr)):
        return None
    return {name: np.ascontiguousarray(arr[:, i]) for i, name in enumerate(order)}, True


def parse_runs(text: str, source: str = "") -> RunsTable:
    """Parse a runs CSV with columns ``a`` and ``b`` (one run per row; other columns ignored).

    A cell may be empty when A and B have different numbers of runs (unpaired runs).
    Errors name the line and column (a non-number, NaN, an infinity, a cell longer than
    the csv module's limit); any line ending works.
    """
    check_csv_shape(text, parameter="runs file")
    head = first_row(text, parameter="runs file")
    if head is None:
        raise InputError("runs file", "a CSV with columns a and b", "an empty file", location=source or None)
    columns = _columns(head[1], head[0])
    parsed = _parse_clean(text, head[1], columns) if len(text) > FAST_PATH_CHARS else None
    values, complete = parsed if parsed is not None else _parse_rows_exactly(text, columns)
    a, b = values["a"], values["b"]
    for name, arr in (("a", a), ("b", b)):
        if arr.size < 2:
            raise InputError(f"column {name}", "at least 2 runs", f"{arr.size}", location=source or None)
    return RunsTable(a=a, b=b, complete_rows=complete and a.size == b.size, source=source)


def read_runs(source) -> RunsTable:
    """Read a runs CSV from a path, bytes (an upload) or an open file."""
    text, name = read_text(source, parameter="runs")
    return parse_runs(text, name)


def example_path(name: str):
    """The shipped example ``name`` (a ``Traversable``)."""
    return data_file(name, COMPARE_EXAMPLES)


def load_example(name: str = "compare_paired.csv") -> RunsTable:
    """A shipped example runs table (see :data:`COMPARE_EXAMPLES`)."""
    return parse_runs(example_path(name).read_text(encoding="utf-8"), name)


# --------------------------------------------------------------------------- results
@dataclass(repr=False)
class CompareResult(SlideMixin):
    """P(A>B), its percentile-bootstrap interval and the conclusion (Bouthillier et al. 2021 [1]_).

    ``counts[w]`` is the number of bootstrap replicates whose P(A>B) is ``w / runs``
    (:func:`meter_dashboard.bounds.compare.bootstrap_counts`); ``replicates`` lists them
    (sorted).

    References
    ----------
    .. [1] Bouthillier et al. (2021), Eq. 9 and Appendix C.4-C.6.
    """

    _text_module = "meter_dashboard.comparison.text"  # lead() and slide(path)

    p_a_gt_b: float
    ci: tuple[float, float]
    conclusion: str
    runs: int
    wins: int
    ties: int
    gamma: float
    alpha: float
    resamples: int
    seed: int
    paired: bool
    runs_a: int
    runs_b: int
    runs_needed: int
    beta: float
    a: np.ndarray
    b: np.ndarray
    counts: np.ndarray

    @property
    def replicates(self) -> np.ndarray:
        """The K bootstrap values of P(A>B), sorted (built from ``counts``)."""
        return np.repeat(np.arange(self.counts.size) / self.runs, self.counts)

    @property
    def significant(self) -> bool:
        """The interval's lower bound is above 0.5."""
        return self.conclusion != "not_significant"

    @property
    def meaningful(self) -> bool:
        """Significant, and the upper bound is above gamma: A is better than B."""
        return self.conclusion == "significant_and_meaningful"

    @property
    def sentence(self) -> str:
        return _CONCLUSION_TEXT[self.conclusion]

    @property
    def dropped(self) -> int:
        """Runs left out by random pairing of unequal samples."""
        return self.runs_a + self.runs_b - 2 * self.runs

    def _repr_html_(self) -> str:  # notebooks: the compare verb's table, the decision marked
        from ..core.display import html_table

        lo, hi = self.ci
        rows: list[list] = [["P(A>B)", self.p_a_gt_b], [f"{100 * (1 - self.alpha):g}% CI (percentile bootstrap)",
                                           f"[{lo:.4g}, {hi:.4g}]"],
                ["decision", self.conclusion], ["runs (paired)" if self.paired else "runs (paired at random)", self.runs],
                ["runs needed (Noether)", self.runs_needed]]
        return html_table(["", "value"], rows,
                          caption=f"gamma = {self.gamma:g}, alpha = {self.alpha:g}, beta = {self.beta:g}, "
                                  f"{self.resamples:,} resamples, seed {self.seed}",
                          marked=[2], mark_note="decision", sentence=self.sentence)

    @strict_json
    def to_dict(self) -> dict:
        return {
            "p_a_gt_b": self.p_a_gt_b,
            "ci": [self.ci[0], self.ci[1]],
            "significant": self.significant,
            "meaningful": self.meaningful,
            "conclusion": self.conclusion,
            "runs": self.runs,
            "wins": self.wins,
            "ties": self.ties,
            "paired": self.paired,
            "runs_a": self.runs_a,
            "runs_b": self.runs_b,
            "gamma": self.gamma,
            "alpha": self.alpha,
            "beta": self.beta,
            "resamples": self.resamples,
            "seed": self.seed,
            "runs_needed": self.runs_needed,
        }

    def to_frame(self):
        """The pairs used, one row each (a, b, a > b)."""
        import pandas as pd

        return pd.DataFrame({"a": self.a, "b": self.b, "a_wins": self.a > self.b})

    def __repr__(self) -> str:
        return (f"CompareResult(P(A>B)={self.p_a_gt_b:.4g}, {100 * (1 - self.alpha):g}% CI=[{self.ci[0]:.4g}, "
                f"{self.ci[1]:.4g}], {self.conclusion} at gamma={self.gamma:g}; {self.runs} "
                f"{'paired' if self.paired else 'randomly paired'} runs)")


def compare(a, b=None, *, gamma: float = 0.75, alpha: float = 0.05, resamples: int = 10_000, seed: int = 0,
            paired: bool = True, beta: float = 0.05) -> CompareResult:
    """Is pipeline A better than B?  P(A>B), bootstrap CI and the decision (Appendix C [1]_).

    Parameters
    ----------
    a, b : array_like
        Performances per run (higher is better).  With ``paired=True``, ``a[i]`` and
        ``b[i]`` share run i's seeds/split; otherwise they are paired at random
        (seeded, Appendix C.4), leaving out the extra runs of the larger sample.
        Or ``a`` alone: a runs table like its siblings take (a CSV path, bytes, an open file
        or a :class:`RunsTable`, columns ``a`` and ``b``): ``compare("runs.csv")``.
    gamma : float
        The meaningful threshold in (0.5, 1); 0.75 is the paper's recommendation.
    alpha : float
        In (0, 0.5): the interval's level is 1 - alpha (its percentiles are alpha/2 and
        1 - alpha/2), and the false-positive rate of the runs needed.
    resamples : int
        Bootstrap resamples K (at most :data:`~meter_dashboard.bounds.compare.MAX_RESAMPLES`;
        the cost does not grow with K: the replicates' histogram is drawn at once).
    seed : int
        Seeds the bootstrap and the random pairing.
    paired : bool
    beta : float
        False-negative rate for the runs needed (Noether, Appendix C.3).

    Returns
    -------
    CompareResult

    References
    ----------
    .. [1] Bouthillier et al. (2021), Section 4.1 and Appendix C.3-C.6.
    """
    if b is None:
        runs = a if isinstance(a, RunsTable) else read_runs(a)
        a, b = runs.a, runs.b
    gamma = compare_bounds.check_gamma(gamma)
    alpha = check_probability("alpha", alpha)
    if alpha >= 0.5:
        raise InputError("alpha", "in (0, 0.5) (the interval's level is 1 - alpha)", alpha)
    resamples = check_int("resamples", resamples, minimum=1, maximum=compare_bounds.MAX_RESAMPLES)
    seed = check_int("seed", seed, minimum=0)
    beta = check_number("beta", beta)
    if not isinstance(paired, (bool, np.bool_)):
        raise InputError("paired", "True or False", paired)
    needed = compare_bounds.noether_runs(alpha, beta, gamma)
    a0 = check_real_array("a", a, ndim=1)
    b0 = check_real_array("b", b, ndim=1)
    if paired:
        if a0.size != b0.size:
            raise InputError("runs", "as many runs of A as of B when paired (or pair them at random: unpaired)",
                             f"{a0.size} runs of A and {b0.size} of B")
        pa, pb = a0, b0
    else:
        pa, pb = compare_bounds.pair_at_random(a0, b0, seed)
    pa, pb = compare_bounds.validate_runs(pa, pb)
    wins = int(np.sum(pa > pb))
    counts = compare_bounds.bootstrap_counts(wins, pa.size, resamples, seed)
    lower, upper = (float(v) for v in compare_bounds.quantiles_from_counts(counts, [alpha / 2.0, 1.0 - alpha / 2.0]))
    return CompareResult(
        p_a_gt_b=wins / pa.size, ci=(lower, upper), conclusion=compare_bounds.decide(lower, upper, gamma),
        runs=int(pa.size), wins=wins, ties=int(np.sum(pa == pb)), gamma=gamma, alpha=alpha, resamples=resamples,
        seed=seed, paired=bool(paired), runs_a=int(a0.size), runs_b=int(b0.size), runs_needed=int(needed),
        beta=float(beta), a=pa, b=pb, counts=counts)


@dataclass(repr=False)
class SampleSize:
    """Noether's number of runs to detect P(A>B) > gamma (Appendix C.3)."""

    runs: int
    real: float
    alpha: float
    beta: float
    gamma: float

    def _repr_html_(self) -> str:  # notebooks: the compare-size answer
        from ..core.display import html_table

        return html_table(["runs", "bound", "alpha", "beta", "gamma"],
                          [[self.runs, self.real, self.alpha, self.beta, self.gamma]],
                          caption=f"Noether's runs to detect P(A>B) > {self.gamma:g}", marked=[0],
                          mark_note="runs needed")

    @strict_json
    def to_dict(self) -> dict:
        return {"runs": self.runs, "bound": self.real, "alpha": self.alpha, "beta": self.beta, "gamma": self.gamma}

    def __repr__(self) -> str:
        return (f"SampleSize(runs={self.runs} to detect P(A>B) > {self.gamma:g} with alpha={self.alpha:g}, "
                f"beta={self.beta:g}; bound {self.real:.4g})")


def sample_size(alpha: float = 0.05, beta: float = 0.05, gamma: float = 0.75) -> SampleSize:
    """Runs needed: the smallest N >= ((z_{1-alpha} - z_beta) / (sqrt 6 (1/2 - gamma)))^2 (Appendix C.3 [1]_).

    The count is checked before it is returned: ``N`` is at least the bound (up to the
    1e-9 relative rounding allowance of
    :func:`~meter_dashboard.bounds.compare.noether_runs`) and ``N - 1`` is below it.

    References
    ----------
    .. [1] Bouthillier et al. (2021), Appendix C.3; Noether (1987).
    """
    alpha, beta = check_number("alpha", alpha), check_number("beta", beta)
    gamma = check_number("gamma", gamma)
    runs = int(compare_bounds.noether_runs(alpha, beta, gamma))
    real = float(compare_bounds.noether_real(alpha, beta, gamma))
    if not (runs >= real * (1.0 - 1e-9) and (runs == 1 or runs - 1 < real)):  # pragma: no cover - a guard
        raise InputError("gamma", "a setting whose number of runs can be checked", gamma)
    return SampleSize(runs=runs, real=real, alpha=float(alpha), beta=float(beta), gamma=float(gamma))


def sample_size_curve(alpha: float = 0.05, beta: float = 0.05, gammas=None):
    """(gamma, runs) for Figure C.1: runs needed against the threshold gamma."""
    g = np.linspace(0.55, 0.95, 81) if gammas is None else np.asarray(gammas, dtype=float)
    return g, np.asarray(compare_bounds.noether_runs(alpha, beta, g))


# --------------------------------------------------------------------------- param model
class CompareModel(TableModel):
    """A comparison of two pipelines: the runs, the person's choices, and the conclusion.

    ``table``, ``result``, ``size``, ``error`` and ``busy`` are outputs (read-only).
    """

    example = param.Selector(default="compare_paired.csv", objects=list(COMPARE_EXAMPLES) + [UPLOADED],
                             doc="The runs file: a shipped example or the last uploaded file.")
    paired = param.Boolean(default=True, doc="Rows are pairs (same seeds/split for A and B); off: pair at random.")
    gamma = param.Number(default=0.75, bounds=(0.5, 1.0), inclusive_bounds=(False, False), softbounds=(0.55, 0.95),
                         step=0.01, doc="A meaningful improvement: P(A>B) above gamma.")
    alpha = param.Number(default=0.05, bounds=(0.0, 0.5), inclusive_bounds=(False, False), softbounds=(0.01, 0.2),
                         step=0.01, doc="The interval's level is 1 - alpha (and the false-positive rate).")
    beta = param.Number(default=0.05, bounds=(0.0, 0.5), inclusive_bounds=(False, False), softbounds=(0.01, 0.3),
                        step=0.01, doc="False-negative rate for the runs needed.")
    resamples = param.Integer(default=10_000, bounds=(100, 1_000_000), softbounds=(1000, 100_000),
                              doc="Bootstrap resamples.")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the bootstrap and the random pairing.")
    offload = param.Boolean(default=False, doc="Compare many runs in a worker thread (served pages).")

    table = param.ClassSelector(class_=RunsTable, default=None, allow_None=True, constant=True,
                                doc="The loaded runs.")
    result = param.ClassSelector(class_=CompareResult, default=None, allow_None=True, constant=True,
                                 doc="The comparison of the current runs and settings.")
    size = param.ClassSelector(class_=SampleSize, default=None, allow_None=True, constant=True,
                               doc="Noether's runs needed for alpha, beta, gamma.")
    busy = param.Boolean(default=False, constant=True, doc="A comparison is being computed in a worker thread.")

    def __init__(self, runs=None, **params):
        super().__init__(runs, **params)

    @staticmethod
    def example_table(name: str) -> RunsTable:
        return load_example(name)

    def _table_values(self, table: RunsTable) -> dict:
        # A new file starts paired when every row has both values (uncheck for independent runs).
        return {"paired": table.complete_rows, "table": table}

    @staticmethod
    def prepare(source, name: str | None = None) -> RunsTable:
        """Read runs (path, bytes of an upload, an open file, a RunsTable or an (a, b) pair); touches no state."""
        try:
            if isinstance(source, (bytes, bytearray)):
                return parse_runs(read_text(source, parameter="runs")[0], name or UPLOADED)
            if isinstance(source, (str, os.PathLike)) or hasattr(source, "read"):
                return read_runs(source)
            if isinstance(source, RunsTable):
                return source
            a, b = source
            a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
            return RunsTable(a=a, b=b, complete_rows=a.size == b.size, source="arrays")
        except InputError:
            raise
        except (OSError, ValueError, TypeError) as exc:
            raise InputError("runs", "a readable runs file or a pair of arrays", str(exc), location=name) from None

    @staticmethod
    def _compute(request):
        table, settings = request
        size = sample_size(settings["alpha"], settings["beta"], settings["gamma"])
        if table is None:
            return size, None
        if settings["paired"] and not table.complete_rows:
            raise InputError("paired", "off for these runs (some rows lack a or b, so rows are not pairs; "
                             "they will be paired at random)", True)
        return size, compare(table.a, table.b, **settings)

    def _apply_outcome(self, request, outcome) -> None:
        if isinstance(outcome, InputError):
            self._set(error=str(outcome))
            return
        size, result = outcome
        self._set(size=size, **({} if result is None else {"result": result}), error="")

    @param.depends("table", "paired", "gamma", "alpha", "beta", "resamples", "seed", watch=True, on_init=True)
    def _compare(self):
        settings = {"gamma": self.gamma, "alpha": self.alpha, "beta": self.beta, "resamples": self.resamples,
                    "seed": self.seed, "paired": self.paired}
        request = (self.table, settings)
        self._submit(request, background=self.offload and self.table is not None
                     and self.table.a.size + self.table.b.size > OFFLOAD_RUNS)

    @param.depends("alpha", "beta")
    def curve(self):
        """(gamma, runs): Noether's runs needed against gamma (Figure C.1)."""
        return sample_size_curve(self.alpha, self.beta)
