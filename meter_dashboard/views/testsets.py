"""The /testsets page: every guarded test set with its live meter, budget, alarms and history.

:class:`TestSets` is a ``pn.viewable.Viewer`` over a
:class:`~meter_dashboard.testsets.overview.TestSetsModel`.  Each test set gets a card: the
plan and the budget (steps used of T, steps left), the five-colour meter of the latest
step (the session page's own :class:`~meter_dashboard.views.meter_gauge.MeterGauge`,
without the solid bar: the exact validation-test gap would reveal the test score while
the test set is active), the alarms, and the history of signals.  The page polls the
store every half second off the event loop and updates the cards in place, so a
submission from a notebook, the CLI or another server shows within a second, without
a reload.  Admin actions (revert, retire, a new tenant token, the released trace) ask
for the test set's admin token.  It computes nothing itself.

Stable hooks for tests: ``testset-card`` on each card (with ``data-name``), and inside it
``testset-steps-used``, ``testset-signal``, ``testset-status``; ``testset-history`` on the
history table; ``testset-admin-message`` on the outcome of an admin action.
"""
from __future__ import annotations

import asyncio
import io
from concurrent.futures import ThreadPoolExecutor

import panel as pn
import param

from ..testsets.overview import TestSetsModel
from .. import formatting as fmt
from .base import DashboardView
from .meter_gauge import MeterGauge
from .style import HTML, SIGNAL_COLORS, esc, headline_html

__all__ = ["TestSets", "TestSetCard", "page"]

_HISTORY_ROWS = 12
#: The first read of the store starts while the page is being built (shown once the browser is connected).
_READER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="md-testsets-page")


def _swatch(k, m: int) -> str:
    """A signal in its colour (the session page's ``md-signal`` classes of dashboard.css)."""
    if k is None:
        return "—"
    color_class = f" signal-{int(k) - 1}" if m <= len(SIGNAL_COLORS) else ""
    return f'<span class="md-signal{color_class}">{int(k)}</span>'


def _passed(value) -> str:
    if value is None:
        return '<span class="md-plain">hidden</span>'
    return '<span class="md-badge md-pass">pass</span>' if value else '<span class="md-badge md-fail">fail</span>'


class TestSetCard(pn.viewable.Viewer):
    """One test set: header, headline numbers, meter (meter mode), alarms, history."""

    __test__ = False
    status = param.Dict(default={})

    def __init__(self, status: dict, **params):
        super().__init__(status=status, **params)
        self.header = HTML("", sizing_mode="stretch_width")
        self.cards = HTML("", sizing_mode="stretch_width")
        self.alarms = HTML("", sizing_mode="stretch_width")
        self.history = HTML("", sizing_mode="stretch_width")
        self.gauge = MeterGauge() if status.get("mode") == "meter" else None
        hidden = HTML('<div class="md-note">The meter of the latest step. Its solid bar, the exact '
                      "validation–test gap, is not drawn: it would reveal the test score.</div>",
                      sizing_mode="stretch_width")
        parts = [self.header, self.cards] + ([self.gauge, hidden] if self.gauge is not None else []) + [
            self.alarms, self.history]
        self.layout = pn.Card(*parts, sizing_mode="stretch_width", css_classes=["testset-card"], hide_header=True,
                              collapsible=False, margin=(0, 0, 14, 0))
        self.param.watch(self._render, "status")
        self._render()

    def __panel__(self):
        return self.layout

    def _render(self, *_):
        s = self.status
        meter = s["mode"] == "meter"
        settings = s["settings"]
        last = s["history"][-1] if s["history"] else None
        plan = (f"{settings['meter']} meter · ε {', '.join(f'{e:g}' for e in settings['epsilon'])} · "
                f"δ {settings['delta']:g}" + (f" · tenants {settings['tenant_steps']}" if settings["tenant_steps"]
                                              else "") + (f" · reverts at {settings['reverts']}" if settings["reverts"]
                                                          else "")
                if meter else f"ease.ml/ci · {settings['condition']} · reliability {settings['reliability']:g} · "
                              f"{settings['adaptivity']} · {settings['ci_mode']}")
        badge = "md-pass" if s["status"] == "active" else "md-fail"
        self.header.object = (
            f'<div class="md-row" data-name="{esc(s["name"])}"><span class="session-title">{esc(s["name"])}</span>'
            f'<span class="md-badge {badge} testset-status">{esc(s["status"]).upper()}</span>'
            f'<span class="md-note">{esc(plan)}</span></div>')
        cards = [
            headline_html("Steps used", f"{s['steps_used']} / {s['steps']}", "of the budget T", "testset-steps-used"),
            (headline_html("Steps left", str(s["steps_left"]), "then a new test set", "testset-steps-left")
             if s["status"] == "active" else
             headline_html("Steps left", "—", "retired: draw a new test set", "testset-steps-left")),
            headline_html("Labels", fmt.integer(s["labels"]), f"the plan needs {fmt.integer(s['needed'])}",
                          "testset-labels"),
        ]
        if meter:
            cards.append(headline_html("Signal", str(last["signal"]) if last else "—",
                                       f"{settings['meter']} meter, latest step", "testset-signal"))
            cards.append(headline_html("Guaranteed bound", f"{last['epsilon']:g}" if last else "—",
                                       f"ε, prob. {fmt.confidence(settings['delta'])}", "testset-epsilon"))
        else:
            verdict = {True: "pass", False: "fail", None: "hidden"}[last["passed"]] if last else "—"
            cards.append(headline_html("Latest commit", verdict, "pass/fail", "testset-signal"))
        self.cards.object = '<div class="session-card-row">' + "".join(cards) + "</div>"  # the session page's row
        if self.gauge is not None:
            self.gauge.param.update(
                ranges=list(settings["ranges"]), epsilon=list(settings["epsilon"]), meter_name=f"{settings['meter']} meter",
                empirical_overfitting=None, signal=last["signal"] if last else None,
                incremental_signal=last["incremental_signal"] if last else None,
                epsilon_shown=last["epsilon"] if last else None,
                supported_epsilon=(s["supported"]["epsilon"][last["signal"] - 1]
                                   if last and s["supported"] and s["supported"].get("epsilon") else None))
        self.alarms.object = self._alarms_html(s)
        self.history.object = self._history_html(s)

    @staticmethod
    def _alarms_html(s) -> str:
        if not s["alarms"]:
            return '<div class="md-ok">No alarms.</div>'
        out = []
        for a in s["alarms"]:
            cls = "session-alarm" if a["level"] == "alarm" else "session-note"
            head = "Alarm" if a["level"] == "alarm" else "Note"
            out.append(f'<div class="{cls} alarm-{esc(a["kind"])}"><b>{head}:</b> {esc(a["message"])}</div>')
        return "".join(out)

    @staticmethod
    def _history_html(s) -> str:
        rows = s["history"][-_HISTORY_ROWS:]
        if not rows:
            return '<div class="md-note testset-history">No submissions yet.</div>'
        meter = s["mode"] == "meter"
        m = len(s["settings"]["epsilon"]) if meter else 0
        head = ("<tr><th class='num'>step</th><th>time (UTC)</th><th>tenant</th><th class='num'>validation</th>"
                + ("<th>signal</th><th>incremental</th><th class='num'>ε</th>" if meter else "<th>result</th>")
                + "<th>reverted</th><th>predictions</th></tr>")
        body = []
        for h in reversed(rows):
            val = "—" if h["val_accuracy"] is None else f"{h['val_accuracy']:.4f}"
            cells = (f"<td>{_swatch(h['signal'], m)}</td><td>{_swatch(h['incremental_signal'], m)}</td>"
                     f"<td class='num'>{h['epsilon']:g}</td>" if meter else f"<td>{_passed(h['passed'])}</td>")
            body.append(f"<tr><td class='num'>{h['step']}</td><td>{esc((h['time'] or '')[:19].replace('T', ' '))}</td>"
                        f"<td>{esc(h['tenant'])}</td><td class='num'>{val}</td>{cells}"
                        f"<td>{'yes' if h['reverted'] else ''}</td>"
                        f"<td><code>{esc(h['predictions_sha256'][:12])}</code></td></tr>")
        more = len(s["history"]) - len(rows)
        note = f'<div class="md-note">Latest {len(rows)} of {len(s["history"])} steps.</div>' if more > 0 else ""
        return f'<table class="md-table testset-history">{head}{"".join(body)}</table>{note}'


class TestSets(DashboardView):
    """Every guarded test set in a store, live.

    Parameters
    ----------
    store_url : str, optional
        The store (default: the process's default store, ``serve --store``).
    model : TestSetsModel, optional
    live : bool
        Poll the store for changes (every ``poll_ms`` milliseconds) when served.
    """

    __test__ = False
    title = "Test sets"
    model = param.ClassSelector(class_=TestSetsModel)
    poll_ms = param.Integer(default=500, bounds=(100, 60_000))

    def __init__(self, store_url: str | None = None, *, model: TestSetsModel | None = None, live: bool = True,
                 **params):
        super().__init__(model=model or TestSetsModel(store_url=store_url), **params)
        self.cards: dict = {}
        self._polling = False
        self._read_once = False  # served: until the first read of the store, say so (not "no test sets")
        self.intro = HTML(_intro(), sizing_mode="stretch_width", css_classes=["testsets-intro"])
        self.error = HTML("", sizing_mode="stretch_width", css_classes=["testsets-error"])
        self.column = pn.Column(sizing_mode="stretch_width")
        self.empty = HTML(
            '<div class="md-note testsets-empty">No guarded test sets in this store yet. Create one from a labels '
            'file and the planner\'s plan: <code>meter-dashboard testset create NAME --labels LABELS.csv --epsilon '
            '0.01,0.02,0.03,0.04,0.05 --delta 0.01 --steps 10 [--store URL]</code> (or <code>md.connect().create(...)</code> in a '
            'notebook); it appears here within a second, with its live meter and history.</div>',
            sizing_mode="stretch_width")
        self.reading = HTML('<div class="md-note">Reading the store…</div>', sizing_mode="stretch_width")
        self._build_admin()
        self.model.param.watch(self._render, "revision")
        self._live = live
        served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
        if served:  # every read runs off the event loop; the page changes only once the browser is connected
            self._first_read = _READER.submit(self.model.check)  # started now, shown on load
            pn.state.onload(self._start)
        else:
            self.model.refresh()
            self._read_once = True
        self._render()

    # -- live updates
    async def _start(self):
        """The session is connected: read the store now, then every ``poll_ms``.

        Nothing changes the page before this: a change made between the browser's first pull
        of the page and its "ready" signal was lost (the page stayed on "Reading the store…"
        for good, issue 23), and a periodic callback started with the page fires before
        the browser has connected on a cold server."""
        if self._live:
            self._callback = pn.state.add_periodic_callback(self._poll, period=self.poll_ms)
        await self._poll(first=self._first_read)

    async def _poll(self, first=None):
        if self._polling:
            return
        self._polling = True
        try:
            update = await (asyncio.wrap_future(first) if first is not None else asyncio.to_thread(self.model.check))
        finally:
            self._polling = False
        if update is not None:
            with pn.io.hold():
                self._read_once = True
                self.model.apply(update)
        elif not self._read_once:  # the store is empty (or unchanged): now the empty message is true
            self._read_once = True
            self._render()

    def _render(self, *_):
        m = self.model
        self.error.object = f'<div class="md-error">{esc(m.error)}</div>' if m.error else ""
        for name in m.names:
            status = m.testsets[name]
            card = self.cards.get(name)
            if card is None:
                self.cards[name] = TestSetCard(status)
            elif card.status.get("version") != status.get("version"):
                card.status = status
        waiting = [] if self._read_once else [self.reading]
        shown = [self.cards[n].layout for n in reversed(m.names)] or waiting or [self.empty]  # the newest first
        if [id(c) for c in self.column.objects] != [id(c) for c in shown]:
            self.column.objects = shown
        self.select.options = list(m.names)
        for widget in self.admin_widgets:  # nothing to act on in an empty store
            widget.disabled = not m.names

    # -- admin actions
    def _build_admin(self):
        self.select = pn.widgets.Select(label="Test set", options=[], sizing_mode="stretch_width")
        self.token = pn.widgets.PasswordInput(label="Admin token", placeholder="mdt_…", sizing_mode="stretch_width",
                                              css_classes=["testset-admin-token"])
        self.tenant = pn.widgets.TextInput(label="Tenant", placeholder="alice", sizing_mode="stretch_width")
        self.buttons = {
            "revert": pn.widgets.Button(label="Revert the latest step", color="warning",
                                        css_classes=["testset-revert"], sizing_mode="stretch_width"),
            "retire": pn.widgets.Button(label="Retire now", color="danger", css_classes=["testset-retire"],
                                        sizing_mode="stretch_width"),
            "token": pn.widgets.Button(label="Issue a tenant token", color="primary",
                                       css_classes=["testset-issue-token"], sizing_mode="stretch_width"),
            "export": pn.widgets.Button(label="Prepare the trace (after retirement)", css_classes=["testset-export"],
                                        sizing_mode="stretch_width"),
        }
        for action, button in self.buttons.items():
            button.on_click(self._handler(action))
        self.admin_widgets = [self.select, self.token, self.tenant, *self.buttons.values()]
        self.download = pn.widgets.FileDownload(visible=False, sizing_mode="stretch_width", color="success")
        self.admin_message = HTML("", sizing_mode="stretch_width", css_classes=["testset-admin-message"])

    def _handler(self, action: str):
        async def handler(_event):  # a coroutine function, so Panel awaits it on the page's loop
            await self._act(action)
        return handler

    async def _act(self, action: str):
        name, token = self.select.value, self.token.value
        if not name:
            self.admin_message.object = '<div class="md-error">No test set to act on.</div>'
            return
        for b in self.buttons.values():
            b.disabled = True
        try:
            result = await asyncio.to_thread(self.model.run_action, action, name, token, self.tenant.value)
        finally:
            for b in self.buttons.values():
                b.disabled = False
        cls = "md-ok" if result["ok"] else "md-error"
        self.admin_message.object = f'<div class="{cls}">{esc(result["message"])}</div>'
        if action == "export" and result["ok"]:
            self.download.param.update(file=io.StringIO(result["trace"]), filename=f"{name}-trace.json",
                                       label=f"Download {name}-trace.json", visible=True)
        if result["ok"]:
            await self._poll()

    def controls(self) -> pn.Column:
        """Admin actions (the sidebar of the served page)."""
        return pn.Column(
            HTML("<b>Admin actions</b> — they need the test set's admin token (shown once at creation)",
                 margin=(5, 5, 0, 5)),
            self.select, self.token, self.buttons["revert"], self.buttons["retire"], self.tenant,
            self.buttons["token"], self.buttons["export"], self.download, self.admin_message,
            sizing_mode="stretch_width")

    def results(self) -> pn.Column:
        """Every test set's card, the newest first (the main area)."""
        return pn.Column(self.intro, self.error, self.column, sizing_mode="stretch_width")


def _intro() -> str:
    return ('<div class="md-note md-spaced">Each guarded test set <b>holds</b> its labels '
            "(ease.ml/meter Sections 2–3, ease.ml/ci Sections 2–3): developers submit predictions and get back the "
            "meter's signal or pass/fail, never the test score. The meter shows the latest step's signal and the ε it "
            "guarantees (the grey bar); the exact validation–test gap stays hidden while the test set is active. "
            "This page follows the store live. Tenants must not compare signals with each other: their shares of "
            "the budget assume they do not communicate (Appendix B).</div>")


def page():
    """The served /testsets page: admin actions in the sidebar, the test sets in the main area."""
    return TestSets()
