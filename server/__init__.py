"""The HTTP routes served beside the LangGraph run API (app.py), and the server's authentication
(auth.py: LangGraph custom auth over the token store in tokens.py)."""
