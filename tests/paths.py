"""Paths shared by tests (import this, never conftest: importing conftest re-runs its setup)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_KB = ROOT / "examples" / "kb"
QUESTIONS = ROOT / "examples" / "questions.yaml"
