"""Ingestion: files -> documents -> chunks in the store, then one rebuild of the index snapshot.

    ingest = for each file: plan_file -> write_file;  then write_synonyms, prune, reindex

Unchanged files (same bytes) are skipped without parsing; a changed file replaces its documents'
chunks in one transaction; documents that vanished from a re-ingested file are removed; `prune`
removes documents whose files are gone. A malformed file (or BEIR line) is reported and skipped,
never fatal — and reported again on every ingest until it is fixed (its bytes are not recorded).
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Context
from ..errors import ConfigError, IngestError, InputError
from ..retrieval.embeddings import Embedder, get_embedder
from ..retrieval.snapshot import build_indexes, build_lock, forget, is_current, recorded_model
from ..store.sqlite import Store
from .access import with_access_metadata
from .articles import PARSER_VERSION, Document
from .chunker import Chunk, chunk_document
from .fields import parse_required_data
from .guardrails import Guardrails, parse_guardrails
from .loaders import SourceFile, discover, read_documents, read_text
from .synonyms import load_synonyms


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
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("nothing to ingest: give at least one file or folder")
    started = time.perf_counter()
    files, synonym_files, problems = discover(paths)
    if problems and not files and not synonym_files:
        raise InputError("; ".join(problems))
    embedder = _embedder_for(ctx)
    store = Store(ctx.home_path)
    show = sys.stderr.isatty() if progress is None else progress
    summary = Summary(home=str(ctx.home_path), files_seen=len(files), warnings=list(problems))
    reparse = store.get_meta("parser_version") != PARSER_VERSION  # unchanged bytes, changed meaning
    changed = False
    bar = _progress(len(files), "parsing", show)
    for source in files:
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
    summary.reindexed = reindex_if_needed(store, embedder, ctx, changed, show)
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
        try:  # every document has a namespace and a confidentiality level (access filters rely on it)
            item.metadata = with_access_metadata(item.metadata, f"{key} ({item.doc_id})")
        except IngestError as exc:
            summary.errors.append(str(exc))
            plan.record = False
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


def reindex_if_needed(store: Store, embedder: Embedder, ctx: Context, changed: bool, show: bool) -> bool:
    """Rebuild the snapshot when content changed or the current one is not of the store's generation
    (e.g. a previous ingest was killed during its index build)."""
    chunks = store.count()[1]
    if not chunks or (not changed and is_current(store.home, store.generation())):
        return False
    with build_lock(store.home):
        if is_current(store.home, store.generation()):
            return False
        build_indexes(store, embedder, progress=_progress(chunks, "embedding", show), vector_store=ctx.vector_store)
    return True


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
    embedder = _embedder_for(ctx, switching=bool(embedding_model))
    store = Store(ctx.home_path)
    with build_lock(store.home):
        forget(ctx.home_path)
        bar = _progress(store.count()[1], "embedding", sys.stderr.isatty())
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


def _progress(total: int, label: str, show: bool) -> Callable[[int], None]:
    """A tqdm bar on a terminal, a no-op otherwise (JSON output must stay clean)."""
    if not show or total == 0:
        return lambda n: None
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="item", leave=False, file=sys.stderr)

    def step(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return step
