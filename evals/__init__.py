"""Evaluations and benchmarks (each runnable as `python -m citewise.evals.<name>`; JSON + a table)."""
