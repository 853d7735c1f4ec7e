"""A minimal Bokeh-protocol client: many sessions from one process, without a browser.

It does what Panel's page does on the wire, and nothing else: GET the page (the server
creates the session and returns its token), open ``/<page>/ws`` with the ``bokeh`` subprotocol,
pull the document (``PULL-DOC-REQ``), report ``document_ready`` (Panel's ``onload`` callbacks
run then; a dashboard page builds its view then, and :meth:`Session.open` waits until the view
has arrived, as a person waits for the page), then send a widget change the way the browser does
(``value`` then the ``enter-pressed`` event; a form's field: the form's message naming it) and time the ``PATCH-DOC`` that brings the answer back.  There is no
rendering, so the figures are the server's share of a browser's round trip: the server under
load, not chromium.

Messages (Bokeh's wire format): a header, metadata and content as three text frames, then
``num_buffers`` pairs of (buffer header text frame, binary frame).
"""
from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import time
import uuid

from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

_TOKEN = re.compile(r'"token"\s*:\s*"([^"]+)"')
#: The dashboard's page root (app/pages.py) and the class it gains once its view is built.
PAGE_ROOT, PAGE_READY = "md-page", "md-ready"


def _objects(node):
    """Every serialized Bokeh model (``{"type": "object", "id": ...}``) in a document's JSON."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "object" and "id" in item:
                yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class Session:
    """One Bokeh session driven over its websocket (``await Session.open(base, "/planner")``)."""

    def __init__(self, ws, page: str):
        self.ws = ws
        self.page = page
        self.doc: dict = {}
        self.texts: dict[str, str] = {}  # model id -> latest "text" (HTML panes)
        self.models: dict[str, dict] = {}  # model id -> the model as first serialized (pulled or patched in)
        self.built = asyncio.Event()  # the page's view is in the document
        self.changed = asyncio.Event()
        self.errors: list[str] = []
        self.closed = False
        self._pending: dict[str, asyncio.Future] = {}
        self._reader: asyncio.Task | None = None
        self._inputs: dict[str, str] = {}
        self._numeric: dict[str, bool] = {}  # input id -> a number box (Bokeh NumericInput)

    # ------------------------------------------------------------------ connection
    @classmethod
    async def open(cls, base: str, page: str, query: str = "", timeout: float = 120,
                   headers: dict | None = None) -> Session:
        """GET the page, connect, pull the document, report it ready, and wait until its view is built."""
        client = AsyncHTTPClient()
        response = await client.fetch(base + page + query, request_timeout=timeout, headers=headers)
        return await cls.connect(base, page, response.body, timeout, headers)

    @classmethod
    async def connect(cls, base: str, page: str, body: bytes, timeout: float = 120,
                      headers: dict | None = None) -> Session:
        """:meth:`open` for a page already fetched (``body``: its HTML, which holds the session's token)."""
        match = _TOKEN.search(body.decode("utf-8"))
        if match is None:
            raise RuntimeError(f"no session token in {page}")
        request = HTTPRequest(base.replace("http", "ws", 1) + page + "/ws", headers={"Origin": base, **(headers or {})},
                              request_timeout=timeout)
        ws = await websocket_connect(request, subprotocols=["bokeh", match.group(1)],
                                     max_message_size=256 * 2**20)
        session = cls(ws, page)
        await session._receive()  # ACK
        session._reader = asyncio.ensure_future(session._read_forever())
        reply = await session.request("PULL-DOC-REQ", {}, timeout=timeout)
        session.doc = reply["doc"]
        session._learn(session.doc)
        roots = [m for m in session.models.values()
                 if PAGE_ROOT in m.get("attributes", {}).get("css_classes", [])]
        if not roots or any(PAGE_READY in m["attributes"]["css_classes"] or m["attributes"].get("children")
                            for m in roots):
            session.built.set()  # not a dashboard page (the floor app), or built within the first response
        await session.send_events([{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
            "type": "event", "name": "document_ready", "values": {"type": "map"}}}])
        await asyncio.wait_for(session.built.wait(), timeout)
        if session.errors:
            raise ConnectionError(session.errors[-1])
        return session

    def _learn(self, node) -> None:
        """Record the models in ``node`` (a pulled document or a patch's new value) and their texts."""
        for model in _objects(node):
            self.models.setdefault(model["id"], model)
            text = model.get("attributes", {}).get("text")
            if isinstance(text, str):
                self.texts[model["id"]] = text

    async def close(self) -> None:
        self.closed = True
        self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def _receive(self):
        header = await self._frame()
        metadata = await self._frame()
        content = await self._frame()
        for _ in range(json.loads(header).get("num_buffers", 0)):
            await self._frame()
            await self._frame()
        return json.loads(header), json.loads(metadata), json.loads(content)

    async def _frame(self):
        frame = await self.ws.read_message()
        if frame is None:
            raise ConnectionError("websocket closed by the server")
        return frame

    async def _read_forever(self) -> None:
        try:
            while True:
                header, _, content = await self._receive()
                kind = header.get("msgtype")
                if kind == "PATCH-DOC":
                    for event in content.get("events", []):
                        if event.get("kind") == "ModelChanged" and event.get("attr") == "text":
                            self.texts[event["model"]["id"]] = event["new"]
                        elif event.get("kind") == "ModelChanged":  # panes built later arrive whole
                            self._learn(event.get("new"))
                            if event.get("attr") == "css_classes" and PAGE_READY in (event.get("new") or []):
                                self.built.set()
                    self.changed.set()
                elif kind == "ERROR":
                    self.errors.append(content.get("text", "error"))
                reqid = header.get("reqid")
                if reqid in self._pending:
                    self._pending.pop(reqid).set_result(content)
        except (ConnectionError, asyncio.CancelledError) as exc:
            if not self.closed:
                self.errors.append(f"connection lost: {exc}")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("websocket closed"))
            self.changed.set()
            self.built.set()  # nothing more will come: open() reports the error

    # ------------------------------------------------------------------ messages
    async def _send(self, msgtype: str, content: dict, msgid: str | None = None) -> str:
        msgid = msgid or uuid.uuid4().hex
        await self.ws.write_message(json.dumps({"msgid": msgid, "msgtype": msgtype}))
        await self.ws.write_message("{}")
        await self.ws.write_message(json.dumps(content))
        return msgid

    async def request(self, msgtype: str, content: dict, timeout: float = 60):
        """Send a message and wait for the reply that names it (``reqid``)."""
        msgid = uuid.uuid4().hex
        future = self._pending[msgid] = asyncio.get_running_loop().create_future()
        await self._send(msgtype, content, msgid)
        return await asyncio.wait_for(future, timeout)

    async def send_events(self, events: list) -> None:
        await self._send("PATCH-DOC", {"events": events})

    # ------------------------------------------------------------------ the page
    def input_id(self, css_class: str) -> str:
        """The id of the text box inside the component with ``css_class`` (or the box itself)."""
        if css_class not in self._inputs:
            self._inputs[css_class] = self._find_input(css_class)
        return self._inputs[css_class]

    def _find_input(self, css_class: str) -> str:
        field = self._find_form_field(css_class)
        if field is not None:
            return field
        for model in list(self.models.values()):
            if css_class in model.get("attributes", {}).get("css_classes", []):
                for inner in [model, *_objects(model.get("attributes", {}))]:
                    if inner["name"].endswith(("TextInput", "NumericInput", "Spinner")):
                        self._numeric[inner["id"]] = not inner["name"].endswith("TextInput")
                        return inner["id"]
        raise KeyError(f"no text or number input with class {css_class!r} on {self.page}")

    def _find_form_field(self, css_class: str) -> str | None:
        """``form:<model id>:<field>`` for a field of a form (ui/form.py) whose element has ``css_class``."""
        pattern = re.compile(r'class="md-field[^"]*\b' + re.escape(css_class) + r'\b[^"]*">.*?data-field="([^"]+)"')
        for data in list(self.models.values()):
            match = pattern.search(data.get("attributes", {}).get("markup") or "")
            if match is None:
                continue
            for model in list(self.models.values()):
                if (model.get("attributes", {}).get("data") or {}).get("id") == data["id"]:
                    return f"form:{model['id']}:{match.group(1)}"
        return None

    async def wait_text_id(self, marker: str, timeout: float = 120) -> str:
        """:meth:`text_id`, waiting for a pane that a page builds after it loaded (``/approve``)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                return self.text_id(marker)
            except KeyError:
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    raise
                self.changed.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), timeout=min(left, 1.0))

    def text_id(self, marker: str) -> str:
        """The id of the HTML pane whose markup contains ``marker`` (a CSS class)."""
        for model_id, text in self.texts.items():
            if marker in text:
                return model_id
        raise KeyError(f"no HTML pane containing {marker!r} on {self.page}")

    def value_in(self, model_id: str, css_class: str) -> str | None:
        """The text of the element with ``css_class`` in pane ``model_id`` (HTML unescaped)."""
        markup = html.unescape(self.texts.get(model_id, ""))
        match = re.search(r'class="[^"]*\b' + re.escape(css_class) + r'\b[^"]*"[^>]*>([^<]*)<', markup)
        return match.group(1).strip() if match else None

    async def type_value(self, input_id: str, text: str) -> None:
        """Type ``text`` into the box and press Enter, as the browser reports it."""
        if input_id.startswith("form:"):  # a form's field: the form's script sends one message naming it
            _, model_id, name = input_id.split(":", 2)
            await self.send_events([{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
                "type": "event", "name": "data_event", "values": {"type": "map", "entries": [
                    ["model", {"id": model_id}],
                    ["data", {"type": "map", "entries": [["kind", "value"], ["name", name], ["value", text]]}]]}}}])
            return
        if self._numeric.get(input_id):
            await self.send_events([{"kind": "ModelChanged", "model": {"id": input_id}, "attr": "value",
                                     "new": float(text)}])
            return
        await self.send_events([
            {"kind": "ModelChanged", "model": {"id": input_id}, "attr": "value_input", "new": text},
            {"kind": "ModelChanged", "model": {"id": input_id}, "attr": "value", "new": text},
        ])
        await self.send_events([{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
            "type": "event", "name": "enter-pressed", "values": {"type": "map", "entries": [
                ["model", {"id": input_id}], ["value_input", text]]}}}])

    async def wait_value(self, model_id: str, css_class: str, expected: str, timeout: float = 60) -> None:
        """Until the element with ``css_class`` in pane ``model_id`` shows ``expected``."""
        deadline = time.monotonic() + timeout
        while self.value_in(model_id, css_class) != expected:
            if self.errors:
                raise ConnectionError(self.errors[-1])
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{css_class} did not show {expected!r} within {timeout} s")
            self.changed.clear()
            if self.value_in(model_id, css_class) == expected:
                break
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def change(self, input_css: str, text: str, pane_id: str, value_css: str, expected: str,
                     timeout: float = 60) -> float:
        """Seconds from typing ``text`` into ``input_css`` until ``value_css`` shows ``expected``."""
        start = time.perf_counter()
        await self.type_value(self.input_id(input_css), text)
        await self.wait_value(pane_id, value_css, expected, timeout)
        return time.perf_counter() - start


