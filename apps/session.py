"""`panel serve apps/session.py` serves the session replay at /session."""
from meter_dashboard.app.pages import build

build("session").servable()
