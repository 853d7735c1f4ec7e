"""The /ci page's HTML, built from a result or a replay (the page, and its first response).

Every function returns markup as ``str`` from the family's templates (``ci/templates``):
the headline cards, the sentence, the table per adaptivity, the clause breakdown, the
assumptions, and a replay's summary and table.  No widgets, no state.
"""
from __future__ import annotations

from ..core import formatting as fmt
from ..core.html import Markup, render, snippet
from ..ui.style import HTML, PALETTE, headline_html, headlines_html, swatch_html
from . import ADAPTIVITIES, ADAPTIVITY_TITLES, ASSUMPTIONS, RESULT_FALSE, RESULT_TRUE, TEXT_ROUNDING_NOTE

#: One colour per adaptivity, shared by the plot and the tables.
ADAPTIVITY_COLORS = {"none": PALETTE[2], "full": PALETTE[0], "firstChange": PALETTE[1]}
#: Commits shown in the replay table (the rest are summarized; the plot shows all).
TABLE_ROWS = 200

#: What a clause's truth or a commit's signal shows as: (class, label).
_BADGES = {"pass": ("pass", "✓ pass"), "fail": ("fail", "✗ fail"), RESULT_TRUE: ("pass", RESULT_TRUE),
           RESULT_FALSE: ("fail", RESULT_FALSE)}


def html_pane(text: str = "", **kwargs) -> HTML:
    """An HTML pane (with the dashboard's stylesheet) as wide as its column."""
    kwargs.setdefault("sizing_mode", "stretch_width")
    return HTML(text, **kwargs)


def sentence_html(r) -> str:
    """The result's sentence (the page, and its first response)."""
    return str(snippet('<p class="md-sentence">{{ text }}</p>', text=r.sentence()))


def headline_cards(r) -> str:
    """The headline numbers (the page, and its first response)."""
    sub = f"{r.adaptivity} adaptivity · {fmt.hours(r.labeler_hours)} of labeling"
    if r.bound == "binomial":
        hoeffding = r.hoeffding[r.adaptivity]["labels"]
        sub = f"exact binomial · Hoeffding: {fmt.integer(hoeffding)} · {fmt.hours(r.labeler_hours)}"
    cards = [headline_html("Labels · baseline", fmt.integer(r.labels), sub, "ci-labels")]
    if r.optimized is not None:
        sub = ("no labels: unlabeled examples suffice" if r.optimized == 0 else
               f"{r.saving:,.1f}× fewer · {fmt.hours(r.optimized_labeler_hours)}")
        cards.append(headline_html("Labels · optimized", fmt.integer(r.optimized), sub, "ci-optimized"))
        per = "—" if r.labels_per_commit is None else fmt.integer(r.labels_per_commit)
        per_sub = ("needs a clause n − o with a variance bound" if r.labels_per_commit is None
                   else f"active labeling · {fmt.hours(r.per_commit_hours)} per commit")
        cards.append(headline_html("Labels per commit", per, per_sub, "ci-labels-per-commit"))
        unl_sub = "for the clauses over d" if r.unlabeled else "none needed"
        if r.unlabeled and r.difference_bound is not None and "checked" in r.variance_source:
            unl_sub = "to check p and the clauses over d"
        cards.append(headline_html("Unlabeled examples", fmt.integer(r.unlabeled), unl_sub, "ci-unlabeled"))
    return headlines_html(cards)


def assumptions_html(r) -> str:
    notes = list(ASSUMPTIONS)
    if r.variance_bound is not None:
        notes.append(f"Bennett's inequality for n − o uses the variance bound p = {r.variance_bound:g} "
                     f"from the {r.variance_source} (Sections 4.1–4.2).")
    notes += [n for n in r.notes if not n.startswith("Variance bound")]
    notes.append(TEXT_ROUNDING_NOTE)
    notes.append("Labels per commit with active labeling cover the whole H-step guarantee; the paper's 2,188 "
                 "(Section 4.1.2) is the same formula for a single commit (H = 1): ⌈2,188.85⌉ = 2,189.")
    return render("ci/templates/assumptions.html", notes=notes)


def _adaptivity_row(r, a: str) -> dict:
    v = r.by_adaptivity[a]
    row = {"name": a, "chosen": a == r.adaptivity, "labels": v["labels"],
           "swatch": Markup(swatch_html(f"palette-{PALETTE.index(ADAPTIVITY_COLORS[a])}")),
           "union": ADAPTIVITY_TITLES[a].split("(", 1)[1].rstrip(")")}
    if r.bound == "binomial":
        h = r.hoeffding[a]["labels"]
        row.update(hoeffding=h, fewer="—" if h is None or v["labels"] is None else fmt.percent(1 - v["labels"] / h))
    if r.optimized is not None:
        row.update(optimized=v["optimized"], per_commit=v["labels_per_commit"],
                   saving="—" if not v["optimized"] or v["labels"] is None else f"{v['labels'] / v['optimized']:,.1f}×")
    return row


def adaptivity_table_html(r) -> str:
    return render("ci/templates/adaptivity_table.html", exact=r.bound == "binomial", optimized=r.optimized is not None,
                  rows=[_adaptivity_row(r, a) for a in ADAPTIVITIES])


_METHODS = {
    "hoeffding": "Hoeffding (Section 3.1)",
    "binomial": "exact binomial tail (Section 4.3)",
    "bennett": "Bennett with p (Section 4.1)",
    "unlabeled": "unlabeled examples (no labels)",
}


def clause_table_html(r) -> str:
    clauses = [{"clause": c.clause, "baseline": c.baseline, "optimized": c.optimized,
                "tolerances": ", ".join(f"{k} ± {float(v):.4g}" for k, v in c.tolerances.items()),
                "how": _METHODS.get(c.method, c.method)} for c in r.clauses]
    return render("ci/templates/clause_table.html", adaptivity=r.adaptivity, optimized=r.optimized is not None,
                  clauses=clauses)


def replay_summary_html(rep, m) -> str:
    alarms = []
    for a in ADAPTIVITIES:
        found = rep.alarms(a)
        alarms.append({"name": a, "count": len(found),
                       "after": ", ".join(str(x) for x in found[:12]) + (" …" if len(found) > 12 else "")})
    need = (rep.required.get("optimized") or rep.required.get("labels")) if rep.examples is not None else None
    return render("ci/templates/replay_summary.html",
                  source=m.trace.source if m.trace is not None and m.trace.source else "the trace", commits=len(rep),
                  passes=rep.passes, mode=rep.mode, alarms=alarms, adaptivity=m.adaptivity, examples=rep.examples,
                  need=need, warnings=list(rep.warnings))


def replay_table_html(rep) -> str:
    shown = rep.head(TABLE_ROWS)
    return render("ci/templates/replay_table.html", clauses=rep.condition.split(" /\\ "), rows=shown,
                  has_dis=rep.columns["disagreements"] is not None, adaptivities=ADAPTIVITIES, badges=_BADGES,
                  shown=len(shown), total=len(rep))
