"""One way to run `langgraph dev` for a test or a benchmark: a free loopback port, ready when `/ok` answers.

The tests (tests/server.py), the load benchmark and the cold-start benchmark all start real servers;
they differ only in the environment, the working directory (where the in-memory runtime keeps its
files) and how often readiness is polled, so those are the parameters.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class DevServer:
    url: str
    pid: int  # also the process group: the server's workers are in it
    log: Path
    started: float  # time.perf_counter() at launch
    ready: float  # time.perf_counter() when /ok first answered


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def langgraph_dev(home: Path, log: Path, *, env: Mapping[str, str] | None = None,
                  base_env: Mapping[str, str] | None = None, cwd: Path = ROOT, timeout: float = 120.0,
                  poll: float = 0.5) -> Iterator[DevServer]:
    """`langgraph dev` serving `home`, its output in `log`; stopped (its whole group) on exit."""
    port = free_port()
    run_env = {**(base_env if base_env is not None else os.environ), "CITEWISE_HOME": str(home),
               "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1", "LANGSMITH_TRACING": "false",
               "HF_HUB_OFFLINE": "1", **(env or {})}
    exe = Path(sys.executable).with_name("langgraph")
    cwd.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("wb") as out:  # this server's output only: its error tail is about it
        proc = subprocess.Popen([str(exe), "dev", "--config", str(ROOT / "langgraph.json"), "--no-browser",
                                 "--no-reload", "--host", "127.0.0.1", "--port", str(port)], cwd=cwd, env=run_env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"langgraph dev exited ({proc.returncode}):\n{tail(log)}")
            with contextlib.suppress(OSError), urllib.request.urlopen(url + "/ok", timeout=2) as resp:
                if resp.status == 200:
                    break
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"langgraph dev did not start in {timeout:.0f} s:\n{tail(log)}")
            time.sleep(poll)
        yield DevServer(url, proc.pid, log, started, time.perf_counter())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def tail(log: Path, chars: int = 3000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no log)"
