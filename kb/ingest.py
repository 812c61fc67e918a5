"""Ingestion: files -> documents -> chunks in the store, then one rebuild of the index snapshot.

    ingest = triage every file (unchanged ones stop here);
             for each changed file: [convert] -> plan_file -> write_file;  then write_synonyms, prune, reindex

Unchanged files (same bytes, same tags) are skipped without parsing; each changed document replaces
its chunks in its own transaction (so a killed ingest leaves whole documents, and the rerun skips
those by hash); documents that vanished from a re-ingested file are removed, and the file's hash
recorded, in a last transaction; `prune` removes documents whose files are gone. Office documents,
web pages and transcripts are converted by `kb.convert` and keep their source positions (page,
slide, heading path, time range) per chunk.

Every input that cannot be ingested — a missing path, an unsupported type, an empty, unreadable,
encrypted, scanned or corrupt file, a malformed article or BEIR line — is reported and skipped
(`Summary.skipped`, one entry each), never fatal to the batch, and reported again on every ingest
until it is fixed or removed (its bytes are not recorded). A file that fails keeps the documents an
earlier version of it left in the store: a broken upload must not delete an article.

Faults: each document is written in its own transaction and the file's hash goes last, and embeddings
come after every file is stored, so a kill at any moment leaves the store consistent (whole documents)
and the previous index in use; the rerun re-stores what is missing and always completes an index that
is behind the store (or damaged). A failure of the store itself (a damaged, locked, read-only or full
SQLite file; PostgreSQL unreachable) stops the ingest with a `StoreError` instead of skipping file after
file. Ctrl-C (or SIGTERM) stops at the next safe point — after the file being written, or after the
batch being embedded, whose vectors are cached — with `Interrupted` saying what is done and what to run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
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
from ..store import Store, check_home, is_database_error, open_store, store_exists
from .access import with_access_metadata
from .articles import HELD_BACK, PARSER_VERSION, QUARANTINED, Document, content_hash, metadata_value
from .chunker import Chunk, chunk_document
from .convert import ConversionError
from .fields import parse_required_data
from .guardrails import Guardrails, parse_guardrails
from .loaders import (
    TEXT_KINDS,
    SourceFile,
    converted_document,
    digest_of,
    discover,
    read_bytes,
    read_documents,
    source_type,
    text_of,
)
from .parallel import Conversion, conversions, convert_one
from .progress import Progress, choose_mode
from .synonyms import load_synonyms

log = logging.getLogger(__name__)
# One article cannot flood an answer: more fields or rules than this is not an article, it is a skip.
MAX_FIELDS, MAX_RULES = 50, 50
# chunk metadata keys citewise sets itself: a --tag may not shadow them
RESERVED_TAGS = frozenset({"id", "doc_id", "title", "chunk_type", "tier", "section", "source_type"})
WORDS_PER_TOKEN = 0.7  # cl100k on English prose: ~1.4 tokens a word; sizes transcript windows to chunk_size


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
    files_skipped: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"}, one per skipped input
    source_types: dict[str, int] = field(default_factory=dict)  # documents written, by source type
    tags: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # seconds: documents, index, embedding

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def skip(self, path: str, reason: str, *, warning: bool = False, message: str | None = None) -> None:
        """Record an input that was not ingested. `errors`/`warnings` keep their one-string form
        (`path: reason`) for existing readers; `skipped` has both parts for people and tools."""
        self.skipped.append({"path": path, "reason": reason})
        (self.warnings if warning else self.errors).append(message or f"{path}: {reason}")

    def skip_error(self, path: str, error: Exception) -> None:
        message = str(error)
        reason = message[len(path):].lstrip(": ") if message.startswith(path) else message
        if reason[:1].isdigit() and ":" in reason:  # "12: not valid JSON" from a BEIR line
            line, _, rest = reason.partition(":")
            reason = f"line {line}: {rest.strip()}"
        self.skip(path, reason, message=message)


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
           context: Context | None = None, progress: bool | None = None,
           tags: dict[str, Any] | None = None, workers: int | None = None) -> dict[str, Any]:
    """Ingest files/folders into the KB at `home`; returns a JSON-able summary.

    `tags` ({"team": "ops"}) become filterable metadata of every document ingested by this call (front
    matter still wins) and the chunks' spec `tags` ("team=ops"). `progress`: None shows a bar only on a
    terminal, True also prints plain periodic lines when stderr is not one, False shows nothing.
    `workers`: processes converting office files (None: by batch size and CPUs; 1: none).
    """
    ctx = context or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    paths = as_paths(paths)
    if not paths:
        raise InputError("nothing to ingest: give at least one file or folder")
    tags = check_tags(tags)
    started = time.perf_counter()
    files, synonym_files, problems = discover(paths)
    if problems and not files and not synonym_files:
        raise InputError("; ".join(f"{path}: {reason}" for path, reason in problems))
    check_home(ctx.home_path, write=True)  # a file or an unwritable directory is a StoreError, before any work
    embedder = _embedder_for(ctx)
    store = open_store(ctx.home_path, ctx.database_url)
    clean_stale_builds(ctx.home_path)  # what a killed ingest left; a live builder's temporaries are kept
    display = Progress(choose_mode(progress))
    summary = Summary(home=str(ctx.home_path), files_seen=len(files), tags=dict(tags))
    for path, reason in problems:
        summary.skip(path, reason, warning=True)
    reparse = store.get_meta("parser_version") != PARSER_VERSION  # unchanged bytes, changed meaning
    changed = False
    with safe_points() as stop:
        step = display.phase("documents", len(files), "file")
        pending: list[tuple[SourceFile, str]] = []
        for source in files:
            kind = triage(source, store, reparse, tags)
            if kind is None:
                summary.files_unchanged += 1
                step(1)
            else:
                pending.append((source, kind))
        results = conversions([s.path for s, kind in pending if converts(kind)], convert_options(ctx), workers)
        try:
            for done, (source, kind) in enumerate(pending, start=summary.files_unchanged):
                stop.check(f"after {done} of {len(files)} file(s): each of them is wholly in the store, the others "
                           "are untouched")
                conversion = next(results) if converts(kind) else None
                changed |= ingest_file(source, store, ctx, reparse, summary, tags, conversion)
                step(1)
        finally:
            results.close()
        display.close()
        if reparse and files:
            with store.transaction() as conn:
                store.set_meta(conn, "parser_version", PARSER_VERSION)
        changed |= write_synonyms(synonym_files, store, summary)
        if prune:
            changed |= prune_missing(store, summary)
        summary.timings["documents"] = round(time.perf_counter() - started, 3)
        summary.reindexed = reindex_if_needed(store, embedder, ctx, changed, display, summary, stop)
        display.close()
    prepare_query_model(embedder)
    summary.files_skipped = len({entry["path"] for entry in summary.skipped})
    docs, chunks = store.count()
    store.checkpoint()  # the store's file is complete on its own (SQLite's write-ahead log folded in)
    return {**summary.as_dict(), "documents_total": docs, "chunks_total": chunks,
            "seconds": round(time.perf_counter() - started, 3)}


def check_tags(tags: dict[str, Any] | None) -> dict[str, Any]:
    """Ingest tags as metadata values; a bad key or value is the caller's error, said before any work."""
    out: dict[str, Any] = {}
    for key, value in (tags or {}).items():
        key = str(key).strip()
        if not key or any(c.isspace() for c in key):
            raise InputError(f"tag key {key!r} must be a non-empty word (use --tag key=value)")
        if key in RESERVED_TAGS:
            raise InputError(f"tag key {key!r} is set by citewise itself; choose another name")
        mv = metadata_value(value)
        if mv is None or mv == "":
            raise InputError(f"tag {key!r} needs a string, number, boolean or list value (got {value!r})")
        out[key] = mv
    return out


def converts(kind: str) -> bool:
    """Whether a file of this source type goes through kb.convert ("": unreadable, nothing to convert)."""
    return bool(kind) and kind not in TEXT_KINDS


TRANSCRIPT_WORDS = 180  # words, speaker labels counted: near MiniLM's 256 word pieces (a window past it is pooled)


def convert_options(ctx: Context) -> dict[str, Any]:
    """Transcript windows, each a chunk, cut at a speaker turn: about TRANSCRIPT_WORDS words (so a larger
    `chunk_size` no longer widens them; a smaller one narrows them). A call moves from subject to subject;
    a 30-turn call as one chunk was one mean-pooled vector about everything, too large to fit beside the
    governing article. One segment longer than a window (a monologue) is still cut by the chunker."""
    return {"max_words": max(50, min(TRANSCRIPT_WORDS, int(ctx.chunk_size * WORDS_PER_TOKEN)))}


def triage(source: SourceFile, store: Store, reparse: bool, tags: dict[str, Any]) -> str | None:
    """None when the file is unchanged since it was last ingested (same bytes, same tags: nothing to do),
    else its source type ("" when it cannot even be read: `plan_file` reports why)."""
    try:
        raw = read_bytes(source.path)
        kind = source_type(source.path, raw)
        text = text_of(raw, source.path) if kind in TEXT_KINDS else None
    except IngestError:
        return ""
    if not raw.strip():
        return ""
    base = digest_of(raw, text)
    digest = content_hash(base + json.dumps(tags, sort_keys=True)) if tags else base
    return None if store.source_hash(str(source.path)) == digest and not reparse else kind


def ingest_file(source: SourceFile, store: Store, ctx: Context, reparse: bool, summary: Summary,
                tags: dict[str, Any] | None = None, conversion: Conversion | None = None) -> bool:
    """Plan and write one file; True when the store changed. Whatever goes wrong with this file —
    even a bug in a converter — is reported as a skip and leaves the store as it was."""
    key = str(source.path)
    try:
        plan = plan_file(source, store, ctx, reparse, summary, tags, conversion)
        return write_file(plan, store, summary) if plan is not None else False
    except IngestError as exc:
        summary.skip_error(key, exc)
    except Exception as exc:  # a bug on one odd file must not cost the rest of the batch
        if is_database_error(exc):
            raise  # the store itself failed: not this file's fault, and every later file would fail too
        if os.environ.get("CITEWISE_DEBUG"):
            raise
        summary.skip(key, f"could not ingest ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
    return False


def plan_file(source: SourceFile, store: Store, ctx: Context, reparse: bool, summary: Summary,
              tags: dict[str, Any] | None = None, conversion: Conversion | None = None) -> FilePlan | None:
    """Read and parse one file and diff it against the store; None when there is nothing to do.
    `conversion` is the file already converted by a worker (else it is converted here)."""
    key = str(source.path)
    tags = tags or {}
    raw = read_bytes(source.path)
    if not raw.strip():
        reason = "empty file (0 bytes)" if not raw else "empty file (only whitespace)"
        if store.document_hashes(key):
            reason += "; its previously ingested documents are kept"
        summary.skip(key, reason, warning=True)
        return None
    kind = source_type(source.path, raw)
    converted = kind not in TEXT_KINDS
    text = None if converted else text_of(raw, source.path)
    base = digest_of(raw, text)
    digest = content_hash(base + json.dumps(tags, sort_keys=True)) if tags else base  # other tags: another ingest
    if store.source_hash(key) == digest and not reparse:
        summary.files_unchanged += 1
        return None
    existing = {} if reparse else store.document_hashes(key)
    plan = FilePlan(source=source, digest=digest, previous=set(store.document_hashes(key)))
    if converted:
        conversion = conversion or convert_one(source.path, convert_options(ctx))
        if conversion.digest and conversion.digest != base:
            summary.skip(key, "the file changed while it was being ingested; ingest it again")
            return None
        if isinstance(conversion.error, ConversionError):
            summary.skip(key, conversion.error.message)
            return None
        if conversion.error is not None or conversion.result is None:
            raise conversion.error or ValueError("conversion returned nothing")
        result = conversion.result
        items: Iterable[Document | IngestError] = [converted_document(result, source, base)]
    else:
        items = read_documents(source, text or "")
    seen: set[str] = set()
    for item in items:
        if isinstance(item, IngestError):
            summary.skip_error(key, item)
            plan.record = False
            continue
        if item.doc_id in seen:
            summary.skip(key, f"duplicate id {item.doc_id!r} in the same file; kept the first")
            continue
        try:  # every document has a namespace and a confidentiality level (access filters rely on it)
            item.metadata = with_access_metadata(item.metadata, f"{key} ({item.doc_id})")
        except IngestError as exc:
            summary.errors.append(str(exc))
            plan.record = False
            continue
        owner = store.document_source(item.doc_id)
        if owner is not None and owner != key and Path(owner).exists():
            summary.skip(key, f"id {item.doc_id!r} is already used by {owner}; skipped")
            plan.record = False
            continue
        seen.add(item.doc_id)
        summary.warnings.extend(item.warnings)
        if item.quarantine:
            summary.warnings.append(f"{key}: {item.doc_id} is quarantined, {item.quarantine}: it is stored but "
                                    "never retrieved or cited")
        elif item.held:
            where = ", ".join(repr(item.sections[i].heading or "(untitled)") for i in item.held)
            summary.warnings.append(f"{key}: {item.doc_id}: section {where} holds {next(iter(item.held.values()))}: "
                                    "that section is stored but never retrieved, read or cited; the rest answers, "
                                    "flagged for review")
        apply_metadata(item, tags)
        if existing.get(item.doc_id) == item.content_hash:
            plan.unchanged_documents += 1
            continue
        chunks = chunk_document(item, ctx.chunk_size, ctx.chunk_overlap)
        if not chunks:
            summary.skip(key, f"document {item.doc_id!r} has no text to index", warning=True)
            plan.record = False
            seen.discard(item.doc_id)
            continue
        try:
            fields, rules, warnings = document_rules(item, chunks)
        except IngestError as exc:
            summary.skip(key, str(exc))
            plan.record = False
            continue
        summary.warnings.extend(warnings)
        plan.writes.append(DocumentWrite(item, chunks, fields, rules))
    # A file that failed to parse keeps its old documents: a typo must not delete an article.
    plan.gone = [d for d in plan.previous if d not in seen] if plan.record else []
    return plan


def apply_metadata(doc: Document, tags: dict[str, Any]) -> None:
    """Filterable metadata in precedence order: front matter (already in `doc.metadata` for articles),
    then ingest tags, then what the file says about itself (source_type, author, created, ...)."""
    from_file = doc.source_type in TEXT_KINDS  # front matter / BEIR metadata
    front, derived = (doc.metadata, {}) if from_file else ({}, doc.metadata)
    doc.metadata = {"source_type": doc.source_type, **derived, **tags, **front}
    listed = front.get("tags")
    own = [str(t) for t in listed] if isinstance(listed, list) else [str(listed)] if listed else []
    doc.tags = own + [f"{k}={v}" for k, v in tags.items()]
    if tags:
        doc.content_hash = content_hash(doc.content_hash + json.dumps(tags, sort_keys=True))


def write_file(plan: FilePlan, store: Store, summary: Summary) -> bool:
    """Apply one file's plan: one transaction per document, then one for removals and the file's hash.

    The hash goes last, so a file whose ingest was interrupted is planned again next time; its
    documents already written are then unchanged by hash and skipped. Every transaction that
    changes content bumps the generation, so each generation names one committed state, and each
    chunk's position records the generation its document's transaction created (the spec's
    `indexVersion`).
    """
    key = str(plan.source.path)
    summary.documents_unchanged += plan.unchanged_documents
    for w in plan.writes:
        metadata = {**w.doc.metadata, **({QUARANTINED: True} if w.doc.quarantine else {}),
                    **({HELD_BACK: len(w.doc.held)} if w.doc.held else {})}
        with store.transaction() as conn:
            version = int(store.get_meta("generation", "0") or 0) + 1
            _put(store, conn, key, w, metadata, version)
            # The generation row is updated after the document's lock is held (the order every writer
            # keeps); when another machine committed in between, the document is written again with
            # the generation this transaction really creates (it holds both locks now).
            created = store.bump_generation(conn)
            if created != version:
                _put(store, conn, key, w, metadata, created)
        if w.doc.doc_id in plan.previous:
            summary.documents_updated += 1
        else:
            summary.documents_added += 1
        summary.chunks_written += len(w.chunks)
        kind = w.doc.source_type or "markdown"
        summary.source_types[kind] = summary.source_types.get(kind, 0) + 1
    with store.transaction() as conn:
        summary.documents_removed += store.delete_documents(conn, plan.gone)
        if plan.record:
            stat = plan.source.path.stat()
            store.record_source(conn, key, plan.digest, stat.st_size, stat.st_mtime)
        if plan.gone:
            store.bump_generation(conn)
    summary.files_ingested += 1
    return bool(plan.writes or plan.gone)


def _put(store: Store, conn: Any, key: str, w: DocumentWrite, metadata: dict[str, Any], version: int) -> None:
    for chunk in w.chunks:
        chunk.position["indexVersion"] = version
    store.put_document(conn, doc_id=w.doc.doc_id, source=key, title=w.doc.title, metadata=metadata,
                       content_hash=w.doc.content_hash, structured=w.doc.structured, fields=w.fields,
                       guardrails=w.rules, chunks=w.chunks)


def write_synonyms(paths: list[Path], store: Store, summary: Summary) -> bool:
    changed = False
    for path in paths:
        try:
            data = load_synonyms(path)
        except IngestError as exc:
            summary.skip_error(str(path), exc)
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


def reindex_if_needed(store: Store, embedder: Embedder, ctx: Context, changed: bool, display: Progress | None = None,
                      summary: Summary | None = None, stop: SafePoints | None = None) -> bool:
    """Rebuild the snapshot when content changed or the current one is not a sound build of the store's
    generation (a previous ingest was killed during its index build; a damaged index file)."""
    chunks = store.count()[1]
    if not chunks or (not changed and _index_current(store)):
        return False
    display = display or Progress()
    with build_lock(store.home):
        if _index_current(store):
            return False
        step = with_safe_points(display.phase("embedding", chunks, "chunk"), stop, chunks)
        manifest = build_indexes(store, embedder, progress=step, vector_store=ctx.vector_store)
    if summary is not None:
        summary.timings["index"] = manifest.get("seconds", 0.0)
        summary.timings["embedding"] = manifest.get("embedding_seconds", 0.0)
    return True


def _index_current(store: Store) -> bool:
    status = check_snapshot(store.home, store.generation(), store_id=store.store_id())
    if status.state in ("damaged", "outdated"):
        log.warning("citewise: the index of %s is %s (%s): rebuilding it", store.home, status.state, status.detail)
    return status.state == "current"


def with_safe_points(step: Callable[[int], None], stop: SafePoints | None, total: int) -> Callable[[int], None]:
    """The embedding phase's progress callback, each call also a safe point: the embedder reports a slice
    of chunks only once its vectors are cached, so stopping there loses nothing already embedded."""
    if stop is None:
        return step
    done = [0]

    def checked(n: int) -> None:
        done[0] += n
        step(n)
        stop.check(f"while embedding ({done[0]} of {total} chunks done, their vectors cached): the store holds "
                   "every file of this ingest, the index was not rebuilt")

    return checked


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
            embedding_model: str | None = None, progress: bool | None = None) -> dict[str, Any]:
    """Rebuild every derived index from the store; `embedding_model` switches the home to another model."""
    ctx = context or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    if embedding_model:
        ctx = ctx.with_overrides(embedding_model=embedding_model)
    if not store_exists(ctx.home_path, ctx.database_url):
        raise InputError(f"no knowledge base at {ctx.home_path}")
    store = open_store(ctx.home_path, ctx.database_url)
    if store.kind == "sqlite" and store.count()[0] == 0:
        refuse_truncated_store(ctx.home_path)  # an index is never rebuilt from a store that lost its content
    embedder = _embedder_for(ctx, switching=bool(embedding_model))
    with safe_points() as stop, build_lock(store.home):
        forget(ctx.home_path)
        display = Progress(choose_mode(progress))
        total = store.count()[1]
        step = with_safe_points(display.phase("embedding", total, "chunk"), stop, total)
        manifest = build_indexes(store, embedder, progress=step, vector_store=ctx.vector_store, full_sync=True)
        display.close()
    store.checkpoint()
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
        if len(fields) > MAX_FIELDS:
            raise IngestError(f"{doc.source}: {doc.doc_id} declares more than {MAX_FIELDS} required-data fields")
        if chunk.chunk_type == "required_data":
            parsed, warn = parse_required_data(chunk.text)
            warnings.extend(f"{doc.doc_id}: {w}" for w in warn)
            for f in parsed:
                if all(existing["key"] != f.key for existing in fields):
                    fields.append({**f.as_dict(), "group": f.group, "chunk_id": chunk.chunk_id})
        elif chunk.chunk_type == "guardrails":
            rules = rules.merge(parse_guardrails(chunk.text))
            rule_chunks.append(chunk.chunk_id)
    if len(fields) > MAX_FIELDS:
        raise IngestError(f"{doc.source}: {doc.doc_id} declares more than {MAX_FIELDS} required-data fields")
    if doc.held and rules.always:  # an Always rule is an order to the assistant, by format: a document where
        # someone planted one passage of orders cannot vouch for its others (its Never rules only withhold)
        warnings.append(f"{doc.doc_id}: its {len(rules.always)} Always rule(s) are not applied, since a section "
                        "of it addresses the assistant")
        rules = Guardrails(rules.never_say, rules.never, [])
    if max(len(rules.never_say), len(rules.never), len(rules.always)) > MAX_RULES:
        raise IngestError(f"{doc.source}: {doc.doc_id} has more than {MAX_RULES} guardrail rules of one kind")
    return fields, {**rules.as_dict(), "chunk_ids": rule_chunks}, warnings


def prepare_query_model(embedder: Embedder) -> None:
    """Settle the query embedder's runtime now: for MiniLM on ONNX that exports the model once per model
    version (~12 s, needs torch). An ingest whose vectors all came from the cache never ran the model,
    and without this the first `citewise ask` after it would pay for the export."""
    getattr(embedder, "backend", None)  # the property resolves (and, on ONNX, exports) on first access


def _embedder_for(ctx: Context, switching: bool = False) -> Embedder:
    embedder = get_embedder(ctx.embedding_model, ctx.embedding_base_url)
    existing = recorded_model(ctx.home_path)
    if existing is not None and existing != embedder.model_id and not switching:
        raise ConfigError(f"{ctx.home_path} is indexed with {existing!r}, not {embedder.model_id!r}; vectors of "
                          "two models are never mixed: use the same embedding_model or "
                          "`citewise reindex --embedding-model`")
    return embedder
