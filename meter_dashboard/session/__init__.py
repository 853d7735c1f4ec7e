"""Session replay: a development trace through the five-colour meter.

Roles: :mod:`.trace` and :mod:`.trace_formats` (reading traces), :mod:`.replay` (signals, budgets,
alarms), :mod:`.model` (``replay()`` and ``SessionModel``), :mod:`.text` (sentences and tables),
:mod:`.figures` (Bokeh history plots), :mod:`.report` (the HTML report), :mod:`.view` (the page),
:mod:`.cli` (the ``replay`` verb)."""
