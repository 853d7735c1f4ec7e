"""`panel serve apps/planner.py` serves the planner at /planner."""
from meter_dashboard.app.pages import build

build("planner").servable()
