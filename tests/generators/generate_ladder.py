"""Generate the Ladder's shipped example loss files (synthetic, seeded, deterministic).

    python -m tests.generators.generate_ladder

writes ``ladder_leaderboard.csv`` and ``ladder_ties.csv`` in meter_dashboard/data.  See
``ladder.md`` for what they contain.  Re-running produces byte-identical files.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[2] / "meter_dashboard" / "data"  # the shipped data folder
SEED = 20151006  # any fixed number; this one is the Ladder paper's arXiv month

#: (name, examples the submission fixes, examples it breaks), each relative to the
#: previous submission: a team's afternoon of tweaks, big steps and regressions.
LEADERBOARD = [
    ("baseline", None, None),
    ("augment", 70, 25),
    ("augment_lr", 12, 8),
    ("dropout", 40, 20),
    ("dropout_seed2", 15, 18),
    ("wider", 90, 30),
    ("wider_seed2", 10, 9),
    ("ensemble3", 60, 15),
    ("threshold045", 20, 12),
    ("threshold040", 9, 14),
    ("ensemble5", 30, 10),
    ("distill", 25, 40),
    ("pretrain", 120, 40),
    ("pretrain_tta", 14, 6),
    ("pretrain_ens", 35, 12),
]
EXAMPLES = 2000
BASELINE_ERRORS = 600


def leaderboard(seed: int = SEED) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    current = np.zeros(EXAMPLES, dtype=np.int8)
    current[rng.choice(EXAMPLES, BASELINE_ERRORS, replace=False)] = 1
    columns, names = [current.copy()], [LEADERBOARD[0][0]]
    for name, fix, brk in LEADERBOARD[1:]:
        wrong = np.flatnonzero(current == 1)
        right = np.flatnonzero(current == 0)
        current = current.copy()
        current[rng.choice(wrong, fix, replace=False)] = 0
        current[rng.choice(right, brk, replace=False)] = 1
        columns.append(current.copy())
        names.append(name)
    return names, np.column_stack(columns)


#: A 4-example board whose submissions land exactly on the thresholds (see ladder.md).
TIES = (
    ["first", "one_fix", "two_fixes", "swap", "perfect"],
    np.array([
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [0, 0, 0, 1, 0],
    ], dtype=np.int8),
)


def write(path: Path, names, losses) -> None:
    lines = [",".join(names)] + [",".join(str(int(v)) for v in row) for row in losses]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    write(HERE / "ladder_leaderboard.csv", *leaderboard())
    write(HERE / "ladder_ties.csv", *TIES)


if __name__ == "__main__":
    main()
