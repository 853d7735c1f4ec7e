"""`panel serve apps/ci.py` serves the ease.ml/ci page at /ci."""
from meter_dashboard.app.pages import serve_page

serve_page("ci")  # attached to the session's document with its Location (server_doc)
