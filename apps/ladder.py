from meter_dashboard.pages import build

build("ladder").servable()
