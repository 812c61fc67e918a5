"""Converting many files in worker processes while the ingest writes the ones already converted.

Conversion (pypdf, python-docx, python-pptx, openpyxl) is pure-Python CPU work and most of what an
ingest costs before embedding, so a batch of office files is converted by a small process pool; results
come back in input order, so the store is written in the same order as a sequential ingest would.
A small batch, or any batch on a machine with few cores, is converted in-process (starting workers
would cost more than it saves; `workers=` overrides the choice), and if the pool
cannot start or dies, the remaining files are converted in-process: a pool is an optimisation, never a
reason for a batch to fail.

Workers are spawned, not forked: the ingesting process may already hold torch's and the tokenizers'
threads, and a forked copy of a process with threads can deadlock on a lock one of them held.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .convert import ConversionError, Converted, convert

PARALLEL_MIN_FILES = 64  # below this, in-process conversion is faster than starting workers
MIN_CPUS = 4  # with fewer cores the pool competes with the ingest itself (see default_workers)
MAX_WORKERS = 4
LOOKAHEAD = 4  # files converted ahead of the writer, per worker


@dataclass
class Conversion:
    """What converting one file gave: the result or the error, and the digest of the bytes it read
    (so the ingest can tell a file that changed between hashing and converting)."""

    digest: str
    result: Converted | None = None
    error: Exception | None = None


def convert_one(path: Path, options: dict[str, Any]) -> Conversion:
    """Convert one file, never raising: errors travel back as values (a worker must not die on one file)."""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return Conversion("", error=ConversionError(f"cannot read file ({exc.strerror or exc})", str(path)))
    try:
        return Conversion(digest, result=convert(path, **options))
    except Exception as exc:  # a converter bug on one odd file is this file's problem only
        return Conversion(digest, error=exc)


def default_workers(count: int) -> int:
    """In-process unless the batch is big and the machine has cores to spare. Measured here (2 cores that
    other jobs kept busy; 240 generated office files): 5.3 s in-process, 9.2 s with 2 spawned workers —
    worker start-up and the converters' imports (~1.4 s) plus competing for the same two cores cost more
    than they save."""
    cpus = os.cpu_count() or 1
    if count < PARALLEL_MIN_FILES or cpus < MIN_CPUS:
        return 1
    return max(1, min(MAX_WORKERS, cpus - 1, count // 16))


def conversions(paths: list[Path], options: dict[str, Any], workers: int | None = None) -> Iterator[Conversion]:
    """`convert_one` of every path, in order, using `workers` processes (None: chosen from the batch size
    and the machine; 1: in-process). At most a few files per worker are converted ahead of the consumer,
    so a 10,000-file batch never holds 10,000 converted documents in memory."""
    workers = default_workers(len(paths)) if workers is None else max(1, workers)
    done = 0
    if workers > 1 and len(paths) > 1:
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                ahead: deque[Future[Conversion]] = deque()
                submitted = 0
                while done < len(paths):
                    while submitted < len(paths) and len(ahead) < LOOKAHEAD * workers:
                        ahead.append(pool.submit(convert_one, paths[submitted], options))
                        submitted += 1
                    conversion = ahead.popleft().result()
                    done += 1
                    yield conversion
        except (BrokenProcessPool, OSError):
            pass  # the rest is converted below, in this process
    for path in paths[done:]:
        yield convert_one(path, options)
