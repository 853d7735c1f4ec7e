"""Leaderboards with the Ladder: replays, label counts and the boosting attack (models).

Plain functions returning small result objects, for notebooks and the CLI:

>>> import meter_dashboard.models.ladder as ml
>>> table = ml.load_example("ladder_leaderboard.csv")
>>> result = ml.ladder(table)                 # parameter-free Ladder
>>> result.scores[:3]                          # doctest: +SKIP
>>> ml.ladder_size(epsilon=0.05, step=0.05, submissions=100, delta=0.05).labels
40343

and ``param`` models holding what a person chose (no widgets), driven the same way by
notebooks, the CLI and the dashboard: :class:`LadderReplayModel`,
:class:`LadderSizeModel`, :class:`BoostingAttackModel`.  Invalid input keeps the last
good result and sets the model's ``error`` message.

The mathematics is in :mod:`meter_dashboard.bounds.ladder`.
"""
from __future__ import annotations

import asyncio
import csv
import io
import math
import os
from dataclasses import dataclass, field
from importlib import resources

import numpy as np
import param

from .._files import read_text
from .._validation import InputError, check_int, check_probability
from ..bounds import ladder as bounds

__all__ = [
    "LADDER_EXAMPLES",
    "LossTable",
    "read_losses",
    "parse_losses",
    "load_example",
    "example_path",
    "LadderResult",
    "ladder",
    "LadderSize",
    "ladder_size",
    "best_step",
    "AttackResult",
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


# --------------------------------------------------------------------------- reading files


def csv_rows(text: str):
    """``[(line number, cells)]`` of the non-blank rows of a CSV text, cells stripped."""
    reader = csv.reader(io.StringIO(text))
    rows = []
    try:
        for cells in reader:
            if not cells or all(c.strip() == "" for c in cells):
                continue
            rows.append((reader.line_num, [c.strip() for c in cells]))
    except csv.Error as exc:
        raise InputError("file", "a valid CSV file", str(exc), location=f"line {reader.line_num}") from None
    return rows


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

    def __repr__(self) -> str:
        return (f"LossTable({self.submissions} submissions x {self.examples:,} test examples"
                + (f", from {self.source!r}" if self.source else "") + ")")


def parse_losses(text: str, source: str = "") -> LossTable:
    """Parse a per-example loss CSV: header = submission names, one row per test example.

    Every value must be a number in [0, 1].  Errors name the line and the column.
    """
    rows = csv_rows(text)
    if not rows:
        raise InputError("losses file", "a CSV with a header row of submission names and one row per test example",
                         "an empty file", location=source or None)
    header_line, names = rows[0]
    for j, name in enumerate(names):
        if name == "":
            raise InputError("submission name", "a non-empty header cell", name,
                             location=f"line {header_line}, column {j + 1}")
        try:
            float(name)
        except ValueError:
            pass
        else:
            raise InputError("header", "a row of submission names (the first row is a number: is the header missing?)",
                             name, location=f"line {header_line}, column {j + 1}")
    seen = {}
    for j, name in enumerate(names):
        if name in seen:
            raise InputError("submission names", f"unique ({name!r} is also column {seen[name] + 1})", name,
                             location=f"line {header_line}, column {j + 1}")
        seen[name] = j
    data = rows[1:]
    if not data:
        raise InputError("losses file", "at least one row of losses below the header", "only a header",
                         location=source or None)
    k = len(names)
    for line, cells in data:
        if len(cells) != k:
            raise InputError("row", f"{k} values, one per submission ({', '.join(names[:4])}"
                             + (", ..." if k > 4 else "") + ")", f"{len(cells)} values", location=f"line {line}")
    cells = [c for _, c in data]
    try:
        arr = np.array(cells, dtype=float)
    except ValueError:
        arr = None
    if arr is None or not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        for line, row in data:
            for j, cell in enumerate(row):
                try:
                    value = float(cell)
                except ValueError:
                    value = math.nan
                if not (0.0 <= value <= 1.0):
                    raise InputError("loss", "a number in [0, 1]", cell, location=f"line {line}, column {j + 1} "
                                     f"({names[j]})")
    return LossTable(names=tuple(names), losses=arr, source=source)


def read_losses(source) -> LossTable:
    """Read a per-example loss CSV from a path, bytes (an upload) or an open file."""
    text, name = read_text(source, parameter="losses")
    return parse_losses(text, name)


def data_file(name: str, examples) -> "resources.abc.Traversable":
    """The shipped data file ``name``, one of ``examples`` (package data)."""
    path = resources.files("meter_dashboard").joinpath("data", str(name))
    if name not in examples or not path.is_file():
        raise InputError("example", "one of " + ", ".join(examples), name)
    return path


def example_path(name: str):
    """The shipped example ``name`` (a ``Traversable``; ``open()``/``read_bytes()`` work)."""
    return data_file(name, LADDER_EXAMPLES)


def load_example(name: str = "ladder_leaderboard.csv") -> LossTable:
    """A shipped example loss table (see :data:`LADDER_EXAMPLES`)."""
    return parse_losses(example_path(name).read_text(encoding="utf-8"), name)


# --------------------------------------------------------------------------- replay
def _variant(step) -> str:
    return "parameter_free" if step is None else "fixed_step"


@dataclass(repr=False)
class LadderResult:
    """What the Ladder and a naive leaderboard publish for each submission.

    ``scores[t]`` is the Ladder's released score after submission t, ``naive[t]`` the
    exact empirical loss a naive board would show, ``improved[t]`` whether the Ladder
    released a new score at t, ``thresholds[t]`` what ``naive[t]`` had to beat.
    """

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


def _as_table(losses) -> LossTable:
    if isinstance(losses, LossTable):
        return losses
    if isinstance(losses, (str, os.PathLike, bytes, bytearray)) or hasattr(losses, "read"):
        return read_losses(losses)
    if hasattr(losses, "columns") and hasattr(losses, "to_numpy"):  # a DataFrame
        arr = np.asarray(losses.to_numpy(), dtype=float)
        return LossTable(names=tuple(str(c) for c in losses.columns), losses=arr, source="DataFrame")
    arr = np.asarray(losses, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    return LossTable(names=tuple(f"submission {i + 1}" for i in range(arr.shape[1])), losses=arr)


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
    """
    table = _as_table(losses)
    replay = bounds.replay(table.losses, step)
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

    def to_dict(self) -> dict:
        return {"labels": int(self.labels), "epsilon": self.epsilon, "step": self.step,
                "total_error": self.total_error, "submissions": self.submissions, "delta": self.delta}

    def __repr__(self) -> str:
        return (f"LadderSize(labels={self.labels:,}: {self.submissions:,} submissions, leaderboard error "
                f"<= {self.epsilon:.4g} + {self.step:.4g} with confidence {1 - self.delta:.4g})")


def ladder_size(epsilon: float, step: float, submissions: int, delta: float) -> LadderSize:
    """Test labels so the Ladder's leaderboard error stays within epsilon + step (Lemma 4)."""
    epsilon = check_probability("epsilon", epsilon)
    step = bounds._check_step(step)
    if step is None:
        raise InputError("step", "a number in (0, 1]", step)
    submissions = check_int("submissions", submissions, minimum=1)
    delta = check_probability("delta", delta)
    return LadderSize(labels=int(bounds.labels(epsilon, step, submissions, delta)), epsilon=epsilon, step=step,
                      submissions=submissions, delta=delta)


def best_step(total_error: float, submissions: int, delta: float) -> LadderSize:
    """The split of ``total_error`` into epsilon + step that needs the fewest labels."""
    eta, eps, n = bounds.best_step(total_error, submissions, delta)
    return LadderSize(labels=int(n), epsilon=eps, step=eta, submissions=int(submissions), delta=float(delta))


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
    curves: bounds.AttackCurves | None = field(default=None)

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


def _summarize(curves: bounds.AttackCurves, labels, step, seed, trials) -> AttackResult:
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
        reference=bounds.boosting_reference(labels, curves.submissions), done=curves.done, total=curves.total,
        curves=curves)


def boosting_attack(labels: int = 4000, submissions: int = 400, *, step: float | None = None, seed: int = 0,
                    trials: int = 1, progress=None) -> AttackResult:
    """Simulate the boosting attack (Section 5) against a naive board and the Ladder.

    See :func:`meter_dashboard.bounds.ladder.iter_boosting_attack`.  ``progress(done,
    total)`` is called as it runs; returning ``False`` cancels (partial result).
    """
    curves = bounds.boosting_attack(labels, submissions, step=step, seed=seed, trials=trials, progress=progress)
    return _summarize(curves, labels, step, seed, trials)


# --------------------------------------------------------------------------- param models
class LadderReplayModel(param.Parameterized):
    """A loss file replayed through the Ladder: what a person chose and what follows."""

    example = param.Selector(default="ladder_leaderboard.csv", objects=list(LADDER_EXAMPLES) + ["uploaded file"],
                             doc="The loss file: a shipped example or the last uploaded file.")
    variant = param.Selector(default="parameter_free", objects=list(bounds.LADDER_VARIANTS),
                             doc="parameter_free: Algorithm 2 (no step to choose); fixed_step: Algorithm 1 with "
                                 "step eta.")
    step = param.Number(default=0.01, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.001, 0.1),
                        step=0.001, doc="eta, the fixed step of Algorithm 1 (a released score is a multiple of it).")
    delta = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, False), softbounds=(0.001, 0.2),
                         doc="1 - confidence for the leaderboard-error guarantee of these labels.")

    table = param.ClassSelector(class_=LossTable, default=None, allow_None=True, doc="The loaded losses.")
    result = param.ClassSelector(class_=LadderResult, default=None, allow_None=True, constant=False,
                                 doc="The replay of the current table.")
    error = param.String(default="", doc="Why the last input was refused ('' when all is well).")

    def __init__(self, losses=None, **params):
        super().__init__(**params)
        if losses is not None:
            self.load(losses)
        else:
            self._load_example()

    @param.depends("example", watch=True)
    def _load_example(self):
        if self.example == "uploaded file":
            return
        try:
            self.table = load_example(self.example)
        except InputError as exc:
            self.error = str(exc)

    def load(self, source, name: str | None = None) -> bool:
        """Load losses from a path, bytes (an upload), a DataFrame or an array.

        Returns True on success; on failure keeps the last good table and sets ``error``.
        """
        try:
            if isinstance(source, (bytes, bytearray)):
                table = parse_losses(read_text(source, parameter="losses")[0], name or "uploaded file")
            else:
                table = _as_table(source)
                bounds.replay(table.losses[:, :1], 0.5)  # validates shape and range
        except InputError as exc:
            self.error = str(exc)
            return False
        except (OSError, ValueError) as exc:
            self.error = f"cannot read {name or 'the file'}: {exc}"
            return False
        self.param.update(example="uploaded file", table=table)
        return True

    @property
    def step_value(self) -> float | None:
        """The step passed to the mechanism: None for the parameter-free Ladder."""
        return None if self.variant == "parameter_free" else float(self.step)

    @param.depends("table", "variant", "step", watch=True, on_init=True)
    def _replay(self):
        if self.table is None:
            return
        try:
            self.result = ladder(self.table, self.step_value)
        except InputError as exc:
            self.error = str(exc)
            return
        self.error = ""

    @param.depends("result", "delta")
    def guarantee(self) -> tuple[float, float, float] | None:
        """Lemma 4 for this test set: (smallest eps + eta, eta, eps) for its k submissions."""
        if self.result is None:
            return None
        return bounds.leaderboard_error(self.result.examples, self.result.submissions, self.delta)


class LadderSizeModel(param.Parameterized):
    """Lemma 4 as a planner: labels from (epsilon, step, submissions, delta), and the best step."""

    epsilon = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, False),
                           softbounds=(0.005, 0.2), step=0.005, doc="eps, the statistical part of the error.")
    step = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.005, 0.2),
                        step=0.005, doc="eta, the Ladder's step (the rounding part of the error).")
    submissions = param.Integer(default=100, bounds=(1, None), softbounds=(1, 10_000),
                                doc="k, the submissions the leaderboard must support.")
    delta = param.Number(default=0.05, bounds=(0.0, 1.0), inclusive_bounds=(False, False), softbounds=(0.001, 0.2),
                         doc="1 - confidence.")

    size = param.ClassSelector(class_=LadderSize, default=None, allow_None=True, doc="labels for the inputs")
    best = param.ClassSelector(class_=LadderSize, default=None, allow_None=True,
                               doc="the split of the same total error eps + eta needing the fewest labels")
    error = param.String(default="")

    @param.depends("epsilon", "step", "submissions", "delta", watch=True, on_init=True)
    def _solve(self):
        try:
            size = ladder_size(self.epsilon, self.step, self.submissions, self.delta)
            total = self.epsilon + self.step
            if total >= 1:
                raise InputError("epsilon + step", "less than 1 (a leaderboard error of 1 or more says nothing)",
                                 total)
            best = best_step(total, self.submissions, self.delta)
        except InputError as exc:
            self.error = str(exc)
            return
        self.error = ""
        self.param.update(size=size, best=best)

    @param.depends("size")
    def curve(self, points: int = 200):
        """Labels against the step eta for the current total error (eps = total - eta)."""
        if self.size is None:
            return np.zeros(0), np.zeros(0)
        total = self.size.total_error
        eta = np.geomspace(total * 0.01, total * 0.95, points)
        return eta, np.asarray(bounds.labels(total - eta, eta, self.size.submissions, self.size.delta), dtype=float)


class BoostingAttackModel(param.Parameterized):
    """The boosting attack simulation: its settings, its progress and its result.

    ``run()`` runs to the end (notebooks, tests); ``await arun()`` runs chunk by chunk
    in a worker thread so a page stays responsive, and stops at the next chunk after
    ``cancel()``.
    """

    labels = param.Integer(default=4000, bounds=(2, 10**6), softbounds=(100, 20_000),
                           doc="n, the test-set size the attacker probes.")
    submissions = param.Integer(default=400, bounds=(1, 10_000), softbounds=(10, 2000),
                                doc="K, the largest number of random probes.")
    variant = param.Selector(default="parameter_free", objects=list(bounds.LADDER_VARIANTS),
                             doc="Which Ladder defends the test set.")
    step = param.Number(default=0.01, bounds=(0.0, 1.0), inclusive_bounds=(False, True), softbounds=(0.001, 0.1),
                        doc="eta of the fixed-step Ladder.")
    seed = param.Integer(default=0, bounds=(0, None), doc="Seed of the simulation (same seed, same curves).")
    trials = param.Integer(default=5, bounds=(1, 200), softbounds=(1, 50), doc="Independent repetitions averaged.")

    progress = param.Number(default=0.0, bounds=(0.0, 1.0), doc="Fraction of the simulation done.")
    running = param.Boolean(default=False, doc="A simulation is under way.")
    status = param.String(default="", doc="One line on what happened last.")
    result = param.ClassSelector(class_=AttackResult, default=None, allow_None=True)
    error = param.String(default="")

    def __init__(self, **params):
        super().__init__(**params)
        self._cancel = False

    @property
    def step_value(self) -> float | None:
        return None if self.variant == "parameter_free" else float(self.step)

    def _iterator(self):
        return bounds.iter_boosting_attack(self.labels, self.submissions, step=self.step_value, seed=self.seed,
                                           trials=self.trials, chunk=max(1, self.submissions // 20))

    def _finish(self, curves, cancelled: bool):
        if curves is not None and curves.done:
            self.result = _summarize(curves, self.labels, self.step_value, self.seed, self.trials)
        done = 0 if curves is None else curves.done
        total = self.trials * self.submissions
        if cancelled:
            self.status = f"Cancelled after {done:,} of {total:,} probes; the curves show what was computed."
        else:
            self.status = f"Done: {self.trials} trial(s) of {self.submissions:,} probes on {self.labels:,} labels."
        self.running = False

    def cancel(self) -> None:
        """Stop the running simulation at its next chunk (the partial result is kept)."""
        self._cancel = True

    def run(self) -> AttackResult | None:
        """Run the simulation synchronously; returns the result."""
        self._cancel = False
        self.param.update(running=True, progress=0.0, error="", status="Running...")
        curves = None
        try:
            for curves in self._iterator():
                self.progress = curves.done / curves.total
                if self._cancel:
                    break
        except InputError as exc:
            self.param.update(error=str(exc), running=False, status="")
            return self.result
        self._finish(curves, self._cancel)
        return self.result

    async def arun(self) -> AttackResult | None:
        """Run chunk by chunk in a worker thread, updating ``progress``; honours :meth:`cancel`."""
        if self.running:
            return self.result
        self._cancel = False
        self.param.update(running=True, progress=0.0, error="", status="Running...")
        curves = None
        try:
            iterator = self._iterator()
            sentinel = object()
            while True:
                step = await asyncio.to_thread(next, iterator, sentinel)
                if step is sentinel:
                    break
                curves = step
                self.progress = curves.done / curves.total
                if self._cancel:
                    break
        except InputError as exc:
            self.param.update(error=str(exc), running=False, status="")
            return self.result
        self._finish(curves, self._cancel)
        return self.result
