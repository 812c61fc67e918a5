"""Ingest progress: one display, one phase at a time, whose unit and total always agree.

An ingest has two long phases with different units: reading files ("documents", counted in files) and
embedding ("embedding", counted in chunks, with its own total). Each phase gets its own display so a
count can never overflow its total. On a terminal that is a tqdm bar with throughput and ETA; when
stderr is not a terminal (CI logs, `| tee`), plain lines every `interval` seconds and one when the phase
ends, since a redrawn bar would be thousands of carriage returns in a log file.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Literal, TextIO

Mode = Literal["bar", "lines", "off"]


def choose_mode(progress: bool | None, stream: TextIO | None = None) -> Mode:
    """None (the API default): a bar on a terminal, else nothing (a library must not write to stderr
    unasked). True (the CLI): a bar on a terminal, else plain lines. False: nothing."""
    stream = stream or sys.stderr
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if progress is False:
        return "off"
    if tty:
        return "bar"
    return "lines" if progress else "off"


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Phase:
    """One phase: call it with the number of units just finished; `close()` ends the display."""

    def __init__(self, label: str, total: int, unit: str, mode: Mode, stream: TextIO, interval: float):
        self.label, self.total, self.unit, self.mode = label, total, unit, mode
        self.stream, self.interval = stream, interval
        self.done = 0
        self.started = time.perf_counter()
        self._last_line = self.started
        self._bar = None
        self._closed = False
        if mode == "bar" and total > 0:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=label, unit=unit, leave=False, file=stream, dynamic_ncols=True)

    def __call__(self, n: int) -> None:
        if self._closed or n <= 0:
            return
        n = min(n, self.total - self.done)  # never past the total, whatever a caller reports
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self.mode == "lines":
            now = time.perf_counter()
            if now - self._last_line >= self.interval and self.done < self.total:
                self._last_line = now
                self.stream.write(self.line(now) + "\n")
                self.stream.flush()
        if self.done >= self.total:
            self.close()

    def rate(self, now: float | None = None) -> float:
        elapsed = (now or time.perf_counter()) - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self, now: float | None = None) -> str:
        now = now or time.perf_counter()
        rate = self.rate(now)
        share = 100.0 * self.done / self.total if self.total else 100.0
        text = f"ingest: {self.label} {self.done}/{self.total} {self.unit}s ({share:.0f}%), {rate:.1f} {self.unit}s/s"
        if self.done < self.total and rate > 0:
            text += f", ETA {_clock((self.total - self.done) / rate)}"
        else:
            text += f", {now - self.started:.1f}s"
        return text

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.mode == "lines" and self.total > 0:
            self.stream.write(self.line() + "\n")
            self.stream.flush()


class Progress:
    """The ingest's display: `phase(label, total, unit)` opens the next phase and closes the previous."""

    def __init__(self, mode: Mode = "off", stream: TextIO | None = None, interval: float = 10.0):
        self.mode = mode
        self.stream = stream or sys.stderr
        self.interval = interval
        self.current: Phase | None = None

    def phase(self, label: str, total: int, unit: str) -> Callable[[int], None]:
        self.close()
        self.current = Phase(label, total, unit, self.mode, self.stream, self.interval)
        return self.current

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None
