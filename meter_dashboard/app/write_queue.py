"""Every message Panel queues for a browser is sent: a fix for Panel 1.9's queue of waiting writes.

When Panel has changes for a browser while that browser's websocket is busy (Bokeh writing a
reply, or Panel's own queue not yet empty), it queues the message (``panel.io.document._WRITE_MSGS``),
marks the document as blocked (``_WRITE_BLOCK``: later messages queue behind) and starts a task
(``_dispatch_msgs``) that sends the queue when the socket is free.  A task that finished sending
lifts the block, even if a message was queued while it waited for its writes; the task started for
that message then sees no block and returns, and the message stays queued until the page changes
again.  On a page whose last change is its numbers (a planner opened from a link), the numbers
never arrive: the page shows "computing…" for good.  Measured before this fix: 22 stranded queues
and one planner page without numbers in 120 pages opened ten at a time on one server.

:func:`install` wraps Panel's task so that a queue left with no block is blocked again and sent,
in order, before any newer message (Panel's writer queues new messages while the document has a
queue).  It is idempotent, and does nothing on a Panel without these internals (the pin is
``panel>=1.9,<1.10``; tests/views/test_write_queue.py checks the fix against the installed Panel).
"""
from __future__ import annotations

import functools
import logging

log = logging.getLogger(__name__)

__all__ = ["install", "installed"]


def installed() -> bool:
    """Whether Panel's queue of waiting writes is the fixed one."""
    from panel.io import document

    return getattr(getattr(document, "_dispatch_msgs", None), "_md_drains_stranded", False)


def install() -> bool:
    """Make Panel send every message it queued (see the module docstring); True when the fix is in place."""
    from panel.io import document

    if installed():
        return True
    needed = ("_dispatch_msgs", "_dispatch_write_task", "_WRITE_MSGS", "_WRITE_BLOCK")
    if not all(hasattr(document, name) for name in needed):
        log.warning("Panel's write queue has changed (%s); meter-dashboard's fix for stranded messages is off",
                    ", ".join(n for n in needed if not hasattr(document, n)))
        return False
    original = document._dispatch_msgs

    @functools.wraps(original)
    async def dispatch_msgs(doc):
        await original(doc)
        if doc in document._WRITE_MSGS and doc not in document._WRITE_BLOCK:  # stranded: send it after all
            log.debug("sending a stranded queue of %d message(s)",
                      sum(len(msgs) for msgs in document._WRITE_MSGS[doc].values()))
            document._WRITE_BLOCK[doc] = True  # newer messages queue behind it, as Panel intends
            document._dispatch_write_task(doc, document._dispatch_msgs, doc)

    dispatch_msgs._md_drains_stranded = True  # type: ignore[attr-defined]
    document._dispatch_msgs = dispatch_msgs
    return True
