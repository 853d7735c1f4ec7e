"""What a refused trace names: its bad cells, up to :data:`MAX_PROBLEMS`, each with row and column.

The readers of :mod:`meter_dashboard.session.trace_formats` collect the problems of a pass in a
:class:`Problems` and raise one :class:`TraceProblems` (an :class:`InputError`) naming them all,
so a person fixes ten cells at once instead of uploading the file ten times.
"""
from __future__ import annotations

from ..core.validation import InputError

__all__ = ["TraceProblems", "Problems", "MAX_PROBLEMS"]


#: Bad cells named in one refusal (the first ones in the file; the reader stops looking after one more).
MAX_PROBLEMS = 10


class TraceProblems(InputError):
    """Several bad cells (or rows) in one trace, each named by row and column.

    :attr:`problems` holds the first :data:`MAX_PROBLEMS` (each an :class:`InputError`);
    :attr:`more` is True when the file has more.  The message lists them all; with a single
    problem it is that problem's own message.  ``parameter``, ``rule``, ``got`` and
    ``location`` are the first problem's.
    """

    def __init__(self, problems, more: bool = False):
        first = problems[0]
        super().__init__(first.parameter, first.rule, first.got, location=first.location)
        self.problems = tuple(problems)
        self.more = more
        if len(self.problems) > 1 or more:
            head = (f"the first {len(self.problems)} of more than {len(self.problems)} problems in the trace"
                    if more else f"{len(self.problems)} problems in the trace")
            self.args = (head + ": " + "; ".join(str(p) for p in self.problems),)


class Problems:
    """Collects the problems of a pass (at most :data:`MAX_PROBLEMS`, noting whether there are more)."""

    def __init__(self):
        self.items: list = []
        self.more = False

    def add(self, exc: InputError) -> None:
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(exc)
        else:
            self.more = True

    @property
    def full(self) -> bool:
        """Enough found: one more than can be named shows there are more; stop looking."""
        return self.more

    def raise_any(self) -> None:
        if self.items:
            raise TraceProblems(self.items, self.more) if len(self.items) > 1 or self.more else self.items[0]
