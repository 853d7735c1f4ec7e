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
- a file the page refuses after reading it (bad cells): :meth:`GuardedFileDropper.show_refused`
  turns the drop area's file red and replaces FilePond's green "Upload complete" with
  "Refused — see why below" (``dashboard.css``, class ``md-upload-refused``); the next file clears it.

Usage (any page): ``drop = GuardedFileDropper(parameter="loss file", accepted_filetypes=[".csv"])``,
then watch ``drop.param.value`` and ``drop.param.upload_error``; call ``drop.show_refused(True)``
when the page refuses the content.
"""
from __future__ import annotations

import panel as pn
import param

from ..core.files import MAX_UPLOAD_BYTES, UPLOAD_CHUNK_BYTES, ChunkedUpload, client_size_limit, human_bytes
from ..core.validation import InputError
from .style import STYLESHEET

__all__ = ["GuardedFileDropper", "REFUSED_CLASS"]

#: The class that shows a refused file in the drop area (dashboard.css, "uploads").
REFUSED_CLASS = "md-upload-refused"


class GuardedFileDropper(pn.widgets.FileDropper):
    """Panel's ``FileDropper`` with a size limit enforced in the browser and chunk by chunk on the server."""

    max_bytes = param.Integer(default=MAX_UPLOAD_BYTES, bounds=(1, None), constant=True,
                              doc="The largest file accepted (bytes).")
    parameter = param.String(default="file", doc="What messages call the upload (e.g. 'trace').")
    upload_error = param.String(default="", constant=True, doc="Why the last file was refused ('' if it was not).")
    received = param.Integer(default=0, constant=True, doc="Bytes of the file arriving now (0 when idle).")

    _rename = {**pn.widgets.FileDropper._rename, "max_bytes": None, "parameter": None, "upload_error": None,
               "received": None}  # server-side only
    _stylesheets = [*pn.widgets.FileDropper._stylesheets, STYLESHEET.name]  # the refused state lives in dashboard.css

    def __init__(self, **params):
        limit = params.get("max_bytes", MAX_UPLOAD_BYTES)
        params.setdefault("chunk_size", UPLOAD_CHUNK_BYTES)
        params.setdefault("max_file_size", client_size_limit(limit))
        params.setdefault("multiple", False)
        super().__init__(**params)
        self._upload = ChunkedUpload(self.max_bytes, self.chunk_size, self.parameter)

    @property
    def limit_text(self) -> str:
        """The limit in words (``10 MiB``)."""
        return human_bytes(self.max_bytes)

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)

    def show_refused(self, refused: bool = True) -> None:
        """Show the file in the drop area as refused (red, "Refused — see why below"), or not."""
        current: list[str] = list(getattr(self, "css_classes") or [])  # a param attribute
        classes = [c for c in current if c != REFUSED_CLASS] + ([REFUSED_CLASS] if refused else [])
        if classes != current:
            self.css_classes = classes

    def _process_event(self, event) -> None:
        data = event.data
        if event.event_name == "delete_event":
            self._upload.discard()
            self._set(received=0)
            return
        if int(data.get("chunk", 0) or 0) == 1:
            self.show_refused(False)  # a new file: the last one's refusal no longer applies
        try:
            content = self._upload.add(str(data["name"]), int(data["chunk"]), int(data["total_chunks"]),
                                       data["data"])
        except InputError as exc:
            self._set(upload_error=str(exc), received=0)
            self.show_refused(True)
            return
        except (KeyError, TypeError, ValueError):
            self._upload.discard()
            self._set(upload_error=f"{self.parameter}: the upload arrived damaged; upload the file again", received=0)
            return
        if content is None:
            self._set(received=self._upload.buffered)
            return
        self._set(upload_error="", received=0)
        self.mime_type = {data["name"]: data.get("type", "")}
        self.value = {data["name"]: content}  # bytes, always; only the latest file is kept
