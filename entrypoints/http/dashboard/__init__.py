"""The dashboard: server-rendered pages under ``/app`` for a logged-in session (decision 46).

Each page module renders a Jinja template from what the API's own routes answer, called in process
on the session's behalf (``api``); nothing here reads an aggregate or a view of its own.
"""
