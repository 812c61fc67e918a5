"""`./run demo` on a fresh machine: it says what it is doing, step by step, and pip's output is not hidden.

The real setup downloads torch and every dependency (minutes, network); here `python3.11` and the
virtual environment's `python` and `citewise` are stand-ins that record how they were called and print
what pip prints, so the script's own behaviour is what is tested.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.paths import ROOT

FAKE_PYTHON = """#!/bin/sh
echo "python $*" >> "{log}"
case "$*" in
  *"pip install"*)
    case "$*" in *--quiet*) exit 0 ;; esac
    for last; do :; done
    echo "Collecting $last"
    echo "  Downloading $last-py3-none-any.whl (1.2 MB)"
    echo "WARNING: Location '/opt/pypi-more/simple' is ignored: it is neither a file nor a directory." >&2
    echo "ERROR: a real pip error stays visible" >&2
    echo "Successfully installed $last" ;;
esac
exit 0
"""
FAKE_CITEWISE = """#!/bin/sh
echo "citewise $*" >> "{log}"
echo "citewise output for: $1"
"""
FAKE_PYTHON311 = """#!/bin/sh
# python3.11 -m venv DIR: lay out a virtual environment whose python and citewise are stand-ins
echo "python3.11 $*" >> "{log}"
mkdir -p "$3/bin"
cp "{python}" "$3/bin/python"
cp "{citewise}" "$3/bin/citewise"
"""


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_run_demo_says_each_step_and_shows_pips_output(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    templates = tmp_path / "templates"
    templates.mkdir()
    python = executable(templates / "python", FAKE_PYTHON.format(log=log))
    citewise = executable(templates / "citewise", FAKE_CITEWISE.format(log=log))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "python3.11", FAKE_PYTHON311.format(log=log, python=python, citewise=citewise))
    venv = tmp_path / "venv"
    env = {**os.environ, "CITEWISE_VENV": str(venv), "PATH": f"{bin_dir}:{os.environ['PATH']}"}

    proc = subprocess.run(["bash", str(ROOT / "run"), "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = [line[4:] for line in proc.stdout.splitlines() if line.startswith("==> ")]
    assert [s.split(" ")[0] for s in steps] == ["creating", "installing", "installing", "ingesting", "asking:"]
    assert "torch 2.13.0" in steps[1] and "citewise" in steps[2] and "How do I roll over" in steps[4]
    assert "Collecting torch==2.13.0" in proc.stdout and "Successfully installed" in proc.stdout  # not --quiet
    assert "is ignored" not in proc.stdout + proc.stderr  # the machine's harmless warning only
    assert "a real pip error stays visible" in proc.stderr
    out = proc.stdout
    assert out.index("==> installing torch") < out.index("Collecting torch") < out.index("==> installing citewise")
    calls = log.read_text().splitlines()
    assert calls[0].startswith("python3.11 -m venv")
    assert any(c.startswith("citewise ingest examples/kb") for c in calls) and calls[-1].startswith("citewise ask")
    assert (venv / ".citewise-installed").is_file()

    again = subprocess.run(["bash", str(ROOT / "run"), "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0 and "==> " + f"{venv} is up to date" in again.stdout
    assert "Collecting" not in again.stdout  # nothing reinstalled
