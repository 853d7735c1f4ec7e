"""The words and tables of the /approve page, as HTML (classes of ``dashboard.css``, no inline styles).

Every function takes model outputs (:class:`~meter_dashboard.approvals.model.ApprovalResult`,
:class:`~meter_dashboard.approvals.model.ApprovalComparison`, a simulation result) and returns
HTML; nothing is computed here beyond formatting (one precision rule: :mod:`meter_dashboard.core.formatting`).
"""
from __future__ import annotations

import functools
import math

from ..core import formatting as fmt
from ..core.html import Markup, render, snippet
from ..ui.exports import lead_markup
from ..ui.style import headline_html, headlines_html
from .model import EXAMPLES, METHOD_LABELS, METHODS
from .text import lead

__all__ = ["METHOD_NOTES", "EXAMPLE_LABELS", "decisions_html", "messages", "headlines", "sentence", "method_note", "decision_table", "compare_headlines",
           "compare_table", "simulation_table", "trace_note", "notes_html", "intro_html", "SIMULATION_TEXT"]

#: The shipped example traces as the page's trace menu names them.
EXAMPLE_LABELS = {"refits": "Refits on a data stream (15 modifications)",
                  "adversary": "Overfitting developer (50 modifications)"}

METHOD_NOTES = {
    "naive": "Every test at level α, with no correction (the paper's BinaryThres). With many tests an "
             "overfitting developer gets bad modifications approved; shown as the cautionary baseline, "
             "<b>it does not control the error rate</b>.",
    "bonferroni": "Every one of the 2<sup>T</sup> − 1 tests the developer could possibly run (the whole tree of "
                  "approve/deny histories) gets α/(2<sup>T</sup> − 1). Valid whatever the developer does, but "
                  "extremely conservative.",
    "weighted-bonferroni": "Histories with at most 3 denials share α/2 equally and all other histories share "
                           "the other α/2 (Section 3), so a developer whose modifications are mostly approved "
                           "gets far larger levels than with plain Bonferroni.",
    "bonf-srgp": "Alpha recycling (Section 2.2): the start and every approved modification pass their share of "
                 "α on to the tests that may follow — 80% to the next test, 80% of the rest to the one after, "
                 "and so on (the edge weight is configurable). Level = weight × α.",
    "fs-srgp": "bonfSRGP's weights, but within a run of denials the tests form a flexible fixed sequence "
               "(Section 2.3, Eq. 4): because the earlier, correlated tests of the run were denied, a test may use "
               "a larger level. Thresholds come from multivariate normal probabilities with the correlations of "
               "the per-example loss differences, estimated from your trace.",
    "pres-srgp": "Adds the modifications of a procedure you committed to in advance (e.g. 'refit on all data "
                 "every week') as extra nodes that are never tested, approved or reported (Section 2.4, Eqs. 5–6). "
                 "The more your actual modifications resemble the plan, the larger the levels. 90% of α goes to "
                 "the plan's nodes (half to the first), 10% to your tests, recycled like bonfSRGP.",
}

SIMULATION_TEXT = {
    "fwer": ("Error control: an adversarial developer (Section 3.1)",
             "The original model is the oracle, so every modification is worse and every approval is an error. "
             "The developer perturbs irrelevant coefficients by ±0.6 and, after an approval, keeps pushing in the "
             "same direction — overfitting the 100 reused test examples. The naive procedure should land far "
             "above α, every other procedure at or below it."),
    "power": ("Power: a developer refitting on a data stream (Section 3.2)",
              "The developer refits a logistic regression as new data arrive (10 examples per time point) and "
              "submits the refit; after a denial it waits one extra time point. Most modifications are real "
              "improvements; the margin grows by 0.01 AUC after each approval. More approvals = more power."),
}


def _pending(text: str = "computing…") -> Markup:
    return snippet('<span class="approve-pending">{{ text }}</span>', text=text)


def headlines(result, original_name: str, busy: bool) -> str:
    """The big numbers: approvals, the error guarantee, the first level, the model deployed now."""
    k = len(result.names)
    label = METHOD_LABELS[result.method]
    guard = "not controlled" if result.method == "naive" else f"≤ {fmt.number(result.alpha)}"
    if result.complete:
        count, count_sub = f"{result.approvals} of {k}", label
    else:
        count, count_sub = f"{result.approvals} of {result.decided}", f"{label}: deciding test {result.decided + 1} of {k}…"
    cards = [
        headline_html("Approved", count, count_sub, css_class="approve-count"),
        headline_html("Error rate (FWER)", guard, "P(approving ≥ 1 unacceptable modification)",
                      css_class="approve-fwer"),
        headline_html("Level of test 1", fmt.number(result.levels[0]) if result.decided else "—",
                      f"T = {fmt.integer(result.steps)} tests planned", css_class="approve-first-level"),
    ]
    if result.complete and k:
        approved = [i for i in range(k) if result.approved[i]]
        last = approved[-1] if approved else None
        cards.append(headline_html("Deployed now", result.names[last] if last is not None else original_name,
                                   f"after test {k}" if last is not None else "no modification approved",
                                   css_class="approve-deployed"))
    note = snippet('<div class="md-note approve-busy">{{ p }}</div>', p=_pending("updating…")) if busy and result.complete else ""
    return headlines_html(cards, "approve-headlines") + str(note)


def sentence(result) -> str:
    """One paragraph a reviewer can repeat."""
    k = len(result.names)
    approved = [i + 1 for i in range(k) if result.approved[i]] if result.complete else []
    last = approved[-1] - 1 if approved else None
    return render("approvals/templates/sentence.html", result=result, label=METHOD_LABELS[result.method], k=k,
                  approved=approved,
                  shown=", ".join(str(i) for i in approved[:12]) + (" …" if len(approved) > 12 else ""),
                  last_name=result.names[last] if last is not None else "",
                  last_estimate=result.estimates[last] if last is not None else 0.0,
                  last_margin=result.margins[last] if last is not None else 0.0)


def method_note(method: str) -> str:
    return render("approvals/templates/method_note.html", label=METHOD_LABELS[method], note=Markup(METHOD_NOTES[method]))


def decision_table(result) -> str:
    """One row per modification: the test's numbers and the decision (pending rows while computing)."""
    fs = result.method in ("fs-srgp", "pres-srgp")
    rows = []
    for i, name in enumerate(result.names):
        if i >= result.decided:
            rows.append({"name": name, "pending": True})
            continue
        cells = [fmt.number(result.estimates[i]) + " ± " + fmt.number(result.standard_errors[i], 2),
                 fmt.number(result.margins[i]), fmt.number(result.z[i]), fmt.number(result.p_values[i]),
                 fmt.number(result.weights[i]), fmt.number(result.levels[i])]
        if fs:
            cells.append(fmt.number(result.z_thresholds[i]))
        rows.append({"name": name, "pending": False, "approved": bool(result.approved[i]), "cells": cells})
    return render("approvals/templates/decision_table.html", rows=rows, fs=fs)


def decisions_html(result, original_name: str, busy: bool = False, left: str = "") -> dict[str, str]:
    """The decisions as the page shows them, part by part: its ``lead``, the ``headlines``, the ``sentence``, the
    procedure's ``method_note`` and the ``table`` (the live view's panes of those names, and a link's first response:
    the same words).  ``left``: how long the rest takes while the decisions come in (:func:`~.text.time_left`)."""
    return {"lead": lead_markup(lead(result, left), "approve"), "headlines": headlines(result, original_name, busy),
            "sentence": sentence(result), "method_note": method_note(result.method), "table": decision_table(result)}


def messages(error: str, url_errors) -> list[str]:
    """What the page says beside its procedure: the model's refusal, then each of the link's (``url_errors``)."""
    return ([error] if error else []) + [f"Link: {e}" for e in url_errors]


def compare_headlines(comparison) -> str:
    cards = []
    for m, res in comparison.results.items():
        guard = "FWER not controlled" if m == "naive" else f"FWER ≤ {fmt.number(res.alpha)}"
        cards.append(headline_html(METHOD_LABELS[m], f"{res.approvals} of {len(res.approved)}", guard,
                                   css_class=f"approve-compare-count approve-compare-{m}"))
    for m in comparison.pending:
        cards.append(headline_html(METHOD_LABELS[m], "…", "computing…", css_class="approve-pending"))
    for m, why in comparison.skipped.items():
        cards.append(headline_html(METHOD_LABELS[m], "—", why))
    return headlines_html(cards, "approve-compare-headlines")


def compare_table(comparison) -> str:
    """Decision and level of every procedure, side by side (pending procedures say so)."""
    methods = [{"key": m, "label": METHOD_LABELS[m], "result": comparison.results.get(m)}
               for m in METHODS if m in comparison.results or m in comparison.pending]
    return render("approvals/templates/compare_table.html", methods=methods, names=comparison.names)


def simulation_table(kind: str, res) -> str:
    """FWER (± Monte Carlo s.e.) and mean approvals per procedure, with what they mean."""
    rows = []
    for m in (res.methods if res is not None else []):
        f, e = res.fwer[m], res.fwer_error[m]
        if math.isnan(f):
            continue
        verdict = "—" if m == "naive" and kind == "power" else ("✔ at or below α" if f <= res.alpha + 2 * e
                                                                else "✗ above α")
        rows.append({"key": m, "label": METHOD_LABELS[m], "fwer": f, "error": e, "approvals": res.approvals[m],
                     "verdict": verdict})
    what = ("approving ≥ 1 modification (all are worse than the oracle)" if kind == "fwer" else
            "approving ≥ 1 modification whose fresh-data AUC gain is at most its margin")
    return render("approvals/templates/simulation_table.html", res=res, rows=rows, what=what)


def trace_note(model) -> str:
    """What is loaded: the file, its size, the prespecified plan."""
    if model.trace is None:
        return ""
    return render("approvals/templates/trace_note.html", trace=model.trace, prespecified=model.prespecified,
                  description=EXAMPLES[model.example][2] if model.example in EXAMPLES else "your file")


@functools.lru_cache(maxsize=1)
def intro_html() -> str:
    """The page's opening paragraph (the same for everyone: rendered once per process)."""
    return render("approvals/templates/intro.html")


@functools.lru_cache(maxsize=1)
def notes_html() -> str:
    """How it works: the test, the procedures, the choices where the paper is silent (rendered once per process)."""
    return render("approvals/templates/notes.html",
                  methods=[{"label": METHOD_LABELS[m], "note": Markup(METHOD_NOTES[m])} for m in METHODS])
