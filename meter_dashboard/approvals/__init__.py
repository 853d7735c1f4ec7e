"""SRGP approvals of model modifications: :mod:`.trace` (modification traces), :mod:`.model`
(procedures and the page model), :mod:`.simulation` and :mod:`.workers` (FWER and power simulations
in worker processes), :mod:`.figures` (Bokeh), :mod:`.view` and :mod:`.view_text` (the /approve page),
:mod:`.cli` (the ``approve`` verb)."""
