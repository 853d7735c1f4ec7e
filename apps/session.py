"""`panel serve apps/session.py` serves the session replay at /session."""
from meter_dashboard.app.pages import serve_page

serve_page("session")  # attached to the session's document with its Location (server_doc)
