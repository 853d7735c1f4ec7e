"""Leaderboards with the Ladder: replays, label counts and the boosting attack (models).

Plain functions returning small result objects, for notebooks and the CLI:

>>> import meter_dashboard.leaderboard.model as ml
>>> table = ml.load_example("ladder_leaderboard.csv")
>>> result = ml.ladder(table)                 # parameter-free Ladder
>>> result.scores[:3]                          # doctest: +SKIP
>>> ml.ladder_size(epsilon=0.05, step=0.05, submissions=100, delta=0.05).labels
40343

and ``param`` models holding what a person chose (no widgets), driven the same way by
notebooks, the CLI and the dashboard: :class:`LadderReplayModel`,
:class:`LadderSizeModel`, :class:`BoostingAttackModel` (a
:class:`~meter_dashboard.core.runtime.BackgroundJob`).  Their derived outputs (``table``,
``result``, ``size``, ``best``, ``error``, ...) are read-only: only the model sets them.
Invalid input keeps the last good result and sets the model's ``error`` message.

Work that may take long stays off a served page's event loop: loss files are parsed by
:meth:`LadderReplayModel.prepare` (call it in a worker thread, then
:meth:`~LadderReplayModel.apply_table`), replays of large tables run in a worker thread
when ``offload`` is on, and the boosting attack runs through ``BackgroundJob.arun``.

The mathematics is in :mod:`meter_dashboard.bounds.ladder`.

References
----------
.. [1] Lecture notes, COMS 6998-4 Fall 2017, "Leaderboards": Algorithms 1 and 2, Lemma 4,
   Section 5 (boosting attack).
"""
from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field

import numpy as np
import param

from ..core.slide import SlideMixin
from ..core.formatting import strict_json
from ..bounds import ladder as ladder_bounds
from ..core.files import check_csv_shape, read_text
from ..core.runtime import BackgroundJob
from ..core.shared import SharedResults, read_only
from ..core.tables import UPLOADED, BadCells, TableModel, csv_rows, data_file, first_row, numeric_table
from ..core.validation import InputError, check_int, check_probability, check_real_array

__all__ = [
    "LADDER_EXAMPLES",
    "OFFLOAD_CELLS",
    "FAST_PATH_CHARS",
    "LossTable",
    "read_losses",
    "parse_losses",
    "load_example",
    "example_path",
    "as_table",
    "LadderResult",
    "ladder",
    "LadderSize",
    "ladder_size",
    "best_step",
    "BoardSize",
    "board_size",
    "AttackResult",
    "summarize_attack",
    "boosting_attack",
    "LadderReplayModel",
    "LadderSizeModel",
    "BoostingAttackModel",
]

#: Shipped example loss files (synthetic, see meter_dashboard/data/ladder.md).
LADDER_EXAMPLES = {
    "ladder_leaderboard.csv": "a team's 15 submissions on 2,000 test examples (synthetic)",
    "ladder_ties.csv": "a 4-example board built so submissions land exactly on the thresholds (synthetic)",
}

#: Tables with more losses than this are replayed in a worker thread by an ``offload`` model
#: (a replay costs a few passes over the losses: about 10 ms per 250,000 on the test machine).
OFFLOAD_CELLS = 250_000
#: Texts longer than this are parsed by pandas' C parser first (:func:`~meter_dashboard.core.tables.numeric_table`).
FAST_PATH_CHARS = 256 * 1024


# --------------------------------------------------------------------------- reading files
@dataclass(frozen=True, repr=False)
class LossTable:
    """Per-example losses of a sequence of submissions: ``losses[i, t]`` for example i, submission t."""

    names: tuple[str, ...]
    losses: np.ndarray
    source: str = ""

    @property
    def examples(self) -> int:
        """n, the test-set size."""
        return int(self.losses.shape[0])

    @property
    def submissions(self) -> int:
        """k, the number of submissions."""
        return int(self.losses.shape[1])

    @property
    def cells(self) -> int:
        """n * k, the number of losses (what a replay costs)."""
        return int(self.losses.size)

    def __repr__(self) -> str:
        return (f"LossTable({self.submissions} submissions x {self.examples:,} test examples"
                + (f", from {self.source!r}" if self.source else "") + ")")


def _check_names(names: list[str], header_line: int) -> None:
    """Submission names: non-empty, not numbers (a missing header), unique."""
    seen: dict[str, int] = {}
    for j, name in enumerate(names):
        where = f"line {header_line}, column {j + 1}"
        if name == "":
            raise InputError("submission name", "a non-empty header cell", name, location=where)
        try:
            float(name)
        except ValueError:
            pass
        else:
            raise InputError("header", "a row of submission names (the first row is a number: is the header missing?)",
                             name, location=where)
        if name in seen:
            raise InputError("submission names", f"unique ({name!r} is also column {seen[name] + 1})", name,
                             location=where)
        seen[name] = j


def _parse_rows_exactly(text: str, names: list[str], source: str) -> LossTable:
    """The csv-module reader: every rule checked row by row, each bad cell named by line and column."""
    data = csv_rows(text, parameter="losses file")[1:]
    if not data:
        raise InputError("losses file", "at least one row of losses below the header", "only a header",
                         location=source or None)
    k = len(names)
    for line, cells in data:
        if len(cells) != k:
            raise InputError("row", f"{k} values, one per submission ({', '.join(names[:4])}"
                             + (", ..." if k > 4 else "") + ")", f"{len(cells)} values", location=f"line {line}")
    bad = BadCells()
    for line, row in data:
        for j, cell in enumerate(row):
            try:
                value = float(cell)
            except ValueError:
                value = math.nan
            if not (0.0 <= value <= 1.0):
                bad.add(InputError("loss", "a number in [0, 1]", cell, location=f"line {line}, column {j + 1} "
                                   f"({names[j]})"))
    bad.check()
    return LossTable(names=tuple(names), losses=np.array([c for _, c in data], dtype=float), source=source)


def parse_losses(text: str, source: str = "") -> LossTable:
    """Parse a per-example loss CSV: header = submission names, one row per test example.

    Every value must be a number in [0, 1].  Errors name the line and the column (a
    non-number, NaN, an infinity, a value outside [0, 1], a row with the wrong number of
    values, a cell longer than the csv module's limit).  Any line ending works (``\\n``,
    ``\\r\\n``, a lone ``\\r``).  Large clean files are read by pandas' C parser; anything
    it does not read cleanly is read again cell by cell to say where the problem is.
    """
    check_csv_shape(text, parameter="losses file")
    head = first_row(text, parameter="losses file")
    if head is None:
        raise InputError("losses file", "a CSV with a header row of submission names and one row per test example",
                         "an empty file", location=source or None)
    header_line, names = head
    _check_names(names, header_line)
    arr = numeric_table(text, columns=len(names)) if len(text) > FAST_PATH_CHARS else None
    if arr is not None and np.all((arr >= 0.0) & (arr <= 1.0)):
        return LossTable(names=tuple(names), losses=np.ascontiguousarray(arr), source=source)
    return _parse_rows_exactly(text, names, source)


def read_losses(source) -> LossTable:
    """Read a per-example loss CSV from a path, bytes (an upload) or an open file."""
    text, name = read_text(source, parameter="losses")
    return parse_losses(text, name)


def example_path(name: str):
    """The shipped example ``name`` (a ``Traversable``; ``open()``/``read_bytes()`` work)."""
    return data_file(name, LADDER_EXAMPLES)


def load_example(name: str = "ladder_leaderboard.csv") -> LossTable:
    """A shipped example loss table (see :data:`LADDER_EXAMPLES`)."""
    return parse_losses(example_path(name).read_text(encoding="utf-8"), name)


@functools.lru_cache(maxsize=len(LADDER_EXAMPLES))
def _shared_example(name: str) -> LossTable:
    return read_only(load_example(name))


def as_table(losses) -> LossTable:
    """A :class:`LossTable` from a table, a path, bytes, an open file, a DataFrame or an array (validated)."""
    if isinstance(losses, LossTable):
        return losses
    if isinstance(losses, (str, os.PathLike, bytes, bytearray)) or hasattr(losses, "read"):
        return read_losses(losses)
    if hasattr(losses, "columns") and hasattr(losses, "to_numpy"):  # a DataFrame
        arr = ladder_bounds.check_losses(check_real_array("losses", losses.to_numpy(), ndim=2))
        return LossTable(names=tuple(str(c) for c in losses.columns), losses=arr, source="DataFrame")
    arr = ladder_bounds.check_losses(check_real_array("losses", losses, ndim=2))
    return LossTable(names=tuple(f"submission {i + 1}" for i in range(arr.shape[1])), losses=arr)
# --------------------------------------------------------------------------- replay
def _variant(step) -> str:
    return "parameter_free" if step is None else "fixed_step"


@dataclass(repr=False)
class LadderResult(SlideMixin):
    """What the Ladder and a naive leaderboard publish for each submission.

    ``scores[t]`` is the Ladder's released score after submission t, ``naive[t]`` the
    exact empirical loss a naive board would show, ``improved[t]`` whether the Ladder
    released a new score at t, ``thresholds[t]`` what ``naive[t]`` had to beat.
    """

    _text_module = "meter_dashboard.leaderboard.text"  # lead() and slide(path)

    names: tuple[str, ...]
    naive: np.ndarray
    best_naive: np.ndarray
    scores: np.ndarray
    improved: np.ndarray
    thresholds: np.ndarray
    step: float | None
    examples: int
    source: str = ""

    @property
    def variant(self) -> str:
        """``"fixed_step"`` (Algorithm 1) or ``"parameter_free"`` (Algorithm 2)."""
        return _variant(self.step)

    @property
    def submissions(self) -> int:
        return len(self.names)

    @property
    def releases(self) -> int:
        """How many times the Ladder published a new score."""
        return int(np.sum(self.improved))

    def _repr_html_(self) -> str:  # notebooks: the ladder verb's table; a newly released score marked
        from ..core.display import html_table

        rows = [[name, float(self.naive[t]), float(self.best_naive[t]), float(self.scores[t]),
                 "new" if self.improved[t] else ""] for t, name in enumerate(self.names)]
        how = "parameter-free Ladder (Algorithm 2)" if self.step is None else f"fixed-step Ladder, step {self.step:g}"
        return html_table(["submission", "naive loss", "naive best", "Ladder score", "released"], rows,
                          caption=f"{self.source or 'losses'}: {len(self.names)} submissions on {self.examples:,} "
                                  f"examples, {how}",
                          marked=[t for t in range(len(rows)) if self.improved[t]], mark_note="released")

    @strict_json
    def to_dict(self) -> dict:
        return {
            "variant": self.variant,
            "step": self.step,
            "examples": self.examples,
            "submissions": list(self.names),
            "scores": [float(v) for v in self.scores],
            "naive": [float(v) for v in self.naive],
            "best_naive": [float(v) for v in self.best_naive],
            "improved": [bool(v) for v in self.improved],
            "thresholds": [float(v) if math.isfinite(v) else None for v in self.thresholds],
        }

    def to_frame(self):
        """A pandas DataFrame, one row per submission."""
        import pandas as pd

        return pd.DataFrame({
            "submission": list(self.names),
            "naive": self.naive,
            "best_naive": self.best_naive,
            "threshold": self.thresholds,
            "ladder_score": self.scores,
            "improved": self.improved,
        })

    def __repr__(self) -> str:
        how = "parameter-free Ladder" if self.step is None else f"Ladder with step {self.step:g}"
        shown = ", ".join(f"{s:.4g}" for s in self.scores[:6]) + (", ..." if self.submissions > 6 else "")
        return (f"LadderResult({how}, {self.submissions} submissions on {self.examples:,} examples, "
                f"{self.releases} released; scores=[{shown}])")


def ladder(losses, step: float | None = None) -> LadderResult:
    """Replay a leaderboard with the Ladder (Algorithm 1 with ``step``, else Algorithm 2).

    Parameters
    ----------
    losses : LossTable, path, bytes, DataFrame or array_like (n, k)
        Per-example losses in [0, 1], one column per submission in submission order.
    step : float, optional
        The fixed step eta in (0, 1]; omitted: the parameter-free Ladder.

    Returns
    -------
    LadderResult

    References
    ----------
    .. [1] Lecture notes on the Ladder, Algorithms 1 and 2 (see the module references).
    """
    table = as_table(losses)
    replay = ladder_bounds.replay(table.losses, step)
    return LadderResult(names=table.names, naive=replay.naive, best_naive=replay.best_naive, scores=replay.scores,
                        improved=replay.improved, thresholds=replay.thresholds,
                        step=None if step is None else float(step), examples=table.examples, source=table.source)


# --------------------------------------------------------------------------- Lemma 4
@dataclass(repr=False)
class LadderSize:
    """Lemma 4's test-set size: ``labels`` for ``submissions`` with error epsilon + step w.p. 1 - delta."""

    labels: int
    epsilon: float
    step: float
    submissions: int
    delta: float

    @property
    def total_error(self) -> float:
        return self.epsilon + self.step

    def _repr_html_(self) -> str:  # notebooks: the ladder-size answer, its inputs as the caption
        from ..core.display import html_table

        return html_table(["labels", "epsilon", "step", "total error", "submissions", "delta"],
                          [[int(self.labels), self.epsilon, self.step, self.total_error, self.submissions, self.delta]],
                          caption=f"Lemma 4: {self.submissions:,} submissions, leaderboard error <= epsilon + step "
                                  f"with probability {1 - self.delta:g}", marked=[0], mark_note="labels needed")

    @strict_json
    def to_dict(self) -> dict:
        return {"labels": int(self.labels), "epsilon": self.epsilon, "step": self.step,
                "total_error": self.total_error, "submissions": self.submissions, "delta": self.delta}

    def __repr__(self) -> str:
        return (f"LadderSize(labels={self.labels:,}: {self.submissions:,} submissions, leaderboard error "
                f"<= {self.epsilon:.4g} + {self.step:.4g} with confidence {1 - self.delta:.4g})")


def ladder_size(epsilon: float, step: float, submissions: int, delta: float) -> LadderSize:
    """Test labels so the Ladder's leaderboard error stays within epsilon + step (Lemma 4 [1]_).

    The count is certified (:func:`meter_dashboard.bounds.ladder.exact_labels`): a
    positive integer that satisfies Lemma 4's strict inequality, one less does not.  A
    count beyond :data:`~meter_dashboard.bounds.ladder.MAX_LABELS` is refused with an
    :class:`InputError` naming ``epsilon`` or ``step``.

    References
    ----------
    .. [1] Lecture notes on the Ladder, Lemma 4.
    """
    epsilon = check_probability("epsilon", epsilon)
    checked = ladder_bounds.check_step(step)
    if checked is None:
        raise InputError("step", "a number in (0, 1]", step)
    step = checked
    submissions = check_int("submissions", submissions, minimum=1)
    delta = check_probability("delta", delta)
    return LadderSize(labels=ladder_bounds.exact_labels(epsilon, step, submissions, delta), epsilon=epsilon, step=step,
                      submissions=submissions, delta=delta)


def best_step(total_error: float, submissions: int, delta: float) -> LadderSize:
    """The split of ``total_error`` into epsilon + step that needs the fewest labels (Lemma 4 [1]_).

    The count at the split is certified like :func:`ladder_size`'s.

    References
    ----------
    .. [1] Lecture notes on the Ladder, Lemma 4 and Theorem 3.
    """
    eta, eps, _ = ladder_bounds.best_step(total_error, submissions, delta)
    try:
        n = ladder_bounds.exact_labels(eps, eta, submissions, delta)
    except InputError as exc:
        raise InputError("total_error", exc.rule, total_error) from None
    return LadderSize(labels=n, epsilon=eps, step=eta, submissions=int(submissions), delta=float(delta))


@dataclass(repr=False)
class BoardSize:
    """A replayed board's test set against a target error (Lemma 4 both ways).

    ``error`` is the leaderboard error its ``examples`` labels guarantee for its
    ``submissions`` (1 or more: nothing useful); ``needed`` the labels a leaderboard error of
    ``target`` needs for the same submissions, at the best split of ``target`` into eps + eta.
    """

    submissions: int
    examples: int
    delta: float
    error: float
    target: float
    needed: LadderSize

    @property
    def more(self) -> int:
        """Labels to add to reach the target (0 when the board already has enough)."""
        return max(0, self.needed.labels - self.examples)

    def to_dict(self) -> dict:
        return {"submissions": self.submissions, "examples": self.examples, "delta": self.delta,
                "error": self.error, "target": self.target, "needed": self.needed.to_dict(), "more": self.more}

    def __repr__(self) -> str:
        return (f"BoardSize({self.submissions} submissions on {self.examples:,} labels: error <= {self.error:.4g}; "
                f"+/-{self.target:.4g} needs {self.needed.labels:,})")


def board_size(result: LadderResult, target: float, delta: float) -> BoardSize:
    """What a replayed board's labels guarantee, and what ``target`` would need for its submissions (Lemma 4 [1]_).

    References
    ----------
    .. [1] Lecture notes on the Ladder, Lemma 4 (and its inversion, as in
       :func:`meter_dashboard.bounds.ladder.leaderboard_error`).
    """
    delta = check_probability("delta", delta)
    error = ladder_bounds.leaderboard_error(result.examples, result.submissions, delta)[0]
    return BoardSize(submissions=result.submissions, examples=result.examples, delta=delta, error=float(error),
                     target=float(target), needed=best_step(target, result.submissions, delta))


# --------------------------------------------------------------------------- the attack
@dataclass(repr=False)
class AttackResult:
    """The boosting attack's curves, averaged over the trials that ran.

    ``naive_public`` / ``ladder_public``: the score each leaderboard publishes for the
    attacker's boosted submission after k random probes; ``naive_holdout`` /
    ``ladder_holdout``: the same submissions on a fresh holdout (the truth, about 1/2);
    ``reference``: 1/2 - sqrt(k/(2n))/pi, the naive board's expected drift.
    """

    labels: int
    step: float | None
    seed: int
    trials: int
    submissions: np.ndarray
    naive_public: np.ndarray
    ladder_public: np.ndarray
    naive_holdout: np.ndarray
    ladder_holdout: np.ndarray
    naive_selected: np.ndarray
    ladder_selected: np.ndarray
    reference: np.ndarray
    done: int = 0
    total: int = 0
    curves: ladder_bounds.AttackCurves | None = field(default=None)

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    @property
    def variant(self) -> str:
        return _variant(self.step)

    @property
    def computed(self) -> int:
        """The largest k with a value (the whole range unless cancelled in trial 1)."""
        ok = np.isfinite(self.naive_public)
        return int(self.submissions[ok][-1]) if ok.any() else 0

    def at(self, k: int | None = None) -> dict:
        """The curves' values at ``k`` (the last computed k by default)."""
        k = self.computed if k is None else int(k)
        i = k - 1
        return {"submissions": k, "naive_public": float(self.naive_public[i]),
                "ladder_public": float(self.ladder_public[i]), "naive_holdout": float(self.naive_holdout[i]),
                "ladder_holdout": float(self.ladder_holdout[i]), "reference": float(self.reference[i])}

    @strict_json
    def to_dict(self) -> dict:
        def listed(arr):
            return [float(v) if math.isfinite(v) else None for v in arr]

        return {"labels": self.labels, "variant": self.variant, "step": self.step, "seed": self.seed,
                "trials": self.trials, "complete": self.complete,
                "submissions": [int(v) for v in self.submissions], "naive_public": listed(self.naive_public),
                "ladder_public": listed(self.ladder_public), "naive_holdout": listed(self.naive_holdout),
                "ladder_holdout": listed(self.ladder_holdout), "reference": listed(self.reference)}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"k": self.submissions, "naive_public": self.naive_public,
                             "ladder_public": self.ladder_public, "naive_holdout": self.naive_holdout,
                             "ladder_holdout": self.ladder_holdout, "reference": self.reference})

    def __repr__(self) -> str:
        if not self.computed:
            return f"AttackResult(labels={self.labels:,}, nothing computed)"
        v = self.at()
        state = "" if self.complete else ", cancelled"
        return (f"AttackResult(labels={self.labels:,}, trials={self.trials}{state}; after k={v['submissions']} "
                f"probes: naive board {v['naive_public']:.4f}, Ladder {v['ladder_public']:.4f}, fresh holdout "
                f"{v['naive_holdout']:.4f})")


def summarize_attack(curves: ladder_bounds.AttackCurves, labels, step, seed, trials) -> AttackResult:
    """The mean curves over the trials that finished (an :class:`AttackResult`)."""

    def mean(arr):
        ok = np.isfinite(arr)
        counts = ok.sum(axis=0)
        with np.errstate(invalid="ignore"):
            out = np.where(counts > 0, np.nansum(np.where(ok, arr, 0.0), axis=0) / np.maximum(counts, 1), np.nan)
        return out

    complete = np.all(np.isfinite(curves.naive_public), axis=1)
    done_trials = int(complete.sum())
    if done_trials:  # a cancelled run: average the trials that finished, drop the partial one
        curves = curves._replace(**{name: getattr(curves, name)[complete] for name in
                                    ("naive_public", "ladder_public", "naive_holdout", "ladder_holdout",
                                     "naive_selected", "ladder_selected")})
    return AttackResult(
        labels=int(labels), step=step, seed=int(seed), trials=max(done_trials, 1) if curves.done else 0,
        submissions=curves.submissions, naive_public=mean(curves.naive_public),
        ladder_public=mean(curves.ladder_public), naive_holdout=mean(curves.naive_holdout),
        ladder_holdout=mean(curves.ladder_holdout), naive_selected=mean(curves.naive_selected),
        ladder_selected=mean(curves.ladder_selected),
        reference=np.asarray(ladder_bounds.boosting_reference(labels, curves.submissions)), done=curves.done,
        total=curves.total,
        curves=curves)


def boosting_attack(labels: int = 4000, submissions: int = 400, *, step: float | None = None, seed: int = 0,
                    trials: int = 1, progress=None) -> AttackResult:
    """Simulate the boosting attack (Section 5 [1]_) against a naive board and the Ladder.

    See :func:`meter_dashboard.bounds.ladder.iter_boosting_attack`.  ``progress(done,
    total)`` is called as it runs; returning ``False`` cancels (partial result).

    References
    ----------
    .. [1] Lecture notes on the Ladder, Section 5 and Theorem 6.
    """
    curves = ladder_bounds.boosting_attack(labels, submissions, step=step, seed=seed, trials=trials, progress=progress)
    return summarize_attack(curves, labels, step, seed, trials)


#: Complete attack results kept for the process, by (labels, submissions, step, seed, trials).
SHARED_ATTACKS: SharedResults[AttackResult] = SharedResults(16)


# --------------------------------------------------------------------------- param models
class LadderReplayModel(TableModel):
    """A loss file replayed through the Ladder: what a person chose and what follows.

    ``table``, ``result``, ``error`` and ``busy`` are outputs (read-only).  With
    ``offload=True`` (served pages) a table of more than :data:`OFFLOAD_CELLS` losses is
    replayed in a worker thread; ``busy`` is True meanwhile and the last result stays.
    Set ``dispatch`` to run the outcome on the page's document (see
    :class:`~meter_dashboard.core.runtime.Latest`).
    """

    example = param.Selector(default="ladder_leaderboard.csv", objects=list(LADDER_EXAMPLES) + [UPLOADED],
                             doc="The loss file: a shipped example or the last uploaded file.")
    variant = param.Selector(default="parameter_free", objects=list(ladder_bounds.LADDER_VARIANTS),
                             doc="parameter_free: Algorithm 2 (no step to choose); fixed_step: Algorithm 1 with "
                                 "step eta.")
    step = param.Number(default=0.01, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.001, 0.1),
                        step=0.001, doc="eta, the fixed step of Algorithm 1 (a released score is a multiple of it).")
    delta = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, False), softbounds=(0.001, 0.2),
                         doc="1 - confidence for the leaderboard-error guarantee of these labels.")
    offload = param.Boolean(default=False, doc="Replay large tables in a worker thread (served pages).")

    table = param.ClassSelector(class_=LossTable, default=None, allow_None=True, constant=True,
                                doc="The loaded losses.")
    result = param.ClassSelector(class_=LadderResult, default=None, allow_None=True, constant=True,
                                 doc="The replay of the current table.")
    busy = param.Boolean(default=False, constant=True, doc="A replay is being computed in a worker thread.")

    def __init__(self, losses=None, **params):
        super().__init__(losses, **params)

    @staticmethod
    def example_table(name: str) -> LossTable:
        """The shipped example, parsed once per process and shared read-only (every page opens on one)."""
        return _shared_example(name)

    @staticmethod
    def prepare(source, name: str | None = None) -> LossTable:
        """Read losses (path, bytes of an upload, DataFrame, array) into a table; may take long, touches no state.

        Raises :class:`InputError` naming the line and column of each bad cell (up to ten).
        """
        try:
            if isinstance(source, (bytes, bytearray)):
                return parse_losses(read_text(source, parameter="losses")[0], name or UPLOADED)
            return as_table(source)
        except (OSError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError("losses", "a readable loss file", str(exc), location=name) from None

    @property
    def step_value(self) -> float | None:
        """The step passed to the mechanism: None for the parameter-free Ladder."""
        return None if self.variant == "parameter_free" else float(self.step)

    @staticmethod
    def _compute(request):
        table, step = request
        return ladder(table, step)

    def _apply_outcome(self, request, outcome) -> None:
        if isinstance(outcome, InputError):
            self._set(error=str(outcome))
        else:
            self._set(result=outcome, error="")

    @param.depends("table", "variant", "step", watch=True, on_init=True)
    def _replay(self):
        if self.table is None:
            return
        request = (self.table, self.step_value)
        self._submit(request, background=self.offload and self.table.cells > OFFLOAD_CELLS)

    @param.depends("result", "delta")
    def guarantee(self) -> tuple[float, float, float] | None:
        """Lemma 4 for this test set: (smallest eps + eta, eta, eps) for its k submissions."""
        if self.result is None:
            return None
        return ladder_bounds.leaderboard_error(self.result.examples, self.result.submissions, self.delta)


class LadderSizeModel(param.Parameterized):
    """Lemma 4 as a planner: labels from (epsilon, step, submissions, delta), and the best step.

    ``size``, ``best`` and ``error`` are outputs (read-only); every count is certified
    (:func:`ladder_size`).  A setting whose count would pass
    :data:`~meter_dashboard.bounds.ladder.MAX_LABELS`, or whose error epsilon + step
    reaches 1, is refused in ``error`` and the last good counts stay.
    """

    epsilon = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, False),
                           softbounds=(0.005, 0.2), step=0.005, doc="eps, the statistical part of the error.")
    step = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.005, 0.2),
                        step=0.005, doc="eta, the Ladder's step (the rounding part of the error).")
    submissions = param.Integer(default=100, bounds=(1, None), softbounds=(1, 10_000),
                                doc="k, the submissions the leaderboard must support.")
    delta = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, False), softbounds=(0.001, 0.2),
                         doc="1 - confidence.")

    size = param.ClassSelector(class_=LadderSize, default=None, allow_None=True, constant=True,
                               doc="labels for the inputs")
    best = param.ClassSelector(class_=LadderSize, default=None, allow_None=True, constant=True,
                               doc="the split of the same total error eps + eta needing the fewest labels")
    error = param.String(default="", constant=True, doc="Why the inputs were refused ('' when all is well).")

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    @param.depends("epsilon", "step", "submissions", "delta", watch=True, on_init=True)
    def _solve(self):
        try:
            total = self.epsilon + self.step
            if total >= 1:
                raise InputError("epsilon + step", "less than 1 (a leaderboard error of 1 or more says nothing)",
                                 total)
            size = ladder_size(self.epsilon, self.step, self.submissions, self.delta)
            best = best_step(total, self.submissions, self.delta)
        except InputError as exc:
            self._set(error=str(exc))
            return
        self._set(size=size, best=best, error="")

    @param.depends("size")
    def curve(self, points: int = 200):
        """Labels against the step eta for the current total error (eps = total - eta).

        Steps whose count would pass the reporting limit are left out (NaN).
        """
        if self.size is None:
            return np.zeros(0), np.zeros(0)
        total = self.size.total_error
        eta = np.geomspace(total * 0.01, total * 0.95, points)
        try:
            counts = ladder_bounds.labels(total - eta, eta, self.size.submissions, self.size.delta)
        except InputError:
            counts = np.array([_count_or_nan(total - e, e, self.size.submissions, self.size.delta) for e in eta])
        return eta, np.asarray(counts, dtype=float)


def _count_or_nan(epsilon, step, submissions, delta) -> float:
    try:
        return float(ladder_bounds.labels(epsilon, step, submissions, delta))
    except InputError:
        return math.nan


class BoostingAttackModel(BackgroundJob):
    """The boosting attack simulation (Section 5 [1]_): its settings, progress and result.

    A :class:`~meter_dashboard.core.runtime.BackgroundJob`: ``run()`` runs to the end
    (notebooks, tests); ``await arun()`` runs in a worker thread so a page stays
    responsive, publishing ``progress``, ``status`` and ``seconds_left``, and stops at the
    next chunk of probes after ``cancel()`` (the curves computed so far are kept).

    References
    ----------
    .. [1] Lecture notes on the Ladder, Section 5 and Theorem 6.
    """

    labels = param.Integer(default=4000, bounds=(2, 10**6), softbounds=(100, 20_000),
                           doc="n, the test-set size the attacker probes.")
    submissions = param.Integer(default=400, bounds=(1, 10_000), softbounds=(10, 2000),
                                doc="K, the largest number of random probes.")
    variant = param.Selector(default="parameter_free", objects=list(ladder_bounds.LADDER_VARIANTS),
                             doc="Which Ladder defends the test set.")
    step = param.Number(default=0.01, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.001, 0.1),
                        doc="eta of the fixed-step Ladder.")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the simulation (same seed, same curves).")
    trials = param.Integer(default=5, bounds=(1, 200), softbounds=(1, 50), doc="Independent repetitions averaged.")

    result = param.ClassSelector(class_=AttackResult, default=None, allow_None=True, constant=True,
                                 doc="The curves of the last run (partial when it was cancelled).")

    @property
    def step_value(self) -> float | None:
        return None if self.variant == "parameter_free" else float(self.step)

    def reference(self) -> tuple[np.ndarray, np.ndarray]:
        """(k, 1/2 - sqrt(k/(2n))/pi) for k = 1..K at the current settings: the naive board's expected drift."""
        k = np.arange(1, self.submissions + 1)
        return k, np.asarray(ladder_bounds.boosting_reference(self.labels, k))

    def work(self, report, should_stop):
        """Run the attack chunk by chunk in the calling (worker) thread; stop at a chunk when asked.

        A complete run is seeded, so the same settings give the same curves: they are kept for the
        process (:data:`SHARED_ATTACKS`) and a later run with those settings (every page opened with
        the defaults) takes them instead of simulating again.
        """
        settings = {"labels": self.labels, "step": self.step_value, "seed": self.seed, "trials": self.trials}
        key = (self.labels, self.submissions, settings["step"], self.seed, self.trials)
        shared = SHARED_ATTACKS.get(key)
        if shared is not None:
            report(1.0, f"{shared.total:,} of {shared.total:,} probes")
            return shared
        curves = None
        for curves in ladder_bounds.iter_boosting_attack(self.labels, self.submissions, step=settings["step"],
                                                  seed=self.seed, trials=self.trials,
                                                  chunk=max(1, self.submissions // 20)):
            report(curves.done / curves.total, f"{curves.done:,} of {curves.total:,} probes")
            if should_stop():
                break
        if curves is None or not curves.done:
            return None
        result = summarize_attack(curves, **settings)
        if result.complete:
            SHARED_ATTACKS.put(key, result)
        return result

    def finish(self, result, cancelled: bool) -> str:
        """Keep the curves (also a cancelled run's) and say what happened."""
        if result is not None:
            with param.edit_constant(self):
                self.result = result
        done = 0 if result is None else result.done
        total = self.trials * self.submissions if result is None else result.total
        if cancelled or result is None:
            return f"Cancelled after {done:,} of {total:,} probes; the curves show what was computed."
        return f"Done: {result.trials} trial(s) of {result.submissions.size:,} probes on {result.labels:,} labels."

    async def arun(self, poll: float = 0.05):
        """:meth:`BackgroundJob.arun` publishing progress every 50 ms (a run often takes well under a second)."""
        return await super().arun(poll)
