from meter_dashboard.app.pages import serve_page

serve_page("approve")  # attached to the session's document with its Location (server_doc)
