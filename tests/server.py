"""Start `langgraph dev` on a free loopback port for a test, and stop it afterwards."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def langgraph_dev(home: Path, log: Path, extra_env: dict[str, str] | None = None,
                  timeout: float = 120.0) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "CITEWISE_HOME": str(home), "LANGGRAPH_CLI_NO_ANALYTICS": "1",
           "LANGGRAPH_NO_VERSION_CHECK": "1", "LANGSMITH_TRACING": "false", "HF_HUB_OFFLINE": "1",
           **(extra_env or {})}
    exe = Path(sys.executable).with_name("langgraph")
    with log.open("wb") as out:
        proc = subprocess.Popen([str(exe), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
                                 "--port", str(port)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"langgraph dev exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url + "/ok", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"langgraph dev did not start in {timeout}s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
