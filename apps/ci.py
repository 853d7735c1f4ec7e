"""`panel serve apps/ci.py` serves the ease.ml/ci page at /ci."""
from meter_dashboard.app.pages import build

build("ci").servable()
