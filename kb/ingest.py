"""Ingestion: files -> documents -> chunks in the store, then one rebuild of the index snapshot.

    ingest = for each file: plan_file -> write_file;  then write_synonyms, prune, reindex

Unchanged files (same bytes) are skipped without parsing; a changed file replaces its documents'
chunks in one transaction; documents that vanished from a re-ingested file are removed; `prune`
removes documents whose files are gone. A malformed file (or BEIR line) is reported and skipped,
never fatal — and reported again on every ingest until it is fixed (its bytes are not recorded).

Faults: each file is written in one transaction and embeddings come after every file is stored, so
a kill at any moment leaves the store consistent and the previous index in use; the rerun re-stores
what is missing and always completes an index that is behind the store (or damaged). Ctrl-C (or
SIGTERM) stops at the next safe point — after the file being written, or after the batch being
embedded, whose vectors are cached — with `Interrupted` saying what is done and what to run.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..arguments import as_paths
from ..config import Context
from ..errors import ConfigError, IngestError, InputError
from ..retrieval.embeddings import Embedder, get_embedder
from ..retrieval.snapshot import (
    build_indexes,
    build_lock,
    check_snapshot,
    clean_stale_builds,
    forget,
    recorded_model,
    refuse_truncated_store,
)
from ..store.sqlite import Store, check_home
from .articles import PARSER_VERSION, Document
from .chunker import Chunk, chunk_document
from .fields import parse_required_data
from .guardrails import Guardrails, parse_guardrails
from .loaders import SourceFile, discover, read_documents, read_text
from .synonyms import load_synonyms

log = logging.getLogger(__name__)
LINE_SECONDS = 15.0  # progress lines in a log (stderr not a terminal): at most one per this many seconds


@dataclass
class Summary:
    """What an ingest did; `as_dict()` is the `--json` summary."""

    home: str
    files_seen: int = 0
    files_unchanged: int = 0
    files_ingested: int = 0
    documents_added: int = 0
    documents_updated: int = 0
    documents_removed: int = 0
    documents_unchanged: int = 0
    chunks_written: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reindexed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class DocumentWrite:
    doc: Document
    chunks: list[Chunk]
    fields: list[dict[str, Any]]
    rules: dict[str, Any]


@dataclass
class FilePlan:
    """What ingesting one file will change: documents to write, to remove, and whether to record it."""

    source: SourceFile
    digest: str
    writes: list[DocumentWrite] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    previous: set[str] = field(default_factory=set)
    unchanged_documents: int = 0
    record: bool = True  # False when part of it failed: it is retried (and reported) next time


def ingest(paths: Iterable[str | Path], home: str | Path | None = None, *, prune: bool = False,
           context: Context | None = None, progress: bool | None = None) -> dict[str, Any]:
    """Ingest files/folders into the KB at `home`; returns a JSON-able summary."""
    ctx = context or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    paths = as_paths(paths)
    if not paths:
        raise InputError("nothing to ingest: give at least one file or folder")
    started = time.perf_counter()
    files, synonym_files, problems = discover(paths)
    if problems and not files and not synonym_files:
        raise InputError("; ".join(problems))
    check_home(ctx.home_path, write=True)
    embedder = _embedder_for(ctx)
    store = Store(ctx.home_path)
    clean_stale_builds(ctx.home_path)  # what a killed ingest left; a live builder's temporaries are kept
    show = (sys.stderr.isatty() or "lines") if progress is None else progress
    summary = Summary(home=str(ctx.home_path), files_seen=len(files), warnings=list(problems))
    reparse = store.get_meta("parser_version") != PARSER_VERSION  # unchanged bytes, changed meaning
    changed = False
    bar = _progress(len(files), "parsing", show)
    with safe_points() as stop:
        for source in files:
            stop.check(f"after {summary.files_ingested + summary.files_unchanged} of {len(files)} file(s): each of "
                       "them is wholly in the store, the others are untouched")
            bar(1)
            plan = plan_file(source, store, ctx, reparse, summary)
            if plan is not None:
                changed |= write_file(plan, store, summary)
        if reparse and files:
            with store.transaction() as conn:
                store.set_meta(conn, "parser_version", PARSER_VERSION)
        changed |= write_synonyms(synonym_files, store, summary)
        if prune:
            changed |= prune_missing(store, summary)
        summary.reindexed = reindex_if_needed(store, embedder, ctx, changed, show, stop)
    docs, chunks = store.count()
    return {**summary.as_dict(), "documents_total": docs, "chunks_total": chunks,
            "seconds": round(time.perf_counter() - started, 3)}


def plan_file(source: SourceFile, store: Store, ctx: Context, reparse: bool, summary: Summary) -> FilePlan | None:
    """Read and parse one file and diff it against the store; None when there is nothing to do."""
    key = str(source.path)
    try:
        text = read_text(source.path)
    except IngestError as exc:
        summary.errors.append(str(exc))
        return None
    if not text.strip():
        summary.errors.append(f"{key}: empty file; skipped")
        return None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if store.source_hash(key) == digest and not reparse:
        summary.files_unchanged += 1
        return None
    existing = {} if reparse else store.document_hashes(key)
    plan = FilePlan(source=source, digest=digest, previous=set(store.document_hashes(key)))
    seen: set[str] = set()
    for item in read_documents(source, text):
        if isinstance(item, IngestError):
            summary.errors.append(str(item))
            plan.record = False
            continue
        if item.doc_id in seen:
            summary.errors.append(f"{key}: duplicate id {item.doc_id!r} in the same file; kept the first")
            continue
        owner = store.document_source(item.doc_id)
        if owner is not None and owner != key and Path(owner).exists():
            summary.errors.append(f"{key}: id {item.doc_id!r} is already used by {owner}; skipped")
            plan.record = False
            continue
        seen.add(item.doc_id)
        if existing.get(item.doc_id) == item.content_hash:
            plan.unchanged_documents += 1
            continue
        chunks = chunk_document(item, ctx.chunk_size, ctx.chunk_overlap)
        fields, rules, warnings = document_rules(item, chunks)
        summary.warnings.extend(warnings)
        plan.writes.append(DocumentWrite(item, chunks, fields, rules))
    # A file that failed to parse keeps its old documents: a typo must not delete an article.
    plan.gone = [d for d in plan.previous if d not in seen] if plan.record else []
    return plan


def write_file(plan: FilePlan, store: Store, summary: Summary) -> bool:
    """Apply one file's plan in one transaction; True when the store's content changed."""
    key = str(plan.source.path)
    summary.documents_unchanged += plan.unchanged_documents
    with store.transaction() as conn:
        for w in plan.writes:
            if w.doc.doc_id in plan.previous:
                summary.documents_updated += 1
            else:
                summary.documents_added += 1
            store.put_document(conn, doc_id=w.doc.doc_id, source=key, title=w.doc.title, metadata=w.doc.metadata,
                               content_hash=w.doc.content_hash, structured=w.doc.structured, fields=w.fields,
                               guardrails=w.rules, chunks=w.chunks)
            summary.chunks_written += len(w.chunks)
        summary.documents_removed += store.delete_documents(conn, plan.gone)
        if plan.record:
            stat = plan.source.path.stat()
            store.record_source(conn, key, plan.digest, stat.st_size, stat.st_mtime)
        changed = bool(plan.writes or plan.gone)
        if changed:
            store.bump_generation(conn)
    summary.files_ingested += 1
    return changed


def write_synonyms(paths: list[Path], store: Store, summary: Summary) -> bool:
    changed = False
    for path in paths:
        try:
            data = load_synonyms(path)
        except IngestError as exc:
            summary.errors.append(str(exc))
            continue
        digest = hashlib.sha256(repr(sorted(data.items())).encode()).hexdigest()
        if store.get_meta(f"synonyms:{path}") != digest:
            with store.transaction() as conn:
                store.put_synonyms(conn, str(path), data)
                store.set_meta(conn, f"synonyms:{path}", digest)
                store.bump_generation(conn)
            changed = True
    return changed


def prune_missing(store: Store, summary: Summary) -> bool:
    """Remove documents (and synonym files) whose source files no longer exist."""
    changed = False
    with store.transaction() as conn:
        for src in store.sources():
            if not Path(src).exists():
                summary.documents_removed += store.forget_source(conn, src)
                changed = True
        for src in store.synonym_sources():
            if not Path(src).exists():
                store.delete_synonyms(conn, src)
                changed = True
        if changed:
            store.bump_generation(conn)
    return changed


def reindex_if_needed(store: Store, embedder: Embedder, ctx: Context, changed: bool, show: bool | str,
                      stop: SafePoints | None = None) -> bool:
    """Rebuild the snapshot when content changed or the current one is not a sound build of the store's
    generation (a previous ingest was killed during its index build; a damaged index file)."""
    chunks = store.count()[1]
    if not chunks or (not changed and _index_current(store)):
        return False
    with build_lock(store.home):
        if _index_current(store):
            return False
        bar = _progress(chunks, "embedding", show, stop)
        build_indexes(store, embedder, progress=bar, vector_store=ctx.vector_store)
    return True


def _index_current(store: Store) -> bool:
    status = check_snapshot(store.home, store.generation())
    if status.state in ("damaged", "outdated"):
        log.warning("citewise: the index of %s is %s (%s): rebuilding it", store.home, status.state, status.detail)
    return status.state == "current"


class Interrupted(KeyboardInterrupt):
    """An ingest stopped at a safe point on Ctrl-C or SIGTERM; the message says what was kept and what to run."""


class SafePoints:
    """A stop request (signal) honoured only where stopping leaves everything consistent."""

    def __init__(self) -> None:
        self.requested = threading.Event()

    def check(self, where: str) -> None:
        if self.requested.is_set():
            raise Interrupted(f"interrupted {where}; answers use the previous index until the same ingest is run "
                              "again, which continues from here (embedded batches are cached)")


@contextlib.contextmanager
def safe_points() -> Iterator[SafePoints]:
    """While ingesting, the first SIGINT/SIGTERM only asks to stop at the next safe point; a second one
    stops at once (the store's transactions still keep it consistent). Signals can be handled only in
    the main thread, and a handler the host application installed is left alone."""
    stop = SafePoints()
    installed: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        def ask_to_stop(signum: int, frame: Any) -> None:
            if stop.requested.is_set():
                raise KeyboardInterrupt
            stop.requested.set()
            sys.stderr.write("\ncitewise: stopping after the current step (press Ctrl-C again to stop now)\n")

        for sig, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
            if signal.getsignal(sig) is default:
                installed[sig] = signal.signal(sig, ask_to_stop)
    try:
        yield stop
    finally:
        for sig, previous in installed.items():
            signal.signal(sig, previous)


def reindex(home: str | Path | None = None, *, context: Context | None = None,
            embedding_model: str | None = None) -> dict[str, Any]:
    """Rebuild every derived index from the store; `embedding_model` switches the home to another model."""
    ctx = context or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    if embedding_model:
        ctx = ctx.with_overrides(embedding_model=embedding_model)
    if not Store.exists(ctx.home_path):
        raise InputError(f"no knowledge base at {ctx.home_path}")
    store = Store(ctx.home_path)
    if store.count()[0] == 0:
        refuse_truncated_store(ctx.home_path)  # an index is never rebuilt from a store that lost its content
    embedder = _embedder_for(ctx, switching=bool(embedding_model))
    with safe_points() as stop, build_lock(store.home):
        forget(ctx.home_path)
        bar = _progress(store.count()[1], "embedding", sys.stderr.isatty() or "lines", stop)
        manifest = build_indexes(store, embedder, progress=bar, vector_store=ctx.vector_store, full_sync=True)
    return {"home": str(ctx.home_path), **manifest}


def document_rules(doc: Document, chunks: list[Chunk]) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """Required fields and guardrails of an article, each tied to the chunk it came from (for citing)."""
    fields: list[dict[str, Any]] = []
    rules = Guardrails()
    rule_chunks: list[str] = []
    warnings: list[str] = []
    if not doc.structured:
        return fields, {**rules.as_dict(), "chunk_ids": []}, warnings
    for chunk in chunks:
        if chunk.chunk_type == "required_data":
            parsed, warn = parse_required_data(chunk.text)
            warnings.extend(f"{doc.doc_id}: {w}" for w in warn)
            for f in parsed:
                if all(existing["key"] != f.key for existing in fields):
                    fields.append({**f.as_dict(), "group": f.group, "chunk_id": chunk.chunk_id})
        elif chunk.chunk_type == "guardrails":
            rules = rules.merge(parse_guardrails(chunk.text))
            rule_chunks.append(chunk.chunk_id)
    return fields, {**rules.as_dict(), "chunk_ids": rule_chunks}, warnings


def _embedder_for(ctx: Context, switching: bool = False) -> Embedder:
    embedder = get_embedder(ctx.embedding_model, ctx.embedding_base_url)
    existing = recorded_model(ctx.home_path)
    if existing is not None and existing != embedder.model_id and not switching:
        raise ConfigError(f"{ctx.home_path} is indexed with {existing!r}, not {embedder.model_id!r}; vectors of "
                          "two models are never mixed: use the same embedding_model or "
                          "`citewise reindex --embedding-model`")
    return embedder


def _progress(total: int, label: str, show: bool | str, stop: SafePoints | None = None) -> Callable[[int], None]:
    """A tqdm bar on a terminal; with show="lines" (stderr is a log, not a terminal) a line every
    LINE_SECONDS once a phase runs that long, so a long embedding is visible in logs too; nothing with
    show=False (JSON output must stay clean). With `stop`, each step is also a safe point (the embedder
    reports a batch only once its vectors are cached)."""
    done = [0]
    started, last = [time.monotonic()], [time.monotonic()]

    def safe_point() -> None:
        if stop is not None:
            stop.check(f"while embedding ({done[0]} of {total} chunks done, their vectors cached): the store holds "
                       "every file of this ingest, the index was not rebuilt")

    if show == "lines" and total:
        def line(n: int) -> None:
            done[0] += n
            now = time.monotonic()
            if now - last[0] >= LINE_SECONDS:
                last[0] = now
                rate = done[0] / max(now - started[0], 1e-9)
                left = (total - done[0]) / rate if rate else 0.0
                sys.stderr.write(f"citewise: {label} {done[0]}/{total} ({100 * done[0] / total:.0f}%), "
                                 f"about {left / 60:.1f} min left\n")
            safe_point()

        return line
    if not show or total == 0:
        def quiet(n: int) -> None:
            done[0] += n
            safe_point()

        return quiet
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="item", leave=False, file=sys.stderr)

    def step(n: int) -> None:
        done[0] += n
        bar.update(n)
        if bar.n >= total:
            bar.close()
        safe_point()

    return step
