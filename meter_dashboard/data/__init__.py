"""Example files shipped with meter-dashboard (read with ``importlib.resources``), their
provenance notes (``*.md``) and the seeded scripts that generate the synthetic ones
(``python -m meter_dashboard.data.generate_<name>``)."""
