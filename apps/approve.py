from meter_dashboard.pages import build

build("approve").servable()
