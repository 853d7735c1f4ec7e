from meter_dashboard.pages import build

build("compare").servable()
