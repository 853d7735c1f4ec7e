"""The answer in a page's first response: each page's headline for the link's query, computed on the request.

A shared link is opened by a room at once, and what everyone needs first is one number.  So the
first HTML response of a served page already carries it: :func:`first_answer` computes the page's
headline for the URL's query (milliseconds: Hoeffding's counts, a shipped example's replay, /ci's
sizes) with the SAME functions the live view renders its answer with (``meter.view_html.answer``,
``session.view_html.cards_html``, ``ci.view.headline_cards``, ...), so the first response, the live
view, the notebook and the report cannot differ.  The live components then take over in place:
the first answer stays on screen until the live view shows the same number (``live``: the hook
of that number), then the two swap in one frame (``app/templates/first.html``).

Bad input in the link gets the page's own message (the one the live page shows), never an error
page; the query is read within :data:`~meter_dashboard.ui.urlstate.MAX_QUERY_CHARS`, and slow work
(the exact binomial counts) gets at most :data:`EXACT_SECONDS` on the request, else the answer says
it is computing, as the live page does; /approve's decisions get at most :data:`APPROVE_SECONDS`, else
the first response says what it computes and for how long (and the decisions are there for the next person).  ``headline`` and ``sentence`` are the page's title and its
link preview (``og:``/``twitter:`` tags).  Every value reaches the HTML through autoescaped templates.
"""
from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import parse_qsl

from ..core import formatting as fmt
from ..core.html import Markup, render
from ..core.validation import InputError
from ..ui.exports import lead_markup
from ..ui.urlstate import MAX_QUERY_CHARS

__all__ = ["FirstAnswer", "first_answer", "render_first", "computing", "planner_result", "query_of", "EXACT_SECONDS",
           "ANSWERS", "COMPUTING", "FIRST_RESAMPLES", "APPROVE_SECONDS", "APPROVALS_RUNNING", "approve_link", "approval"]

log = logging.getLogger(__name__)

#: The longest the first response waits for the exact counts (they continue in a worker thread and
#: are cached for the live page); beyond it the first answer shows Hoeffding's with "computing…".
EXACT_SECONDS = 0.3


@dataclass(frozen=True)
class FirstAnswer:
    """What a page's first response says for its link (no Panel, no JavaScript needed to read it)."""

    #: the page's answer (the live view's own markup), or its message for a bad link
    answer: Markup
    #: one line: the page's title and the preview's title ("38,005 labels — 10 steps within ε ...")
    headline: str
    #: the preview's description (the page's plain-words lead, or its message)
    sentence: str
    #: the settings the answer is for, as (name, value) text pairs: a table with a caption
    inputs: list = field(default_factory=list)
    #: CSS selector of the number the live view shows: the first answer gives way once it is on screen
    live: str = ""
    #: the link's problem, as the live page says it ('' when there is none)
    message: str = ""


def query_of(raw: str) -> tuple[dict[str, str], str]:
    """The URL query as raw strings, read within the same bound as the live page (and why not, if refused)."""
    search = f"?{raw}" if raw else ""  # counted as the live page counts it (``location.search``)
    if len(search) > MAX_QUERY_CHARS:
        return {}, (f"The link's settings were not applied: its query has {len(search):,} characters "
                    f"(at most {MAX_QUERY_CHARS:,}).")
    return dict(parse_qsl(search.lstrip("?"), keep_blank_values=True)), ""


# ---------------------------------------------------------------------------- the planner
def _within(seconds: float, function):
    """``function()`` computed in a worker thread, or None when it takes longer than ``seconds``."""
    from ..core import runtime

    return _waited(seconds, runtime.thread_pool().submit(function))


def _waited(seconds: float, future: concurrent.futures.Future):
    """``future``'s result, or None when it is not there within ``seconds`` (the computation goes on)."""
    try:
        return future.result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        return None


def planner_result(query: dict[str, str], refused: str = ""):
    """(result, ranges, message) of the planner's link: the plan it names, or the defaults and the page's message.

    Hoeffding's counts and budget answers are milliseconds; the exact bound's counts and the headlined
    variant's budget answers are added when they take at most :data:`EXACT_SECONDS`.
    """
    from ..meter.model import MeterPlan
    from ..meter.result import RECOMMENDED
    from ..meter.stages import quick_result, slow_items, with_items

    values, message = {}, refused
    if not refused:
        try:
            values = MeterPlan.parse_query(query)
            MeterPlan.inputs_of(values)
        except InputError as exc:
            values, message = {}, f"The link's settings were not applied: {exc}"  # the live page's words
    inputs = MeterPlan.inputs_of({**values, "budget_variants": [RECOMMENDED]})
    result = quick_result(inputs)
    if inputs.bound != "hoeffding":
        items = _within(EXACT_SECONDS, lambda: [item for unit in slow_items(inputs) for item in unit])
        if items is not None:
            result = with_items(result, items)
    return result, values.get("ranges", MeterPlan.param["ranges"].default), message


def _planner(query: dict[str, str], refused: str) -> FirstAnswer:
    from ..meter import view_html
    from ..meter.result import RECOMMENDED, VARIANT_TITLES
    from ..meter.text import file_stem, plan_inputs, summary_text

    r, ranges, message = planner_result(query, refused)
    pairs = plan_inputs(r, ranges)
    answer = view_html.answer(r, stale=False, summary=summary_text(r, pairs), stem=file_stem(r))
    exact = r.bound != "hoeffding" and not r.is_pending("labels", RECOMMENDED) and RECOMMENDED not in r.refused
    count = fmt.integer(r.labels[RECOMMENDED] if exact or r.bound == "hoeffding" else r.hoeffding_labels[RECOMMENDED])
    eps = (f"ε {fmt.number(r.epsilon[0])}" if len(set(r.epsilon)) == 1
           else f"ε {fmt.number(r.epsilon[0])}–{fmt.number(r.epsilon[-1])}")
    how = (f"; Hoeffding {fmt.integer(r.hoeffding_labels[RECOMMENDED])}" if exact else
           "; Hoeffding's count, the exact one is computing" if r.bound != "hoeffding" else "")
    headline = (f"{count} labels — {fmt.integer(r.steps)} steps within {eps}, probability "
                f"{fmt.confidence(r.delta)} ({VARIANT_TITLES[RECOMMENDED].lower()}{how})")
    shown, _ = _with_messages(answer, [], message)  # the message the page shows beside its inputs
    return FirstAnswer(shown, headline, message or r.lead(), pairs, ".label-count-incremental", message)


# ---------------------------------------------------------------------------- the session page
def _session(query: dict[str, str], refused: str) -> FirstAnswer:
    from ..session import text, view_html
    from ..session.model import SessionModel
    from ..session.trace import EXAMPLES

    key = query.get("example")
    model = SessionModel(example=key if key in EXAMPLES else "emocontext")
    own = {k: v for k, v in query.items() if k in SessionModel.QUERY_KEYS}
    applied = model.apply_link(own) if own and not refused else True
    message = refused or ("" if applied else model.error)
    r, i = model.result, model.position
    answer = lead_markup(r.lead(), "session") + view_html.cards_html(r, i) + view_html.answer_html(r, i)
    if message:
        answer = view_html.refusal_html(message) + answer
    g = text.guarantee_at(r, i)
    d = r.step(i)
    headline = (f"{r.trace.name}: step {d['step']}, signal {g.signal} — "
                f"{fmt.integer(d['steps_used'])} of {fmt.integer(r.budget)} steps used")
    inputs = [("Trace", r.trace.name), ("Step shown", str(d["step"])),
              ("Steps used", f"{fmt.integer(d['steps_used'])} of T = {fmt.integer(r.budget)}")]
    return FirstAnswer(Markup(answer), headline, message or r.lead(), inputs, ".meter-signal", message)


# ---------------------------------------------------------------------------- ease.ml/ci
def _ci(query: dict[str, str], refused: str) -> FirstAnswer:
    from ..ci import view as ci_view
    from ..ci.model import CIModel

    values, errors = ci_view.url_values(query)
    model = CIModel(**{k: v for k, v in values.items() if k != "condition"})
    if "condition" in values:
        model.condition = values["condition"]
        if model.error:
            errors.append(model.error)
    if refused:
        errors.insert(0, refused)
    r = model.result
    answer = lead_markup(r.lead(), "ci") + ci_view.headline_cards(r) + ci_view.sentence_html(r)
    message = " ".join(errors)
    if message:
        answer = ci_view.error_html(message) + answer
    headline = f"{fmt.integer(r.labels)} labels for {model.condition}, reliability {fmt.number(model.reliability)}"
    inputs = [("Condition", model.condition), ("Reliability", fmt.number(model.reliability)),
              ("Adaptivity", model.adaptivity), ("Steps", fmt.integer(model.steps)), ("Bound", model.bound)]
    return FirstAnswer(Markup(answer), headline, message or r.lead(), inputs, ".ci-labels", message)


# ---------------------------------------------------------------------------- Ladder and P(A>B)
def _apply_link(query: dict[str, str], bindings: dict) -> list[str]:
    """Set ``key -> (model, parameter, number)`` from the query, each value checked as the page checks it.

    Numbers go through the parser of the page's number boxes (:func:`~meter_dashboard.ui.inputs.checker_for`),
    choices through the page's URL link (:class:`~meter_dashboard.ui.urlstate.UrlLink`); a refused value is
    left at its default and named.
    """
    from ..ui.inputs import checker_for
    from ..ui.urlstate import choice_value

    messages = []
    for key, (model, name, number) in bindings.items():
        if key in query:
            try:
                text = query[key]
                value = checker_for(model, name, key)(text) if number else choice_value(model, name, key, text)
                setattr(model, name, value)
            except InputError as exc:
                messages.append(f"The link's {key} was not applied: {exc}")
    return messages


def _with_messages(answer: str, messages: list[str], refused: str) -> tuple[Markup, str]:
    from ..ui.style import error_html

    messages = ([refused] if refused else []) + messages
    return Markup("".join(error_html(m) for m in messages) + answer), " ".join(messages)


def _ladder(query: dict[str, str], refused: str) -> FirstAnswer:
    from ..leaderboard import view as ladder_view
    from ..leaderboard.model import LadderReplayModel
    from ..leaderboard.text import lead as ladder_lead
    from ..ui.style import headlines_html

    replay = LadderReplayModel()
    messages = [] if refused else _apply_link(query, {"variant": (replay, "variant", False),
                                                      "step": (replay, "step", True)})
    res = replay.result
    answer, message = _with_messages(lead_markup(ladder_lead(res, replay.delta), "ladder")
                                     + headlines_html(ladder_view.replay_cards(replay, res), "ladder-headlines")
                                     + ladder_view.replay_sentence(res), messages, refused)
    how = "parameter-free Ladder" if res.step is None else f"Ladder, step η = {fmt.number(res.step)}"
    headline = (f"Ladder's best score {fmt.number(float(res.scores[-1]))} — {fmt.integer(res.releases)} of "
                f"{fmt.integer(res.submissions)} scores released ({how})")
    inputs = [("Loss file", replay.example), ("Ladder", how), ("Submissions", fmt.integer(res.submissions)),
              ("Test examples", fmt.integer(res.examples))]
    return FirstAnswer(answer, headline, message or ladder_lead(res, replay.delta), inputs, ".ladder-best", message)


#: The most bootstrap resamples a first response computes (the page's own limit is higher: it computes them live).
FIRST_RESAMPLES = 20_000


def _compare(query: dict[str, str], refused: str) -> FirstAnswer | None:
    from ..comparison import view as compare_view
    from ..comparison.model import CompareModel

    from ..ui.inputs import checker_for

    model = CompareModel()
    if not refused and "resamples" in query:
        with contextlib.suppress(InputError):  # a bad value is named below, with the others
            if checker_for(model, "resamples", "resamples")(query["resamples"]) > FIRST_RESAMPLES:
                return None  # the live page computes them: the first response says what it is computing
    bindings = {"example": (model, "example", False), "paired": (model, "paired", False),
                **{key: (model, key, True) for key in ("gamma", "alpha", "beta", "resamples", "seed")}}
    messages = [] if refused else _apply_link(query, bindings)
    res = model.result
    cards, sentence = compare_view.result_html(res)
    answer, message = _with_messages(lead_markup(res.lead(), "compare") + cards + sentence, messages, refused)
    lo, hi = res.ci
    headline = (f"P(A>B) = {res.p_a_gt_b:.3f}, {fmt.percent(1 - res.alpha)} interval [{lo:.3f}, {hi:.3f}] over "
                f"{fmt.integer(res.runs)} runs")
    inputs = [("Runs file", model.example), ("Paired runs", "yes" if model.paired else "no"),
              ("γ (meaningful threshold)", fmt.number(model.gamma)), ("α", fmt.number(model.alpha)),
              ("Bootstrap resamples", fmt.integer(model.resamples)), ("Seed", str(model.seed))]
    return FirstAnswer(answer, headline, message or res.lead(), inputs, ".compare-p", message)


# ---------------------------------------------------------------------------- /approve
#: The longest /approve's first response waits for the link's decisions (seconds).  On a quiet 2-core machine a
#: shipped example takes at most 0.25 s in a fresh process (presSRGP on the 50 modifications of ``adversary``; fsSRGP
#: 0.15 s, every other procedure a few ms) and the floor app shows its number after about 1 s: waiting at most
#: 0.3 s keeps the decisions within half the floor's time.  Beyond it the first response says what is computed and
#: for how long (:data:`COMPUTING`), and the computation goes on in its worker thread for the next person to open
#: the link (:func:`approval`) and for the live page (the decisions are the model's shared results).
APPROVE_SECONDS = 0.3

#: The decisions of the links opened lately, computed or being computed (futures), by the link's settings: a room
#: opening one link shares one computation (the last :data:`_APPROVALS_KEPT` links).
_APPROVALS: collections.OrderedDict = collections.OrderedDict()
_APPROVALS_KEPT = 64
_APPROVALS_LOCK = threading.Lock()
#: At most this many links' decisions are computed at once for first responses: plain HTTP clients requesting many
#: different links hold at most these worker threads (a link beyond them is said computing; its live page computes
#: it, and the next request for it starts it once a thread is free).
APPROVALS_RUNNING = 2


def approve_link(query: dict[str, str], refused: str = "") -> tuple[dict, list[str]]:
    """(settings, refusals) of an /approve link, read as the live page reads it (``ApproveModel.parse_query``;
    a query refused as a whole applies nothing and says why)."""
    from ..approvals.model import ApproveModel

    return ({}, [refused]) if refused else ApproveModel.parse_query(query)


class Decided(NamedTuple):
    """What /approve's first answer shows of a link's model: the chosen procedure's decisions and what they are of."""

    result: Any  # ApprovalResult, or None when the model refused the settings (``error``)
    example: str
    original_name: str
    error: str


def _decided(values: dict) -> Decided:
    """The decisions of a link's settings (the chosen procedure only: the page's first tab), as its model makes them.

    Deterministic: the decisions depend only on the trace and the settings (fsSRGP's and presSRGP's integration
    on the link's ``seed``), and the model keeps them in the results every session of the process shares.
    """
    from ..approvals.model import ApproveModel

    model = ApproveModel(compare_active=False, **values)
    return Decided(model.result, model.example, model.trace.original_name, model.error)


def approval(values: dict) -> concurrent.futures.Future | None:
    """The computation of the decisions for a link's ``values`` (:func:`approve_link`): started in a worker
    thread by the first person to open the link, shared by everyone after; one that failed is started again.
    None while :data:`APPROVALS_RUNNING` computations of other links are running."""
    from ..core import runtime

    key = tuple(sorted(values.items()))
    with _APPROVALS_LOCK:
        future = _APPROVALS.get(key)
        if future is None or (future.done() and future.exception() is not None):
            if sum(not f.done() for f in _APPROVALS.values()) >= APPROVALS_RUNNING:
                return None
            future = _APPROVALS[key] = runtime.thread_pool().submit(_decided, values)
            while len(_APPROVALS) > _APPROVALS_KEPT:
                _APPROVALS.popitem(last=False)
        _APPROVALS.move_to_end(key)
    return future


def _approve(query: dict[str, str], refused: str) -> FirstAnswer | None:
    """/approve's decisions for the link, when they are known within :data:`APPROVE_SECONDS` (else None: the first
    response says what is computed and for how long, and the next one to open the link gets the decisions)."""
    from ..approvals import view_text
    from ..approvals.text import inputs, lead

    values, errors = approve_link(query, refused)
    future = approval(values)
    decided = _waited(APPROVE_SECONDS, future) if future is not None else None
    if decided is None or decided.result is None:
        return None
    r, example = decided.result, view_text.EXAMPLE_LABELS[decided.example]
    parts = view_text.decisions_html(r, decided.original_name)  # the live view's panes, in its order
    answer, message = _with_messages(parts["lead"] + view_text.intro_html() + parts["headlines"] + parts["sentence"]
                                     + parts["method_note"] + parts["table"],
                                     view_text.messages(decided.error, errors), "")
    headline = (f"{fmt.integer(r.approvals)} of {fmt.integer(len(r.names))} modifications approved "
                f"({r.label}, α {fmt.number(r.alpha)}) — {example}")
    return FirstAnswer(answer, headline, message or lead(r), [("Trace", example), *inputs(r)], ".approve-lead",
                       message)


def _approve_computing(query: dict[str, str], refused: str) -> str:
    """/approve: the decisions of the link's example and procedure, and at most how long they take (its view
    computes them; approvals.text.Pace's bound holds for any of the link's other settings: a link carries no
    conditioning, and a shipped example's trace is the one calibrated), while they are not known within
    :data:`APPROVE_SECONDS` (app.pages asks again for the next person: by then they may be)."""
    from ..approvals.model import METHOD_LABELS, ApproveModel, load_example
    from ..approvals.text import PACE, computing_sentence

    values, _ = approve_link(query, refused)  # a refused value: the page's default, as the live page (which says why)
    example = values.get("example", ApproveModel.param["example"].default)
    method = values.get("method", ApproveModel.param["method"].default)
    modifications = load_example(example)[0].modifications
    return computing_sentence(modifications, METHOD_LABELS[method], PACE.seconds(modifications, method))


#: What a page without a first answer (/approve: while the link's decisions are not known) says it is computing
#: (for the link's query), until its view is on screen.
COMPUTING = {"approve": _approve_computing}

#: What shows that the live view of a page without a first answer (yet) is laid out and holds its first numbers (for
#: /approve its lead: the decisions so far, or all of them): until it is on screen the view is built out of sight
#: (its blocks appear and move while Bokeh lays them out and the first decisions arrive) and the sentence saying
#: what is computed stays; at most 30 s after the view is built it shows anyway (first.html).
LIVE = {"approve": ".approve-lead"}

#: page name -> its first answer (pages not listed get the header and a sentence saying what is computed).
ANSWERS = {"planner": _planner, "session": _session, "ci": _ci, "ladder": _ladder, "compare": _compare,
           "approve": _approve}


def first_answer(name: str, raw_query: str) -> FirstAnswer | None:
    """Page ``name``'s answer for the link's query (``raw_query``: the URL's text after ``?``), or None.

    None for a page without a first answer, or when computing it failed (logged): the first
    response then says what the page is computing, as before.
    """
    compute = ANSWERS.get(name)
    if compute is None:
        return None
    query, refused = query_of(raw_query)
    try:
        return compute(query, refused)
    except Exception:  # noqa: BLE001 - the first response must never fail: the live page follows anyway
        log.exception("the first answer of %s could not be computed", name)
        return None


def computing(name: str, raw_query: str = "") -> str:
    """What page ``name`` says it is computing for the link's query while its view is built (never fails)."""
    say = COMPUTING.get(name)
    if say is not None:
        try:
            return say(*query_of(raw_query))
        except Exception:  # noqa: BLE001 - the first response must never fail: the generic words then
            log.exception("what %s computes could not be said", name)
    return "building the page and computing its numbers…"


def render_first(answer: FirstAnswer | None, name: str, *, title: str, theme: str, query: str = "") -> Markup:
    """The first response's body under the header: the answer and its inputs, or what is being computed."""
    return Markup(render("app/templates/first.html", a=answer, title=title, theme=theme, live=LIVE.get(name),
                         computing=computing(name, query)))
