"""The session page's HTML, from Jinja2 templates with autoescape (``session/templates/``), no Panel.

Each function renders one piece of the page from a
:class:`~meter_dashboard.session.replay.ReplayResult` and the position shown; the words and
numbers come from :mod:`meter_dashboard.session.text` (the HTML report says the same).  Every
value is escaped by the template engine (:mod:`meter_dashboard.core.html`): a trace's name,
tenants or descriptions can never become markup.
"""
from __future__ import annotations

import functools

from ..core import formatting as fmt
from ..core.colors import SIGNAL_COLORS
from ..core.html import Markup, render, snippet
from . import text
from .replay import replay_defaults

__all__ = ["title_html", "cards_html", "answer_html", "alarms_html", "steps_table_html", "notes_html",
           "status_html", "error_html", "refusal_html", "ALARMS_SHOWN"]

#: Alarms and notes listed on the page (the report lists them all).
ALARMS_SHOWN = 40
_T = "session/templates/"


def title_html(result) -> str:
    t = result.trace
    reverted = t.revert_steps
    shown = ", ".join(map(str, reverted[:12])) + (" …" if len(reverted) > 12 else "")
    return render(_T + "title.html", t=t, steps=len(t), reverted=shown,
                  tenants=", ".join(t.tenant_names[:12]) if t.has_tenants else "")


def cards_html(result, index: int) -> str:
    """Step, steps used, gap, both signals, and what the test set guarantees (:func:`text.guarantee_at`)."""
    d = result.step(index)
    t = result.trace
    tenant = d["tenant"]
    tenant_part = ""
    if tenant and d["tenant_budget"] is not None:
        tenant_part = f" · {tenant}: {fmt.integer(d['tenant_steps_used'])} of {fmt.integer(d['tenant_budget'])}"
    elif tenant:
        tenant_part = f" · {tenant}: {fmt.integer(d['tenant_steps_used'])} steps"
    lo, hi = d["signal_range"]
    ilo, ihi = d["incremental_range"]
    cards = [
        dict(label="Step", value=str(d["step"]), css="session-step",
             sub=f"{tenant + ' · ' if tenant else ''}position {fmt.integer(d['position'])} of {fmt.integer(len(result))}"
                 + (" · reverted" if d["reverted"] else "")),
        dict(label="Steps used", value=f"{fmt.integer(d['steps_used'])} / {fmt.integer(result.budget)}",
             css="session-used", sub=f"{text.budget_text(result)}{tenant_part}"
                                     + ("" if d["within_budget"] else " · beyond budget")),
        dict(label="Empirical overfitting", value=fmt.number(d["empirical_overfitting"]), css="session-gap",
             sub=f"|{fmt.number(d[t.val_column])} − {fmt.number(d[t.test_column])}|"),
        dict(label="Regular signal", value=str(d["signal"]), css="meter-signal",
             sub=f"this step: {text.range_text(lo, hi)}"),
        dict(label="Incremental signal", value=str(d["incremental_signal"]), css="meter-incremental-signal",
             sub=f"worst so far{' (' + tenant + ')' if tenant else ''}: {text.range_text(ilo, ihi)}"),
        text.steps_left_card(result),
    ]
    return render(_T + "cards.html", cards=cards, guarantee=Markup(text.guarantee_at(result, index).html()))


def answer_html(result, index: int) -> str:
    """The sentence (only what holds), what the signal means for the team, and the labels needed."""
    g = text.guarantee_at(result, index)
    meaning = text.signal_meaning(g.signal, result.settings["ranges"], g.holds, g.delta)
    return render(_T + "answer.html", sentence=text.sentence(result, index), signal=g.signal, meaning=meaning,
                  needed=text.needed_text(result), steps_left=text.steps_left_text(result))


def alarms_html(result, index: int) -> str:
    return render(_T + "alarms.html", items=result.alarms_until(index), limit=ALARMS_SHOWN)


def steps_table_html(result, index: int) -> str:
    """The window of :data:`text.TABLE_ROWS` steps around ``index``."""
    t = result.trace
    lo, hi = text.table_window(len(result), index)
    rows = []
    for i in range(lo, hi):
        c = text.step_row(result, i)
        c["row_class"] = " ".join(k for k, on in (("session-current", i == index), ("session-beyond", c["beyond"]))
                                  if on)
        rows.append(c)
    return render(_T + "steps_table.html", first=t.steps[lo], last=t.steps[hi - 1], n=len(result), rows=rows,
                  headers=text.step_headers(result), tenants=t.has_tenants,
                  text_columns=("tenant", "regular", "incremental", "note"),
                  swatches=result.signals <= len(SIGNAL_COLORS))


@functools.lru_cache(maxsize=1)
def notes_html() -> str:
    """How to read the page, and what each signal means (the same for everyone: rendered once per process)."""
    d = replay_defaults()
    return render(_T + "notes.html", notes=text.READING_NOTES,
                  meanings=text.signal_meanings(d["ranges"], d["epsilon"], d["delta"]))


def status_html(message: str) -> str:
    return str(snippet('{% if m %}<div class="md-ok">{{ m }}</div>{% endif %}', m=message))


def error_html(message: str) -> str:
    """A refusal beside the input (``md-error``; empty when there is none)."""
    return str(snippet('{% if m %}<div class="md-error">{{ m }}</div>{% endif %}', m=message))


def refusal_html(message: str, problems=()) -> str:
    """A refused trace or link: its message, or the bad cells as a list (up to ten, each with row and column)."""
    return render(_T + "refusal.html", message=message, problems=list(problems),
                  head=message.split(": ", 1)[0] if problems else "")
