"""LangGraph graphs. `kb_agent` is the citewise agent (see graphs/kb_agent.py)."""
