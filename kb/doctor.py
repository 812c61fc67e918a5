"""`citewise doctor [--repair]`: is this home sound, and if not, what can be fixed without losing content?

Checks, in order:
  store        SQLite's own `integrity_check` and `foreign_key_check` of citewise.db; with PostgreSQL
               (`database_url`), that the schema is the current one, the generation and store id are
               set, and the counts agree (no chunk without its document, no document position twice) —
               page-level checks of a shared server are its own (amcheck, data checksums)
  index        the snapshot `index` points at: every file against its checksum, its generation against
               the store's, and its row order against the store's own chunk order (a store edited
               without a new generation shows up here)
  leftovers    temporaries of killed builds, finished builds nothing points at
  threads      integrity of threads.sqlite (paused inquiries), when there is one (with PostgreSQL the
               threads are in the database, and not checked here)

`repair` rebuilds the SQLite indexes (REINDEX) and drops chunks whose document is gone (PostgreSQL:
the latter only), rebuilds a stale, damaged, foreign or disagreeing index from the store (with
PostgreSQL, the home is this replica's cache of snapshots), and removes leftovers (under the build lock,
so never beside a running build). It never deletes or rewrites the store's content: a store that is not
a database, or that lost its content, is reported with what to do, and left as it is.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import Context
from ..errors import InputError, StoreError
from ..retrieval.snapshot import (
    build_indexes,
    build_lock,
    check_snapshot,
    forget,
    orphan_builds,
    row_digest,
    stale_builds,
)
from ..store import Store, open_store, redact, resolve_url
from ..store.sqlite import DB_NAME
from ..store.sqlite import Store as SQLiteStore


@dataclass
class Finding:
    check: str
    ok: bool
    detail: str
    fixed: str = ""


def doctor(home: str | Path | None = None, *, repair: bool = False, context: Context | None = None) -> dict[str, Any]:
    """Check (and with `repair`, fix) a knowledge-base home; returns findings as JSON-able data."""
    ctx = context or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    home_path = ctx.home_path
    url = resolve_url(ctx.database_url)
    if home_path.exists() and not home_path.is_dir():
        raise InputError(f"the knowledge-base home {home_path} is a file, not a directory")
    if not home_path.exists() and not url:  # a replica's home is only a cache: it may not exist yet
        raise InputError(f"the knowledge-base home {home_path} does not exist")
    findings: list[Finding] = []
    store = check_store(home_path, url, repair, findings)
    if home_path.is_dir():
        check_leftovers(home_path, repair, findings)
    if store is not None:
        check_index(store, ctx, repair, findings)
    if not url:
        check_threads(home_path, findings)
    problems = [f for f in findings if not f.ok and not f.fixed]
    report: dict[str, Any] = {"home": str(home_path), "healthy": not problems, "repaired": repair,
                              "findings": [asdict(f) for f in findings]}
    if url:
        report["database"] = redact(url)
    return report


def check_store(home: Path, url: str, repair: bool, findings: list[Finding]) -> Store | None:
    if not url and not SQLiteStore.exists(home):
        findings.append(Finding("store", False, f"{home / DB_NAME} does not exist: nothing was ingested here "
                                                f"(`citewise ingest PATH --home {home}`)"))
        return None
    where = redact(url) if url else str(home / DB_NAME)
    try:
        store = open_store(home, url)
        problems = store.check_integrity()
    except StoreError as exc:
        findings.append(Finding("store", False, str(exc)))
        return None
    if not problems:
        docs, chunks = store.count()
        what = ("integrity_check ok" if store.kind == "sqlite" else
                f"PostgreSQL {where}: schema version {store.schema_version()} is current, counts agree")
        findings.append(Finding("store", True, f"{what}: {docs} documents, {chunks} chunks, "
                                               f"generation {store.generation()}"))
        return store
    finding = Finding("store", False, f"{where}: " + "; ".join(problems[:5]))
    findings.append(finding)
    if repair:
        try:
            done = store.repair()
            left = store.check_integrity()
        except StoreError as exc:
            done, left = [], [str(exc)]
        if left and store.kind != "sqlite":
            finding.detail += (f" — still after repair: {'; '.join(left[:3])}. Nothing was deleted; fix the database "
                               "(or restore it from a backup) and re-ingest your sources")
        elif left:
            finding.detail += (f" — still after repair: {'; '.join(left[:3])}. Move the file aside (keep it) and "
                               f"re-ingest your sources with `citewise ingest PATH --home {home}`")
        else:
            finding.fixed = "; ".join(done)
    return store if not problems or finding.fixed else None


def check_leftovers(home: Path, repair: bool, findings: list[Finding]) -> None:
    leftovers = stale_builds(home) + orphan_builds(home)
    if not leftovers:
        findings.append(Finding("leftovers", True, "no temporaries of killed builds"))
        return
    names = ", ".join(p.name for p in leftovers[:5]) + (" ..." if len(leftovers) > 5 else "")
    finding = Finding("leftovers", False, f"{len(leftovers)} leftover(s) of interrupted builds: {names}")
    findings.append(finding)
    if repair:
        with build_lock(home):  # no build runs meanwhile: every temporary is a leftover
            for path in stale_builds(home) + orphan_builds(home):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        path.unlink()
        finding.fixed = f"removed {len(leftovers)} leftover(s)"


def store_rows(store: Store) -> tuple[int, int, str]:
    """The store's generation, chunk count and row-order digest, read in one transaction."""
    with store.reading():
        generation = store.generation()
        rows = [(r["chunk_id"], r["doc_id"]) for r in store.iter_chunks()]
    return generation, len(rows), row_digest([c for c, _ in rows], [d for _, d in rows])


def check_index(store: Store, ctx: Context, repair: bool, findings: list[Finding]) -> None:
    home = store.home
    generation, chunks, order = store_rows(store)
    if chunks == 0:
        status = check_snapshot(home)
        built = int((status.manifest or {}).get("chunks") or 0)
        if store.kind != "sqlite":  # a shared database that was emptied (e.g. pruned): replicas refuse to answer
            findings.append(Finding("index", True, "the database holds no chunks: nothing to index" +
                                    (f" (this replica's cached index of {built} chunks is not used)" if built else "")))
        elif built:
            findings.append(Finding("index", False, f"the store holds no chunks but the index was built from {built}: "
                                                    f"{home / DB_NAME} was emptied or replaced. Restore it from a "
                                                    f"backup, or re-ingest your sources (`citewise ingest PATH "
                                                    f"--home {home}`); the index is left as it is"))
        else:
            findings.append(Finding("index", True, "the store is empty: nothing to index"))
        return
    status = check_snapshot(home, generation, store_id=store.store_id())
    if status.state == "current" and (status.manifest or {}).get("row_order") != order:
        status.state, status.detail = "disagreeing", ("its rows differ from the store's at the same generation "
                                                      f"{generation} (the store was changed without a new generation)")
    if status.state == "current":
        findings.append(Finding("index", True, f"{status.directory.name if status.directory else ''}: every checksum "
                                               f"matches; generation {generation}, {chunks} chunks, same row order "
                                               "as the store"))
        return
    finding = Finding("index", False, f"{status.state}: {status.detail}")
    findings.append(finding)
    if repair:
        from .ingest import _embedder_for  # the home's own embedding model: doctor never switches models

        embedder = _embedder_for(ctx)
        with build_lock(home):
            forget(home)
            manifest = build_indexes(store, embedder, vector_store=ctx.vector_store)
        after = check_snapshot(home, store.generation(), store_id=store.store_id())
        if after.state == "current":
            finding.fixed = (f"rebuilt the index from the store: generation {manifest['generation']}, "
                             f"{manifest['chunks']} chunks in {manifest['seconds']:.1f}s")


def check_threads(home: Path, findings: list[Finding]) -> None:
    path = home / "threads.sqlite"
    if not path.is_file():
        return
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as conn:
            result = [r[0] for r in conn.execute("PRAGMA quick_check")]
    except sqlite3.Error as exc:
        result = [str(exc)]
    if result == ["ok"]:
        findings.append(Finding("threads", True, "threads.sqlite quick_check ok"))
    else:
        findings.append(Finding("threads", False, f"{path}: {'; '.join(result[:3])}: paused inquiries in it may not "
                                                  "resume; move it aside to start with no saved threads"))
