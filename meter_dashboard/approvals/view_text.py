"""The words and tables of the /approve page, as HTML (classes of ``dashboard.css``, no inline styles).

Every function takes model outputs (:class:`~meter_dashboard.approvals.model.ApprovalResult`,
:class:`~meter_dashboard.approvals.model.ApprovalComparison`, a simulation result) and returns
HTML; nothing is computed here beyond formatting (one precision rule: :mod:`.formatting`).
"""
from __future__ import annotations

import math

from ..core import formatting as fmt
from ..ui.style import esc, headline_html, headlines_html
from .model import EXAMPLES, METHOD_LABELS, METHODS

__all__ = ["METHOD_NOTES", "headlines", "sentence", "method_note", "decision_table", "compare_headlines",
           "compare_table", "simulation_table", "trace_note", "notes_html", "intro_html", "SIMULATION_TEXT"]

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


def _pending(text: str = "computing…") -> str:
    return f'<span class="approve-pending">{esc(text)}</span>'


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
    note = f'<div class="md-note approve-busy">{_pending("updating…")}</div>' if busy and result.complete else ""
    return headlines_html(cards, "approve-headlines") + note


def sentence(result) -> str:
    """One paragraph a reviewer can repeat."""
    label = esc(METHOD_LABELS[result.method])
    k = len(result.names)
    if not result.complete:
        return f"<p><b>{label}</b>: {result.decided} of {k} tests decided so far…</p>"
    approved = [i + 1 for i in range(k) if result.approved[i]]
    if approved:
        shown = ", ".join(str(i) for i in approved[:12]) + (" …" if len(approved) > 12 else "")
        last = approved[-1] - 1
        text = (f"<p><b>{label}</b> approves tests {shown}. Only these approve/deny bits are released to the "
                f"developer. The last approved modification, <b>{esc(result.names[last])}</b>, lowers the mean "
                f"loss by {fmt.number(result.estimates[last])} on the test set (margin "
                f"{fmt.number(result.margins[last])}).")
    else:
        text = f"<p><b>{label}</b> approves none of the {k} modifications; the original model stays."
    if result.method == "naive":
        text += (" <b>Warning:</b> the naive procedure tests everything at level α, so the chance of approving at "
                 "least one modification that is not really better grows with every test.")
    else:
        text += (f" Whatever path the developer takes through the {k} tests, the chance that any approved "
                 f"modification fails to beat its margin is at most α = {fmt.number(result.alpha)}.")
    return text + "</p>"


def method_note(method: str) -> str:
    return f'<div class="approve-method-note"><b>{esc(METHOD_LABELS[method])}.</b> {METHOD_NOTES[method]}</div>'


def decision_table(result) -> str:
    """One row per modification: the test's numbers and the decision (pending rows while computing)."""
    fs = result.method in ("fs-srgp", "pres-srgp")
    rows = []
    for i, name in enumerate(result.names):
        if i >= result.decided:
            rows.append(f"<tr><td class='num'>{i + 1}</td><td>{esc(name)}</td>"
                        f"<td colspan='{8 if fs else 7}'>{_pending()}</td></tr>")
            continue
        a = bool(result.approved[i])
        cells = [fmt.number(result.estimates[i]) + " ± " + fmt.number(result.standard_errors[i], 2),
                 fmt.number(result.margins[i]), fmt.number(result.z[i]), fmt.number(result.p_values[i]),
                 fmt.number(result.weights[i]), fmt.number(result.levels[i])]
        if fs:
            cells.append(fmt.number(result.z_thresholds[i]))
        row_class = " class='approve-row-yes'" if a else ""
        rows.append(f"<tr{row_class}><td class='num'>{i + 1}</td><td>{esc(name)}</td>"
                    + "".join(f"<td class='num'>{c}</td>" for c in cells)
                    + f"<td class='approve-decision {'approve-yes' if a else 'approve-no'}' data-test='{i + 1}' "
                    f"data-approved='{str(a).lower()}'>{'✔ approved' if a else 'denied'}</td></tr>")
    head = ("<tr><th>#</th><th>modification</th><th class='num'>loss improvement ± s.e.</th><th class='num'>margin "
            "δ</th><th class='num'>z</th><th class='num'>p-value</th><th class='num'>weight w</th>"
            "<th class='num'>level</th>" + ("<th class='num'>z to beat</th>" if fs else "") + "<th>decision</th></tr>")
    return (f"<div class='md-scroll-x'><table class='md-table'><thead>{head}</thead><tbody>{''.join(rows)}"
            "</tbody></table></div>")


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
    methods = [m for m in METHODS if m in comparison.results or m in comparison.pending]
    head = "<tr><th>#</th><th>modification</th>" + "".join(
        f"<th class='approve-method md-text method-{m}'>{esc(METHOD_LABELS[m])}</th>" for m in methods) + "</tr>"
    rows = []
    for i, name in enumerate(comparison.names):
        cells = []
        for m in methods:
            res = comparison.results.get(m)
            if res is None:
                cells.append(f"<td>{_pending('…')}</td>")
                continue
            a = bool(res.approved[i])
            cells.append(f"<td class='approve-decision approve-compare {'approve-yes' if a else 'approve-no'}' "
                         f"data-method='{m}' data-test='{i + 1}' data-approved='{str(a).lower()}'>"
                         f"{'✔' if a else '✗'} <span class='approve-small'>{fmt.number(res.levels[i], 2)}</span></td>")
        rows.append(f"<tr><td class='num'>{i + 1}</td><td>{esc(name)}</td>{''.join(cells)}</tr>")
    total = "<tr><td></td><td><b>approved</b></td>" + "".join(
        f"<td class='approve-compare'><b>{comparison.results[m].approvals}</b></td>" if m in comparison.results
        else f"<td>{_pending('…')}</td>" for m in methods) + "</tr>"
    return (f"<div class='md-scroll-x'><table class='md-table'><thead>{head}</thead><tbody>{''.join(rows)}{total}"
            "</tbody></table></div>")


def simulation_table(kind: str, res) -> str:
    """FWER (± Monte Carlo s.e.) and mean approvals per procedure, with what they mean."""
    if res is None:
        return ("<div class='md-note'>Not run yet. Each replicate re-runs the developer against every procedure; "
                "fsSRGP and presSRGP take most of the time (about a second per replicate for all six). The plots "
                "appear with the first result.</div>")
    rows = []
    for m in res.methods:
        f, e = res.fwer[m], res.fwer_error[m]
        if math.isnan(f):
            continue
        verdict = "—" if m == "naive" and kind == "power" else ("✔ at or below α" if f <= res.alpha + 2 * e
                                                                else "✗ above α")
        rows.append(f"<tr><td class='md-text method-{m}'><b>{esc(METHOD_LABELS[m])}</b></td>"
                    f"<td class='num approve-sim-fwer' data-method='{m}'>{fmt.number(f)}</td>"
                    f"<td class='num'>± {fmt.number(e)}</td><td class='num'>{fmt.number(res.approvals[m])}</td>"
                    f"<td>{verdict}</td></tr>")
    what = ("approving ≥ 1 modification (all are worse than the oracle)" if kind == "fwer" else
            "approving ≥ 1 modification whose fresh-data AUC gain is at most its margin")
    note = (f"<div class='md-note'>{res.completed} of {res.replicates} replicates"
            f"{' (cancelled)' if res.cancelled else ''}, seed {res.seed}, α = {fmt.number(res.alpha)}. FWER = rate "
            f"of {what}; ± one Monte Carlo standard error √(p(1−p)/replicates).</div>")
    return (note + "<table class='md-table'><thead><tr><th>procedure</th><th class='num'>FWER</th>"
            "<th class='num'>MC s.e.</th><th class='num'>mean approvals</th><th></th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def trace_note(model) -> str:
    """What is loaded: the file, its size, the prespecified plan."""
    t = model.trace
    if t is None:
        return ""
    desc = EXAMPLES[model.example][2] if model.example in EXAMPLES else "your file"
    pres = (f"prespecified plan: {esc(model.prespecified.source)} ({model.prespecified.modifications} modifications)"
            if model.prespecified is not None else "no prespecified plan (presSRGP unavailable)")
    return (f"<b>{esc(t.source)}</b>: {fmt.integer(t.modifications)} modifications × {fmt.integer(t.examples)} "
            f"test examples — {esc(desc)}.<br>{pres}.")


def intro_html() -> str:
    return ("<h2>Approve model modifications on a reused test set</h2>"
            "<p class='md-note'>A developer proposes modifications one after another; each is approved only if a "
            "one-sided test on the <i>same</i> test set shows it beats the original model by more than a margin δ. "
            "Only approve/deny is released. Feng et al., “Sequential algorithmic modification with test data "
            "reuse”: Bonferroni over the tree of possible histories, alpha recycling (SRGPs), correlation-aware "
            "fixed sequences and a prespecified plan keep the chance of approving <i>any</i> unacceptable "
            "modification below α.</p>")


def notes_html() -> str:
    """How it works: the test, the procedures, the choices where the paper is silent."""
    items = "".join(f"<li><b>{esc(METHOD_LABELS[m])}</b> — {METHOD_NOTES[m]}</li>" for m in METHODS)
    return f"""
<div class="md-note approve-about">
<h3>The test behind each decision</h3>
<p>Test j asks whether modification j lowers the expected loss of the original model by more than the margin
δ<sub>j</sub> (Eq. 7): H<sub>j</sub>: E[loss<sub>0</sub> − loss<sub>j</sub>] ≤ δ<sub>j</sub>. It is a one-sided
z-test on the per-example differences: z = (mean − δ<sub>j</sub>) / (sd/√n), p = 1 − Φ(z); the modification is
approved when p ≤ its level. After an approval the margin grows by the margin step — 0.01 by default, the
paper's schedule in all of Section 3 — so each approval must improve on the last; with a step of 0, a
modification only as good as the one just approved is approved again. Always comparing with the
<i>original</i> model is the paper's choice. The shipped examples use the AUC loss (1 − each example's AUC
influence value), so improvements are AUC gains. The page, notebooks and the command line use the same
defaults.</p>
<h3>Procedures</h3><ul>{items}</ul>
<h3>Choices where the paper is silent (documented in the code as well)</h3>
<ul>
<li>The start node carries weight 1 and counts as approved, so the first streak gets 0.8, 0.16, 0.032, …
(α = 0.1: levels 0.08, 0.016, 0.0032; after an approval at the first test, 0.064 for the next).</li>
<li>wBonferroni with T ≤ 4 has no history with more than 3 denials; then the first group gets all of α.</li>
<li>fsSRGP and presSRGP condition each threshold on at most 6 earlier nodes (configurable), chosen as those that
exclude the most probability. Conditioning on fewer nodes is conservative: by a union bound each threshold still
spends at most its share of α. Correlations are estimated from your per-example losses; statistics that are
identical are merged exactly.</li>
<li>Multivariate normal probabilities: one dimension in closed form, two by a deterministic integral, three or more
by Genz's method on a randomly shifted lattice with a fixed seed (the Seed setting); they agree with independent
computations to a few 10<sup>−4</sup> on the z scale.</li>
<li>presSRGP: 90% of α on the plan's nodes (half to the first, the rest equally), 10% on your tests; the plan's
confidence regions bound how much its improvement could be <i>over</i>estimated (the orientation in which the
correlation with your modifications buys power). Nothing about the plan is ever released.</li>
<li>The simulations follow Section 3 with our simplifications: X ~ N(0, I); the power developer waits one time
point after a denial instead of running a power calculation; fresh-data AUCs use 2,000–4,000 examples.</li>
</ul>
<h3>Reading a static trace</h3>
<p>Replaying several procedures on one recorded trace shows what each would have said about the same
modifications. A real developer's next modification depends on the answers, which is why the simulations re-run
the developer for every procedure.</p>
</div>"""
