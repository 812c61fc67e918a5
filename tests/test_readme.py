"""The README's examples run: every ```python block and every command of every ```bash block.

They run against a temporary working directory holding `.citewise` (a copy of the session's ingested
sample KB, the home the README's commands name) and `examples/` (the repository's, for
`citewise.ingest(["examples/kb"], ...)`). Python blocks run in README order in one namespace, as a
reader would paste them into one session; `citewise ...` commands run in this process (`cli.main`, so
the models load once); other commands run in bash. Blocks marked `<!-- readme-test: server -->` run
against a real `langgraph dev` started on a free port (the README's 8123 is replaced). Placeholders
are replaced by real ids: THREAD_ID by a paused thread, QUERY_ID by a query-log row.

What does not run says why, visibly (pytest -rs): a block marked `<!-- readme-test: skip: REASON -->`,
or a command matching SKIPPED below. A snippet that raises or a command that exits non-zero fails.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT, copy_home

README = ROOT / "README.md"
MARK = re.compile(r"^<!--\s*readme-test:\s*(skip|server)\s*(?::\s*(.*?))?\s*-->\s*$")
SKIPPED = [  # command pattern -> why it is not run here
    (r"^\./run (demo|test)\b", "sets up .venv and runs everything: tests/test_run_script.py checks ./run demo's "
                               "steps, CI runs ./run test"),
    (r"^\. \.venv/bin/activate", "the tests already run the virtual environment's citewise"),
    (r"--interactive", "needs a person at a terminal: tests/test_interactive.py drives it with pexpect"),
    (r"^citewise eval (retrieval|peers) ", "ingests SciFact's 5,183 abstracts (minutes): BENCHMARKS.md reports it"),
    (r"path/to/|\[--", "a synopsis: placeholder paths and optional flags in brackets"),
    (r"\bplan\.pdf manual\.docx\b", "placeholder file names: tests/test_ingest_formats.py ingests real ones"),
    (r"^citewise ask - .*< ", "reads a placeholder file from standard input: tests/test_cli.py pipes a question in"),
]
README_PORT = "8123"


@dataclass
class Snippet:
    line: int  # README line of the command or of the block's first line
    lang: str  # python | bash
    code: str
    mark: str = ""  # "", "skip" or "server"
    reason: str = ""

    @property
    def id(self) -> str:
        first = self.code.strip().splitlines()[0] if self.code.strip() else ""
        return f"L{self.line}-{self.lang}: {first[:50]}"


def bash_commands(block: list[str], start: int) -> list[tuple[int, str]]:
    """Commands of a bash block, one per line (continuation lines joined), with their README line."""
    out: list[tuple[int, str]] = []
    pending, first = "", 0
    for offset, line in enumerate(block):
        if not pending:
            first = start + offset
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            out.append((first, command))
    return out


def snippets() -> list[Snippet]:
    lines = README.read_text(encoding="utf-8").splitlines()
    out: list[Snippet] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w+)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        lang = fence.group(1)
        mark = MARK.match(lines[i - 1]) if i else None
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        block = lines[i + 1:end]
        kind, reason = (mark.group(1), mark.group(2) or "") if mark else ("", "")
        if lang == "python" or (lang == "bash" and kind):  # a marked bash block runs (or is skipped) whole
            out.append(Snippet(i + 2, lang, "\n".join(block), kind, reason))
        elif lang == "bash":
            for line, command in bash_commands(block, i + 2):
                why = next((why for pattern, why in SKIPPED if re.search(pattern, command)), "")
                out.append(Snippet(line, lang, command, "skip" if why else "", why))
        i = end + 1
    return out


SNIPPETS = snippets()


@pytest.fixture(scope="module")
def workdir(kb_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a reader runs the README: `.citewise` ingested, `examples/` beside it."""
    root = tmp_path_factory.mktemp("readme")
    copy_home(kb_home, root / ".citewise")
    (root / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def placeholders(workdir: Path) -> dict[str, str]:
    """Real values for the README's placeholders, made in the working directory's home."""
    from citewise import api

    home = workdir / ".citewise"
    paused = api.ask("How do I roll over my 401(k)?", home=home, interrupt_on_missing_data=True,
                     collected_data={"record_keeper": "Acme Retirement"})
    answered = api.ask("Can I take a loan from my Acme 401(k)?", home=home)
    return {"THREAD_ID": paused["thread_id"], "QUERY_ID": answered["metadata"]["query_id"]}


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[str]:
    from tests.server import langgraph_dev

    with langgraph_dev(workdir / ".citewise", workdir / "langgraph-dev.log") as url:
        yield url


NAMESPACE: dict[str, Any] = {}  # the reader's one Python session, in README order


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_readme_example_runs(snippet: Snippet, workdir: Path, placeholders: dict[str, str],
                             request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if snippet.mark == "skip":
        pytest.skip(f"README line {snippet.line}: {snippet.reason}")
    monkeypatch.chdir(workdir)
    code = snippet.code
    for name, value in placeholders.items():
        code = code.replace(name, value)
    url = ""
    if snippet.mark == "server":
        url = request.getfixturevalue("server")
        code = code.replace(f"http://127.0.0.1:{README_PORT}", url)
    if snippet.lang == "python":
        try:
            exec(compile(code, f"README.md:{snippet.line}", "exec"), NAMESPACE)
        except Exception as exc:
            pytest.fail(f"README line {snippet.line}: the Python example raised {type(exc).__name__}: {exc}")
    elif code.startswith("citewise "):
        run_cli(code, snippet.line)
    else:
        run_bash(code, snippet.line, workdir)


def run_cli(command: str, line: int) -> None:
    from citewise.cli import main

    argv = shlex.split(command, comments=True)[1:]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
    assert code == 0, f"README line {line}: `{command}` exited {code}: {err.getvalue()[-2000:]}"
    assert "Traceback" not in err.getvalue()


def run_bash(script: str, line: int, workdir: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    # An HTTP error fails the example (curl alone exits 0 on a 400), and its body is shown.
    script = 'curl() { command curl --fail-with-body "$@"; }\n' + script
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"README line {line}: exited {proc.returncode}: {(proc.stderr + proc.stdout)[-2000:]}"
    assert "Internal Server Error" not in proc.stdout and "Traceback" not in proc.stderr


def test_every_runnable_kind_is_found() -> None:
    """The parser sees the README's examples: a change to the README's fences cannot silently skip them all."""
    kinds = {(s.lang, s.mark) for s in SNIPPETS}
    assert {("python", ""), ("python", "server"), ("bash", ""), ("bash", "server"), ("bash", "skip")} <= kinds
    assert sum(1 for s in SNIPPETS if s.lang == "bash" and s.code.startswith("citewise ") and not s.mark) >= 15


def test_the_readme_resume_example_ends_with_an_answer(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interrupt-and-resume example gives every field its article needs: it answers, not pauses again."""
    block = next(s for s in SNIPPETS if s.lang == "python" and "api.resume(" in s.code)
    monkeypatch.chdir(workdir)
    namespace: dict[str, Any] = {}
    exec(compile(block.code, f"README.md:{block.line}", "exec"), namespace)
    assert namespace["paused"]["status"] == "interrupted"
    assert namespace["done"]["status"] == "done" and namespace["done"]["decision"] == "can_proceed"
