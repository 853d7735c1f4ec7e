"""Generate the P(A>B) page's shipped example runs files (synthetic, seeded, deterministic).

    python -m tests.generators.generate_compare

writes ``compare_paired.csv``, ``compare_many_runs.csv`` and ``compare_unpaired.csv``
in meter_dashboard/data; see ``compare.md``.  Each run's accuracy is drawn as in Section 4.2
of Bouthillier et al. (2021): normal around the pipeline's mean, with a shared per-run
effect (the seeds/split both pipelines use) when runs are paired.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[2] / "meter_dashboard" / "data"  # the shipped data folder
SEED = 2021


def paired(rng, runs, base, gain, shared_sd, own_sd):
    """Accuracies of A and B on the same ``runs`` seeds/splits."""
    shared = rng.normal(0.0, shared_sd, runs)
    a = base + gain + shared + rng.normal(0.0, own_sd, runs)
    b = base + shared + rng.normal(0.0, own_sd, runs)
    return np.round(a, 4), np.round(b, 4)


def write(path: Path, a, b) -> None:
    lines = ["run,a,b"]
    for i in range(max(len(a), len(b))):
        ca = f"{a[i]:.4f}" if i < len(a) else ""
        cb = f"{b[i]:.4f}" if i < len(b) else ""
        lines.append(f"{i + 1},{ca},{cb}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    rng = np.random.default_rng(SEED)
    # A clearly better: P(A>B) about Phi(0.004 / (0.003 sqrt 2)) = 0.83 (paper's recommended N = 29 -> 30 runs).
    write(HERE / "compare_paired.csv", *paired(rng, 30, 0.912, 0.004, 0.004, 0.003))
    # Many runs, small gain: P(A>B) about Phi(0.0013 / (0.003 sqrt 2)) = 0.62: significant, not meaningful.
    write(HERE / "compare_many_runs.csv", *paired(rng, 400, 0.912, 0.0013, 0.004, 0.003))
    # Unpaired runs of unequal count, no shared effect: random pairing, small gain.
    a = np.round(0.851 + 0.002 + rng.normal(0.0, 0.006, 20), 4)
    b = np.round(0.851 + rng.normal(0.0, 0.006, 25), 4)
    write(HERE / "compare_unpaired.csv", a, b)


if __name__ == "__main__":
    main()
