from meter_dashboard.app.pages import build

build("compare").servable()
