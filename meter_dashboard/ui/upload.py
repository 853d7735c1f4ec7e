"""A file upload that is bounded before the file is complete: any page can use it.

:class:`GuardedFileDropper` is Panel's ``FileDropper`` (chunked uploads over the
websocket, FilePond in the browser) with the limits of :mod:`meter_dashboard.core.files`:

- the browser checks the size before sending anything (FilePond's ``maxFileSize``, from
  :func:`~meter_dashboard.core.files.client_size_limit`) and says "File is too large" in the
  drop area: a file too big never reaches the websocket;
- each chunk is one websocket message of :data:`~meter_dashboard.core.files.UPLOAD_CHUNK_BYTES`,
  far below Bokeh's cap (a larger message would close the session);
- the server counts the chunks as they arrive (:class:`~meter_dashboard.core.files.ChunkedUpload`)
  and refuses the file at the first chunk that passes the limit, so a session never buffers
  more than one file at the limit plus a chunk, even from a browser that never finishes;
- a refused file sets :attr:`GuardedFileDropper.upload_error` (show it beside the drop area);
  a complete one replaces :attr:`value` (``{name: bytes}``, only the latest file is kept);
- the drop area itself says what became of the file (:attr:`GuardedFileDropper.status`): the
  browser's FilePond would show a green "Upload complete" as soon as the bytes are sent, so a
  refused file is drawn in FilePond's error colour with "File refused" and the reason, and with
  ``checked=True`` the page's reader decides: the file shows "Checking…" until the page calls
  :meth:`~GuardedFileDropper.accept` (then "Upload complete", green) or
  :meth:`~GuardedFileDropper.refuse` (the reader's message, naming the bad cells, is shown beside it).

Usage (any page): ``drop = GuardedFileDropper(parameter="loss file", accepted_filetypes=[".csv"], checked=True)``,
then watch ``drop.param.value`` and ``drop.param.upload_error``, and call ``drop.accept()`` or
``drop.refuse(message)`` once the file is read -- or hand the reading to :meth:`GuardedFileDropper.load`,
which does both (the reader in a worker thread).

:class:`TableUpload` is that glue for a page whose model reads one table (``prepare``, ``apply_table``,
``fail``, ``result``): the drop area, its refusal and the result's CSV download in one section, so a
page writes none of it again.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import panel as pn
import param

from ..core.report import csv_with_inputs
from ..core.tables import spreadsheet_frame
from ..core.files import MAX_UPLOAD_BYTES, UPLOAD_CHUNK_BYTES, ChunkedUpload, client_size_limit, human_bytes
from ..core.runtime import in_thread
from ..core.validation import InputError

__all__ = ["GuardedFileDropper", "STATUS_CSS", "TableUpload"]

#: What the drop area shows in each state (FilePond's item in the widget's shadow root): the host
#: element carries ``md-upload-<status>``.  The reason is the page's message beside the drop area.
STATUS_CSS = """
:host(.md-upload-checking) [data-filepond-item-state='processing-complete'] .filepond--item-panel,
:host(.md-upload-receiving) [data-filepond-item-state='processing-complete'] .filepond--item-panel {
  background-color: #64605e;
}
:host(.md-upload-refused) [data-filepond-item-state='processing-complete'] .filepond--item-panel {
  background-color: #c44e47;
}
:host(.md-upload-checking) [data-filepond-item-state='processing-complete'] .filepond--file-status-main,
:host(.md-upload-refused) [data-filepond-item-state='processing-complete'] .filepond--file-status-main,
:host(.md-upload-refused) [data-filepond-item-state='processing-complete'] .filepond--file-status-sub {
  font-size: 0;
}
:host(.md-upload-checking) [data-filepond-item-state='processing-complete'] .filepond--file-status-main::after {
  content: "Checking\2026";
  font-size: 0.75rem;
}
:host(.md-upload-refused) [data-filepond-item-state='processing-complete'] .filepond--file-status-main::after {
  content: "File refused";
  font-size: 0.75rem;
}
:host(.md-upload-refused) [data-filepond-item-state='processing-complete'] .filepond--file-status-sub::after {
  content: "see the message below";
  font-size: 0.625rem;
}
:host(.md-upload-checking) .filepond--processing-complete-indicator,
:host(.md-upload-refused) .filepond--processing-complete-indicator {
  visibility: hidden;
}
"""
_STATES = ("", "receiving", "checking", "accepted", "refused")


class GuardedFileDropper(pn.widgets.FileDropper):
    """Panel's ``FileDropper`` with a size limit enforced in the browser and chunk by chunk on the server."""

    max_bytes = param.Integer(default=MAX_UPLOAD_BYTES, bounds=(1, None), constant=True,
                              doc="The largest file accepted (bytes).")
    parameter = param.String(default="file", doc="What messages call the upload (e.g. 'trace').")
    upload_error = param.String(default="", constant=True, doc="Why the last file was refused ('' if it was not).")
    received = param.Integer(default=0, constant=True, doc="Bytes of the file arriving now (0 when idle).")
    checked = param.Boolean(default=False, doc=(
        "The page reads each file and says so with accept() or refuse(); until then the drop area shows "
        "'Checking…', never a green 'Upload complete'.  Off: a file that arrived whole is accepted at once."))
    status = param.Selector(default="", objects=list(_STATES), constant=True, doc=(
        "What became of the last file: receiving, checking (the page reads it), accepted or refused."))

    _rename = {**pn.widgets.FileDropper._rename, "max_bytes": None, "parameter": None, "upload_error": None,
               "received": None, "checked": None, "status": None}  # server-side only

    def __init__(self, **params):
        limit = params.get("max_bytes", MAX_UPLOAD_BYTES)
        params.setdefault("chunk_size", UPLOAD_CHUNK_BYTES)
        params.setdefault("max_file_size", client_size_limit(limit))
        params.setdefault("multiple", False)
        params["stylesheets"] = [*params.get("stylesheets", []), STATUS_CSS]
        super().__init__(**params)
        self._upload = ChunkedUpload(self.max_bytes, self.chunk_size, self.parameter)
        self._base_classes = list(self.css_classes)

    def _show(self, status: str) -> None:
        """Set :attr:`status` and draw it (the host element's class)."""
        classes = self._base_classes + ([f"md-upload-{status}"] if status else [])
        with param.edit_constant(self):
            self.param.update(status=status, css_classes=classes)

    def accept(self) -> None:
        """The page read the last file: the drop area says so (FilePond's green "Upload complete")."""
        self._set(upload_error="")
        self._show("accepted")

    def refuse(self, message: str = "") -> None:
        """The page refused the last file: the drop area turns to the error colour and says so.

        ``message`` also becomes :attr:`upload_error` (one message for the page to show beside it);
        a page that shows its own, longer message (the session's list of bad cells) passes none.
        """
        if message:
            self._set(upload_error=str(message))
        self._show("refused")

    async def load(self, data: bytes, name: str, read: Callable, apply: Callable, fail: Callable,
                   dispatch: Callable = lambda fn: fn()) -> bool:
        """Read an upload with ``read(data, name)`` in a worker thread, then ``apply(table)`` or ``fail(error)``.

        ``apply``/``fail`` and :meth:`accept`/:meth:`refuse` run through ``dispatch`` (a page: its
        next tick under the document lock); an :class:`InputError` from ``read`` or ``apply``
        refuses the file.  Returns whether the file was read.
        """
        try:
            table = await in_thread(read, data, name)
        except InputError as exc:
            dispatch(functools.partial(self._refused, fail, exc))
            return False
        dispatch(functools.partial(self._taken, apply, fail, table))
        return True

    def _refused(self, fail: Callable, exc: InputError) -> None:
        fail(exc)
        self.refuse(str(exc))

    def _taken(self, apply: Callable, fail: Callable, table) -> None:
        try:
            apply(table)  # may still refuse it (a prespecified plan whose rows do not match the trace)
        except InputError as exc:
            self._refused(fail, exc)
            return
        self.accept()

    @property
    def limit_text(self) -> str:
        """The limit in words (``10 MiB``)."""
        return human_bytes(self.max_bytes)

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    def _process_event(self, event) -> None:
        data = event.data
        if event.event_name == "delete_event":
            self._upload.discard()
            self._set(received=0)
            return
        try:
            content = self._upload.add(str(data["name"]), int(data["chunk"]), int(data["total_chunks"]),
                                       data["data"])
        except InputError as exc:
            self._set(received=0)
            self.refuse(str(exc))
            return
        except (KeyError, TypeError, ValueError):
            self._upload.discard()
            self._set(received=0)
            self.refuse(f"{self.parameter}: the upload arrived damaged; upload the file again")
            return
        if content is None:  # more chunks to come (or the rest of a refused file: ignored, still refused)
            if self._upload.receiving is not None and self.status != "receiving":
                self._show("receiving")
            self._set(received=self._upload.buffered)
            return
        self._set(upload_error="", received=0)
        self._show("checking" if self.checked else "accepted")
        self.mime_type = {data["name"]: data.get("type", "")}
        self.value = {data["name"]: content}  # bytes, always; only the latest file is kept


class TableUpload(pn.viewable.Viewer):
    """A page's data file: a drop area read into a table model, its refusal, and the model's result as CSV.

    ``model`` reads files the way the comparison's and the Ladder's models do: ``prepare(data, name)``
    (run in a worker thread), ``apply_table(table)``, ``fail(error)`` and a ``result`` with ``to_frame()``.
    ``dispatch`` is the page's :func:`~meter_dashboard.ui.sections.document_dispatch`.  The drop area is
    :attr:`dropper` (a :class:`GuardedFileDropper`, CSS class ``css``); a refused file (too large, damaged)
    goes to ``model.fail`` and the last good table stays.
    """

    def __init__(self, model, dispatch: Callable, *, parameter: str, css: str, **params):
        super().__init__(**params)
        self.model, self.dispatch = model, dispatch
        # bounded before it is complete: the browser refuses a file over the limit, the server counts chunks
        self.dropper = GuardedFileDropper(parameter=parameter, layout="compact", height=80, checked=True,
                                          accepted_filetypes=[".csv", "text/csv", "text/plain"],
                                          sizing_mode="stretch_width", css_classes=[css])
        pn.bind(self._refused, self.dropper.param.upload_error, watch=True)
        pn.bind(self.read, self.dropper.param.value, watch=True)

    async def read(self, files: dict | None) -> None:
        """Read the latest of ``files`` (``{name: bytes or text}``) into the model (the reading in a worker thread)."""
        for name, data in (files or {}).items():  # the latest file only
            data = data.encode("utf-8") if isinstance(data, str) else data
            m = self.model
            await self.dropper.load(data, name, m.prepare, m.apply_table, m.fail, self.dispatch)

    def _refused(self, message: str) -> None:
        if message:  # too large, or damaged on the way: the last good table stays
            self.dispatch(lambda: self.model.fail(message))

    def result_csv(self, pairs: Callable) -> str | None:
        """The model's result as a spreadsheet-safe CSV, with ``pairs(result)`` first as ``# name: value`` lines."""
        res = self.model.result
        return None if res is None else csv_with_inputs(pairs(res), spreadsheet_frame(res.to_frame()), index=False)

    def __panel__(self):
        return self.dropper
