"""One log line, without a traceback, for a caller's mistake in a run served by langgraph-api.

langgraph-api logs a failed run twice, each time with the traceback: "Run encountered an error in
graph" (worker.wrap_user_errors) and "Background run failed" (worker.worker). For a `CitewiseError`
(a bad question, an unknown home, a damaged store) the message already says everything, and the
client receives it (a CitewiseError is a ValueError, whose message langgraph-api returns), so this
filter drops the first record and strips the traceback from the second, as a warning: a probe of 60
bad inputs leaves 60 lines, not 120 tracebacks. Any other exception (a server fault) keeps its
tracebacks. langgraph-api offers no hook for run errors (custom HTTP exception handlers see only
requests, and runs execute in background workers), so this is a logging filter on its worker logger.
"""

from __future__ import annotations

import logging

WORKER_LOGGER = "langgraph_api.worker"
USER_ERROR_MARK = "'citewise.errors."  # how `{type(e)}` of every CitewiseError begins in the worker's messages
FIRST_REPORT = "Run encountered an error in graph"


class UserErrorLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        event = record.msg if isinstance(record.msg, dict) else None  # structlog hands the event dict over
        text = str(event.get("event", "")) if event is not None else str(record.msg)
        if USER_ERROR_MARK not in text:
            return True
        if text.startswith(FIRST_REPORT):
            return False  # the worker reports the same failure once more, below
        if event is not None:
            event.pop("exception", None)
            event.pop("exc_info", None)
            event["level"] = "warning"
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def install() -> None:
    """Idempotent: the graph module may be imported more than once by the server."""
    logger = logging.getLogger(WORKER_LOGGER)
    if not any(isinstance(f, UserErrorLogFilter) for f in logger.filters):
        logger.addFilter(UserErrorLogFilter())
