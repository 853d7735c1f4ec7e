"""`panel serve apps/planner.py` serves the planner at /planner."""
from meter_dashboard.pages import build

build("planner").servable()
