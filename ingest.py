"""Ingestion: files -> documents -> chunks in SQLite, then one rebuild of the derived indexes.

Unchanged files (same bytes) are skipped without parsing; a changed file replaces its documents'
chunks; documents that vanished from a re-ingested file are removed; `prune` removes documents
whose files are gone. A malformed file (or BEIR line) is reported and skipped, never fatal.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from citewise.config import Context
from citewise.errors import ConfigError, IngestError, InputError
from citewise.kb.articles import PARSER_VERSION, Document
from citewise.kb.chunker import Chunk, chunk_document
from citewise.kb.fields import parse_required_data
from citewise.kb.guardrails import Guardrails, parse_guardrails
from citewise.kb.loaders import discover, read_documents, read_text
from citewise.kb.synonyms import load_synonyms
from citewise.knowledge import build_indexes, forget, recorded_model
from citewise.retrieval.embeddings import get_embedder
from citewise.store.sqlite import Store


def _doc_rules(doc: Document, chunks: list[Chunk]) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
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


def _file_digest(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


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
    embedder = get_embedder(ctx.embedding_model, ctx.embedding_base_url)
    existing = recorded_model(ctx.home_path)
    if existing is not None and existing != embedder.model_id:
        raise ConfigError(f"{ctx.home_path} is indexed with {existing!r}, not {embedder.model_id!r}; vectors of "
                          "two models are never mixed: use the same embedding_model or "
                          "`citewise reindex --embedding-model`")
    store = Store(ctx.home_path)
    show = sys.stderr.isatty() if progress is None else progress
    summary: dict[str, Any] = {"home": str(ctx.home_path), "files_seen": len(files), "files_unchanged": 0,
                               "files_ingested": 0, "documents_added": 0, "documents_updated": 0,
                               "documents_removed": 0, "documents_unchanged": 0, "chunks_written": 0,
                               "errors": [], "warnings": list(problems), "reindexed": False}
    changed = False
    reparse = store.get_meta("parser_version") != PARSER_VERSION  # unchanged bytes, changed meaning
    bar = _progress(len(files), "parsing", show)
    for source in files:
        bar(1)
        key = str(source.path)
        try:
            text = read_text(source.path)
        except IngestError as exc:
            summary["errors"].append(str(exc))
            continue
        digest = _file_digest(text)
        if store.source_hash(key) == digest and not reparse:
            summary["files_unchanged"] += 1
            continue
        existing = {} if reparse else store.document_hashes(key)
        previous = set(store.document_hashes(key))
        seen: set[str] = set()
        writes: list[tuple[Document, list[Chunk], list[dict[str, Any]], dict[str, Any]]] = []
        for item in read_documents(source, text):
            if isinstance(item, IngestError):
                summary["errors"].append(str(item))
                continue
            if item.doc_id in seen:
                summary["errors"].append(f"{key}: duplicate id {item.doc_id!r} in the same file; kept the first")
                continue
            owner = store.document_source(item.doc_id)
            if owner is not None and owner != key and Path(owner).exists():
                summary["errors"].append(f"{key}: id {item.doc_id!r} is already used by {owner}; skipped")
                continue
            seen.add(item.doc_id)
            if existing.get(item.doc_id) == item.content_hash:
                summary["documents_unchanged"] += 1
                continue
            chunks = chunk_document(item, ctx.chunk_size, ctx.chunk_overlap)
            fields, rules, warnings = _doc_rules(item, chunks)
            summary["warnings"].extend(warnings)
            writes.append((item, chunks, fields, rules))
        gone = [d for d in previous if d not in seen]
        with store.transaction() as conn:
            for doc, chunks, fields, rules in writes:
                if doc.doc_id in previous:
                    summary["documents_updated"] += 1
                else:
                    summary["documents_added"] += 1
                store.put_document(conn, doc_id=doc.doc_id, source=key, title=doc.title, metadata=doc.metadata,
                                   content_hash=doc.content_hash, structured=doc.structured, fields=fields,
                                   guardrails=rules, chunks=chunks)
                summary["chunks_written"] += len(chunks)
            summary["documents_removed"] += store.delete_documents(conn, gone)
            stat = source.path.stat()
            store.record_source(conn, key, digest, stat.st_size, stat.st_mtime)
            if writes or gone:
                store.bump_generation(conn)
                changed = True
        summary["files_ingested"] += 1

    if reparse and files:
        with store.transaction() as conn:
            store.set_meta(conn, "parser_version", PARSER_VERSION)

    for path in synonym_files:
        try:
            data = load_synonyms(path)
        except IngestError as exc:
            summary["errors"].append(str(exc))
            continue
        if store.get_meta(f"synonyms:{path}") != _file_digest(repr(sorted(data.items()))):
            with store.transaction() as conn:
                store.put_synonyms(conn, str(path), data)
                store.set_meta(conn, f"synonyms:{path}", _file_digest(repr(sorted(data.items()))))
                store.bump_generation(conn)
            changed = True

    if prune:
        with store.transaction() as conn:
            for src in store.sources():
                if not Path(src).exists():
                    summary["documents_removed"] += store.forget_source(conn, src)
                    changed = True
            for src in store.synonym_sources():
                if not Path(src).exists():
                    store.delete_synonyms(conn, src)
                    changed = True
            if changed:
                store.bump_generation(conn)

    docs, chunks = store.count()
    manifest_ok = (ctx.home_path / "index" / "manifest.json").exists()
    if changed or (chunks and not manifest_ok):
        forget(ctx.home_path)
        embed_bar = _progress(chunks, "embedding", show)
        build_indexes(store, embedder, progress=embed_bar, vector_store=ctx.vector_store)
        summary["reindexed"] = True
    summary.update(documents_total=docs, chunks_total=chunks, seconds=round(time.perf_counter() - started, 3))
    return summary


def reindex(home: str | Path | None = None, *, context: Context | None = None,
            embedding_model: str | None = None) -> dict[str, Any]:
    """Rebuild every derived index from SQLite; `embedding_model` switches the home to another model."""
    ctx = context or Context()
    if home is not None:
        ctx = ctx.with_overrides(home=str(home))
    if embedding_model:
        ctx = ctx.with_overrides(embedding_model=embedding_model)
    if not Store.exists(ctx.home_path):
        raise InputError(f"no knowledge base at {ctx.home_path}")
    embedder = get_embedder(ctx.embedding_model, ctx.embedding_base_url)
    existing = recorded_model(ctx.home_path)
    if existing is not None and existing != embedder.model_id and not embedding_model:
        raise ConfigError(f"{ctx.home_path} is indexed with {existing!r}; pass --embedding-model to switch to "
                          f"{embedder.model_id!r}")
    store = Store(ctx.home_path)
    forget(ctx.home_path)
    manifest = build_indexes(store, embedder, progress=_progress(store.count()[1], "embedding", sys.stderr.isatty()),
                             vector_store=ctx.vector_store, full_sync=True)
    return {"home": str(ctx.home_path), **manifest}


def _progress(total: int, label: str, show: bool):
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
