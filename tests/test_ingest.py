from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.config import Context
from citewise.errors import InputError
from citewise.kb.ingest import ingest, reindex
from citewise.retrieval.snapshot import open_kb
from citewise.store import open_store

# Tests taking the `database_url` fixture run twice: on SQLite ("") and on a fresh PostgreSQL schema.


def test_reingest_is_idempotent_and_changes_replace_chunks(kb_copy: Path, tmp_path: Path, database_url: str) -> None:
    home, ctx = tmp_path / "home", Context(database_url=database_url)
    first = ingest([kb_copy], home, context=ctx, progress=False)
    assert first["documents_added"] == 31 and first["errors"] == [] and first["reindexed"]
    generation = open_store(home, database_url).generation()

    again = ingest([kb_copy], home, context=ctx, progress=False)
    assert again["files_unchanged"] == 31 and again["documents_added"] == 0 and not again["reindexed"]
    assert open_store(home, database_url).generation() == generation  # nothing changed, nothing rebuilt

    article = kb_copy / "acme" / "acme-401k-loan.md"
    article.write_text(article.read_text().replace("The minimum loan amount at Acme is $1,000.",
                                                   "The minimum loan amount at Acme is $2,500."))
    changed = ingest([kb_copy], home, context=ctx, progress=False)
    assert changed["documents_updated"] == 1 and changed["files_unchanged"] == 30 and changed["reindexed"]
    texts = " ".join(c["text"] for c in open_store(home, database_url).chunks_of("acme-401k-loan"))
    assert "$2,500" in texts and "$1,000." not in texts
    kb = open_kb(home, database_url=database_url)
    hits = kb.search("minimum loan amount Acme", params=None)
    assert any("$2,500" in h.text for h in hits)


def test_prune_removes_documents_whose_files_are_gone(kb_copy: Path, tmp_path: Path, database_url: str) -> None:
    home, ctx = tmp_path / "home", Context(database_url=database_url)
    ingest([kb_copy], home, context=ctx, progress=False)
    (kb_copy / "acme" / "acme-401k-qdro.md").unlink()
    kept = ingest([kb_copy], home, context=ctx, progress=False)
    assert kept["documents_total"] == 31  # without --prune nothing is deleted
    pruned = ingest([kb_copy], home, prune=True, context=ctx, progress=False)
    assert pruned["documents_removed"] == 1 and pruned["documents_total"] == 30
    assert open_store(home, database_url).document("acme-401k-qdro") is None
    assert all(cid.split("#")[0] != "acme-401k-qdro" for cid in open_kb(home, database_url=database_url).chunk_ids)


def test_malformed_files_are_reported_and_skipped(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text("---\nid: good\ntitle: Good\ntopic: loan\n---\n## Steps\n1. Do it.\n")
    (src / "bad.md").write_text("---\nid: [broken\n---\nbody\n")
    (src / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (src / "corpus.jsonl").write_text('{"_id": "b1", "title": "T", "text": "Body one."}\n{oops\n'
                                      '{"_id": "b2", "text": "Body two."}\n')
    (src / "image.png").write_bytes(b"\x89PNG")
    summary = ingest([src], tmp_path / "home", progress=False)
    assert summary["documents_total"] == 3  # good, b1, b2
    errors = " | ".join(summary["errors"])
    assert "bad.md" in errors and "latin1.txt" in errors and "corpus.jsonl:2" in errors
    assert any("image.png" in w for w in summary["warnings"])


def test_duplicate_ids_across_files_are_refused(tmp_path: Path, database_url: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a.md", "b.md"):
        (src / name).write_text("---\nid: same\ntitle: T\n---\nBody text here.\n")
    summary = ingest([src], tmp_path / "home", context=Context(database_url=database_url), progress=False)
    assert summary["documents_total"] == 1 and any("already used" in e for e in summary["errors"])


def test_bad_paths_are_a_clear_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        ingest([tmp_path / "missing"], tmp_path / "home", progress=False)
    with pytest.raises(InputError, match="nothing to ingest"):
        ingest([], tmp_path / "home", progress=False)


def test_reindex_rebuilds_from_the_store(kb_copy: Path, tmp_path: Path, database_url: str) -> None:
    home, ctx = tmp_path / "home", Context(database_url=database_url)
    ingest([kb_copy / "summit"], home, context=ctx, progress=False)
    manifest = home / "index" / "manifest.json"
    before = json.loads(manifest.read_text())
    import shutil

    shutil.rmtree((home / "index").resolve())  # the snapshot the `index` link points at
    result = reindex(home, context=ctx)
    assert result["chunks"] == before["chunks"] and manifest.exists()
    kb = open_kb(home, database_url=database_url)
    assert kb.search("15-year catch-up")[0].doc_id == "summit-403b-15-year-catch-up"


def test_a_new_parser_version_reparses_unchanged_files(kb_copy: Path, tmp_path: Path, database_url: str) -> None:
    home, ctx = tmp_path / "home", Context(database_url=database_url)
    ingest([kb_copy / "summit"], home, context=ctx, progress=False)
    store = open_store(home, database_url)
    with store.transaction() as conn:
        store.set_meta(conn, "parser_version", "0")
    again = ingest([kb_copy / "summit"], home, context=ctx, progress=False)
    assert again["files_unchanged"] == 0 and again["documents_updated"] == 9 and again["documents_added"] == 0
    assert ingest([kb_copy / "summit"], home, context=ctx, progress=False)["files_unchanged"] == 9


def test_ingest_settles_the_query_model_even_when_every_vector_was_cached(
        kb_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ONNX export belongs to ingest: the first `citewise ask` after it must not pay for it."""
    import citewise.kb.ingest as ingest_module
    from citewise.retrieval.embeddings import MiniLMEmbedder
    from tests.paths import SAMPLE_KB

    fresh = MiniLMEmbedder()  # as in a new process: runtime not chosen yet
    encoded: list[int] = []
    real_encode = fresh._encode
    monkeypatch.setattr(fresh, "_encode", lambda texts: encoded.append(len(texts)) or real_encode(texts))
    monkeypatch.setattr(ingest_module, "get_embedder", lambda *args: fresh)
    summary = ingest([SAMPLE_KB], tmp_path / "home", progress=False)  # kb_home cached every window vector
    assert summary["reindexed"] and encoded == []  # no document was run through the model...
    assert fresh._backend in ("onnx", "torch")  # ...and still the runtime is settled
