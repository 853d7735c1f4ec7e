"""`panel serve apps/planner.py` serves the planner at /planner."""
from meter_dashboard.app.pages import serve_page

serve_page("planner")  # attached to the session's document with its Location (server_doc)
