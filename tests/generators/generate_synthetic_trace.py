"""Generate the session page's SYNTHETIC example trace (seeded, deterministic).

    python -m tests.generators.generate_synthetic_trace

writes ``synthetic_overfitting_trace.json`` in meter_dashboard/data; see
``synthetic_overfitting.md``.  Nothing here is real data: it simulates two developers
who overfit a validation set, the behaviour ease.ml/meter's signals are meant to reveal
(Hubis, Wu & Zhang 2019, Sections 3.2-3.4).

The simulation, step by step:

- Each model has a *true* accuracy (on the whole distribution) and a *validation quirk
  fit* u: how much better it looks on this particular 500-example validation set than
  it is.  Its validation accuracy is ``true + u`` (rounded to the validation set's
  1/500 grid); its test accuracy is a binomial draw over the 20,000-example test set.
- An ordinary step tries ``CANDIDATES`` small variations of the current model (tuning
  against the validation set) and keeps the one with the best validation accuracy.
  Real gains shrink as development goes on; each candidate's quirk fit inherits most of
  its parent's (``RHO``) plus fresh noise, and picking the maximum ratchets it up: the
  validation accuracy climbs while the test accuracy stalls, so the empirical
  overfitting |val - test| grows.
- A *bold* step (about one in five) tries one larger change; when it scores below the
  best validation accuracy so far the developer reverts it ("git revert HEAD",
  Section 5.3) and the next step continues from the previous model.
- Alice submits steps 1-12.  Bob then takes over Alice's model with a *fresh*
  validation set (as Section 3.4 suggests once overfitting is large): the quirk fit
  starts again from zero, and his own chain of signals starts again too.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[2] / "meter_dashboard" / "data"  # the shipped data folder
OUTPUT = HERE / "synthetic_overfitting_trace.json"
SEED = 150  # picked among seeds 0-599 so the 20 steps show each behaviour (see the .md)
VAL_SIZE = 500
TEST_SIZE = 20_000
STEPS = 20
HANDOVER = 12  # Alice submits steps 1..12, Bob 13..20
CANDIDATES = 12
RHO = 0.85  # how much of its parent's validation-quirk fit a candidate inherits
QUIRK_SD = 0.006  # fresh validation-quirk fit per candidate
BOLD_PROBABILITY = 0.15
#: The meter the simulated developers watch (the paper's five ranges): a bold change whose
#: signal jumps above the worst one so far in their chain is reverted.
METER_RANGES = (0.0, 0.005, 0.01, 0.02, 0.05, 1.0)


def simulate(seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    true, quirk = 0.780, 0.0
    best_val, worst_signal = -1.0, 0
    steps = []
    for step in range(1, STEPS + 1):
        tenant = "alice" if step <= HANDOVER else "bob"
        if step == HANDOVER + 1:  # Bob draws a fresh validation set
            quirk, best_val, worst_signal = 0.0, -1.0, 0
        bold = step > 2 and rng.random() < BOLD_PROBABILITY
        if bold:
            gains = rng.normal(-0.002, 0.012, 1)
            quirks = RHO * quirk + rng.normal(0.0, 3 * QUIRK_SD, 1)
            what = "bold change: new architecture"
        else:
            mean_gain = 0.010 * np.exp(-(step - 1) / 4.0)
            gains = rng.normal(mean_gain, 0.003, CANDIDATES)
            quirks = RHO * quirk + rng.normal(0.0, QUIRK_SD, CANDIDATES)
            what = f"tuned {CANDIDATES} variants on the validation set, kept the best"
        val = np.round((true + gains + quirks) * VAL_SIZE) / VAL_SIZE
        best = int(np.argmax(val))
        cand_true = float(np.clip(true + gains[best], 0.0, 1.0))
        test = rng.binomial(TEST_SIZE, cand_true) / TEST_SIZE
        signal = int(np.searchsorted(METER_RANGES, round(abs(val[best] - test), 12), side="right"))
        why = ""
        if bold and val[best] < best_val:
            why = " (reverted: validation accuracy dropped)"
        elif bold and signal > worst_signal:
            why = f" (reverted: the meter's signal jumped to {signal})"
        reverted = bool(why)
        if not reverted:
            worst_signal = max(worst_signal, signal)
            true, quirk = cand_true, float(quirks[best])
            best_val = max(best_val, float(val[best]))
        if step == HANDOVER + 1:
            what = "Bob takes over Alice's model with a fresh validation set; " + what
        entry = {
            "step": step,
            "tenant": tenant,
            "val_accuracy": round(float(val[best]), 4),
            "test_accuracy": round(float(test), 4),
            "reverted": reverted,
            "description": what + why,
        }
        steps.append(entry)
    return steps


def main() -> None:
    doc = {
        "name": "Synthetic: two developers who overfit the validation set",
        "synthetic": True,
        "generator": "python -m tests.generators.generate_synthetic_trace",
        "seed": SEED,
        "test_size": TEST_SIZE,
        "val_size": VAL_SIZE,
        "description": ("SYNTHETIC. Simulated development: each step keeps the candidate with the best "
                        "validation accuracy, so validation accuracy climbs while test accuracy stalls. "
                        "Bold changes that lose validation accuracy are reverted. Alice submits steps 1-12; "
                        "Bob continues from step 13 with a fresh validation set."),
        "steps": simulate(),
    }
    OUTPUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
