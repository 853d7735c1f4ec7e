"""SRGP approvals of model modifications: :mod:`.trace` (modification traces), :mod:`.model`
(procedures and the page model), :mod:`.simulation` (FWER and power simulations, in worker processes
through :mod:`meter_dashboard.core.runtime`), :mod:`.text` (the lead and the slide), :mod:`.figures`
(Bokeh), :mod:`.view` and :mod:`.view_text` (the /approve page), :mod:`.cli` (the ``approve`` verb)."""
