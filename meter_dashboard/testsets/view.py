"""The /testsets page: every guarded test set, with what the person at the page may see of it.

:class:`TestSets` is a ``pn.viewable.Viewer`` over a
:class:`~meter_dashboard.testsets.overview.TestSetsModel`.  Each test set gets a card.
Without a token (the public view, :mod:`meter_dashboard.testsets.access`) a card shows the
state and the budget only: steps used of T and steps left.  With a tenant token typed in
the sidebar ("Show with this token"), that test set's card adds the plan, the five-colour
meter of the tenant's latest step (the session page's own
:class:`~meter_dashboard.ui.meter_gauge.MeterGauge`, without the solid bar: the exact
validation-test gap would reveal the test score while the test set is active), the alarms
and the tenant's own history; the admin token shows every tenant's.  Tenants never see one
another's steps here (their budget shares assume they do not communicate).  The page polls
the store every half second off the event loop, once the browser is connected, and
updates the cards in place.  Admin actions (revert, retire - after a confirmation naming
the test set and what follows - a new tenant token, the released trace) need the admin
token.  It computes nothing itself.

Stable hooks for tests: ``testset-card`` on each card (with ``data-name``), and inside it
``testset-steps-used``, ``testset-steps-left``, ``testset-signal``, ``testset-status``;
``testset-history`` on the history table; ``testset-view-message`` and
``testset-admin-message`` on the outcomes; ``testset-retire-confirm`` on the confirmation.
"""
from __future__ import annotations

import asyncio
import io

import panel as pn
import param

from ..core import formatting as fmt
from ..core.runtime import in_thread, thread_pool
from ..session.text import guarantee
from ..session.replay import bound_words
from ..ui.base import DashboardView
from ..ui.lazy import on_screen
from ..ui.meter_gauge import MeterGauge
from ..ui.style import HTML, SIGNAL_COLORS, esc, headline_html
from .overview import TestSetsModel
from .settings import MeterSettings, Settings, as_settings

__all__ = ["TestSets", "TestSetCard", "page"]

_HISTORY_ROWS = 12


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


def _settings(s: dict) -> Settings:
    """The typed settings of a status a token may see (read once per content: :func:`.settings.as_settings`)."""
    return as_settings(s["settings"])


def _plan_text(settings: Settings | dict) -> str:
    p = as_settings(settings)
    if isinstance(p, MeterSettings):
        return (f"{p.meter} meter · ε {', '.join(f'{e:g}' for e in p.epsilon)} · δ {p.delta:g} · "
                f"{bound_words(p.bound, p.max_error_rate)}"
                + (f" · tenants {list(p.tenant_steps)}" if p.tenant_steps else "")
                + (f" · reverts at {list(p.reverts)}" if p.reverts else ""))
    return f"ease.ml/ci · {p.condition.canonical()} · reliability {p.reliability:g} · {p.adaptivity} · {p.ci_mode}"


def _headlines(s: dict, detailed: bool) -> list:
    """The big numbers of a card: the budget for everyone; labels and the latest signal with a token."""
    cards = [
        headline_html("Steps used", f"{s['steps_used']} / {s['steps']}", "of the budget T", "testset-steps-used"),
        (headline_html("Steps left", str(s["steps_left"]), "then a new test set", "testset-steps-left")
         if s["status"] == "active" else
         headline_html("Steps left", "—", "retired: draw a new test set", "testset-steps-left")),
    ]
    if not detailed:
        return cards
    last = s["history"][-1] if s["history"] else None
    settings = _settings(s)
    cards.append(headline_html("Labels", fmt.integer(s["labels"]), f"the plan needs {fmt.integer(s['needed'])}",
                               "testset-labels"))
    if isinstance(settings, MeterSettings):
        cards.append(headline_html("Signal", str(last["signal"]) if last else "—",
                                   f"{settings.meter} meter, latest step shown", "testset-signal"))
        if last is None:
            cards.append(headline_html("Guaranteed bound", "—", f"ε, prob. {fmt.confidence(settings.delta)}",
                                       "testset-epsilon"))
        else:  # what this test set guarantees at its latest step, as on /session (issue 24)
            supported = s["supported"]["epsilon"][last["signal"] - 1] if (s.get("supported") or {}).get("epsilon") \
                else None
            cards.append(guarantee(last["epsilon"], last["signal"], settings.delta, meter=settings.meter,
                                   steps=s["steps"], test_size=s["labels"], needed=s["needed"],
                                   supported=supported).html(css_class="testset-epsilon"))
    else:
        verdict = {True: "pass", False: "fail", None: "hidden"}[last["passed"]] if last else "—"
        cards.append(headline_html("Latest commit", verdict, "pass/fail", "testset-signal"))
    return cards


class TestSetCard(pn.viewable.Viewer):
    """One test set: header and the budget (everyone); with a token's view, the meter, alarms and history."""

    __test__ = False
    status = param.Dict(default={})

    def __init__(self, status: dict, **params):
        super().__init__(status=status, **params)
        self.header = HTML("", sizing_mode="stretch_width")
        self.cards = HTML("", sizing_mode="stretch_width")
        self.alarms = HTML("", sizing_mode="stretch_width")
        self.history = HTML("", sizing_mode="stretch_width")
        self.gauge: MeterGauge | None = None  # made when a token shows a meter test set's signals
        self.hidden = HTML('<div class="md-note">The meter of the latest step shown here. Its solid bar, the exact '
                           "validation–test gap, is not drawn: it would reveal the test score.</div>",
                           sizing_mode="stretch_width")
        self.layout = pn.Card(self.header, self.cards, sizing_mode="stretch_width", css_classes=["testset-card"],
                              hide_header=True, collapsible=False, margin=(0, 0, 14, 0))
        self.param.watch(self._render, "status")
        self._render()

    @property
    def detailed(self) -> bool:
        """Whether the status carries a token's view (the plan and a history), not only the public one."""
        return "settings" in self.status

    def _parts(self) -> list:
        if not self.detailed:
            return [self.header, self.cards]
        if self.status["mode"] == "meter" and self.gauge is None:
            self.gauge = MeterGauge()
        meter = [self.gauge, self.hidden] if self.status["mode"] == "meter" else []
        return [self.header, self.cards, *meter, self.alarms, self.history]

    def __panel__(self):
        return self.layout

    def _render(self, *_):
        s = self.status
        badge = "md-pass" if s["status"] == "active" else "md-fail"
        plan = _plan_text(s["settings"]) if self.detailed else (
            "Type a token of this test set in the sidebar to see its plan, alarms and your history.")
        self.header.object = (
            f'<div class="md-row" data-name="{esc(s["name"])}"><span class="session-title">{esc(s["name"])}</span>'
            f'<span class="md-badge {badge} testset-status">{esc(s["status"]).upper()}</span>'
            f'<span class="md-note">{esc(plan)}</span></div>')
        self.cards.object = '<div class="session-card-row">' + "".join(_headlines(s, self.detailed)) + "</div>"
        parts = self._parts()
        if [id(p) for p in self.layout.objects] != [id(p) for p in parts]:
            self.layout.objects = parts
        if not self.detailed:
            return
        if self.gauge is not None:
            self._update_gauge(s)
        self.alarms.object = self._alarms_html(s)
        self.history.object = self._history_html(s)

    def _update_gauge(self, s) -> None:
        if self.gauge is None:
            return
        settings = _settings(s)
        assert isinstance(settings, MeterSettings)  # the gauge is a meter test set's
        last = s["history"][-1] if s["history"] else None
        self.gauge.param.update(
            ranges=list(settings.ranges), epsilon=list(settings.epsilon), meter_name=f"{settings.meter} meter",
            empirical_overfitting=None, signal=last["signal"] if last else None,
            incremental_signal=last["incremental_signal"] if last else None,
            epsilon_shown=last["epsilon"] if last else None,
            supported_epsilon=(s["supported"]["epsilon"][last["signal"] - 1]
                               if last and s["supported"] and s["supported"].get("epsilon") else None))

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
        settings = _settings(s)
        meter = isinstance(settings, MeterSettings)
        m = len(settings.epsilon) if isinstance(settings, MeterSettings) else 0
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
            'notebook); it appears here within a second.</div>',
            sizing_mode="stretch_width")
        self.reading = HTML('<div class="md-note">Reading the store…</div>', sizing_mode="stretch_width")
        self._build_admin()
        self.model.param.watch(self._render, "revision")
        self._live = live
        served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
        if served:  # every read runs off the event loop; the page changes only once the browser is connected
            # the first read of the store starts while the page is being built (shown once connected)
            self._first_read = thread_pool().submit(self.model.check)
            on_screen(self._start)
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
            update = await (asyncio.wrap_future(first) if first is not None else in_thread(self.model.check))
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
            elif card.status != status:  # a change, or another view (a token typed)
                card.status = status
        waiting = [] if self._read_once else [self.reading]
        shown = [self.cards[n].layout for n in reversed(m.names)] or waiting or [self.empty]  # the newest first
        if [id(c) for c in self.column.objects] != [id(c) for c in shown]:
            self.column.objects = shown
        self.select.options = list(m.names)
        for widget in self.admin_widgets:  # nothing to act on in an empty store
            widget.disabled = not m.names

    # -- the sidebar: a token to see more, and the admin actions
    def _build_admin(self):
        self.select = pn.widgets.Select(label="Test set", options=[], sizing_mode="stretch_width")
        self.token = pn.widgets.PasswordInput(label="Token (a tenant's, or the admin token)", placeholder="mdt_…",
                                              sizing_mode="stretch_width", css_classes=["testset-admin-token"])
        self.show = pn.widgets.Button(label="Show with this token", css_classes=["testset-show"],
                                      sizing_mode="stretch_width")
        self.show.on_click(self._show_handler)
        self.view_message = HTML("", sizing_mode="stretch_width", css_classes=["testset-view-message"])
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
            button.on_click(self._ask_retire if action == "retire" else self._handler(action))
        self._build_confirm()
        self.admin_widgets = [self.select, self.token, self.show, self.tenant, *self.buttons.values()]
        self.download = pn.widgets.FileDownload(visible=False, sizing_mode="stretch_width", color="success")
        self.admin_message = HTML("", sizing_mode="stretch_width", css_classes=["testset-admin-message"])

    def _build_confirm(self):
        """"Retire now" asks first, naming the test set and what follows (issue 24)."""
        self.confirm_text = HTML("", sizing_mode="stretch_width")
        self.confirm_yes = pn.widgets.Button(label="Yes, retire it", color="danger", css_classes=["testset-retire-yes"],
                                             sizing_mode="stretch_width")
        self.confirm_no = pn.widgets.Button(label="Cancel", css_classes=["testset-retire-cancel"],
                                            sizing_mode="stretch_width")
        self.confirm_yes.on_click(self._handler("retire"))
        self.confirm_no.on_click(lambda _event: self._hide_confirm())
        self.confirm = pn.Column(self.confirm_text, pn.Row(self.confirm_yes, self.confirm_no, sizing_mode="stretch_width"),
                                 visible=False, sizing_mode="stretch_width", css_classes=["testset-retire-confirm"])
        self.select.param.watch(lambda _event: self._hide_confirm(), "value")

    def _ask_retire(self, _event):
        name = self.select.value
        if not name:
            self.admin_message.object = '<div class="md-error">No test set to act on.</div>'
            return
        status = self.model.testsets.get(name, {})
        used = f"{status['steps_used']} of {status['steps']} steps used" if status else "its steps"
        self.confirm_text.object = (
            f'<div class="md-error testset-retire-question">Retire <b>{esc(name)}</b> now ({esc(used)})? It will '
            f"accept no more submissions from anyone, and this cannot be undone. Its test scores and labels may then "
            f"be released to the developers (export), and further work needs a new test set.</div>")
        self.confirm_yes.name = f"Yes, retire {name}"
        self.confirm.visible = True

    def _hide_confirm(self):
        self.confirm.visible = False

    async def _show_handler(self, _event):
        name = self.select.value
        if not name:
            self.view_message.object = '<div class="md-error">No test set to show.</div>'
            return
        result = await in_thread(self.model.use_token, name, self.token.value)
        cls = "md-ok" if result["ok"] else "md-error"
        self.view_message.object = f'<div class="{cls}">{esc(result["message"])}</div>'
        if result["ok"]:
            await self._poll()

    def _handler(self, action: str):
        async def handler(_event):  # a coroutine function, so Panel awaits it on the page's loop
            await self._act(action)
        return handler

    async def _act(self, action: str):
        name, token = self.select.value, self.token.value
        if action == "retire":
            self._hide_confirm()
        if not name:
            self.admin_message.object = '<div class="md-error">No test set to act on.</div>'
            return
        for b in self.buttons.values():
            b.disabled = True
        try:
            result = await in_thread(self.model.run_action, action, name, token, self.tenant.value)
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
        """A token to see more, and the admin actions (the sidebar of the served page)."""
        return pn.Column(
            HTML("<b>See more with a token</b> — without one this page shows each test set's state and steps; a "
                 "tenant token adds the plan, alarms and your own history, the admin token every tenant's",
                 margin=(5, 5, 0, 5)),
            self.select, self.token, self.show, self.view_message,
            HTML("<b>Admin actions</b> — they need the test set's admin token (shown once at creation)",
                 margin=(10, 5, 0, 5)),
            self.buttons["revert"], self.buttons["retire"], self.confirm, self.tenant,
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
            "This page follows the store live. Without a token it shows each test set's state and steps only; a "
            "tenant token shows that tenant's own history, never another's: the tenants' shares of the budget "
            "assume they do not communicate (Appendix B).</div>")


def page():
    """The served /testsets page: admin actions in the sidebar, the test sets in the main area."""
    return TestSets()
