"""Paths shared by tests (import this, never conftest: importing conftest re-runs its setup)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_KB = ROOT / "examples" / "kb"
QUESTIONS = ROOT / "examples" / "questions.yaml"


def copy_home(src: Path, dest: Path) -> Path:
    """Copy a knowledge-base home that this process may have open: the store through SQLite's backup API.

    A plain file copy opens and closes citewise.db outside SQLite, and closing any descriptor of a file
    drops every POSIX lock this process holds on it; another process then believes it is the store's
    last user and deletes the write-ahead log's shared memory under our open connections ("disk I/O error").
    """
    import shutil
    import sqlite3

    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("citewise.db*", "*.lock"))
    with sqlite3.connect(src / "citewise.db") as source, sqlite3.connect(dest / "citewise.db") as target:
        source.backup(target)
    source.close()
    target.close()
    return dest


def ingested_kb(tmp_path: Path, files: dict[str, str]) -> Path:
    """A home ingested from a small KB written on the spot (file name -> Markdown text), for tests that need
    the engine over a few articles of their own."""
    from citewise.kb.ingest import ingest

    src = tmp_path / "kb"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text)
    ingest([src], tmp_path / "home", progress=False)
    return tmp_path / "home"
