"""Refreshing a snapshot is incremental: a rebuild embeds only the text that changed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citewise.config import Context
from citewise.kb.ingest import ingest
from citewise.retrieval.embeddings import get_embedder
from citewise.retrieval.snapshot import open_kb


def test_a_rebuild_embeds_only_changed_text(tmp_path: Path, kb_copy: Path, database_url: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Context(database_url=database_url)
    ingest([kb_copy], tmp_path / "home", context=ctx, progress=False)
    before = open_kb(tmp_path / "home", database_url=database_url)
    embedder = get_embedder()
    embedded: list[str] = []
    original = embedder.embed_documents

    def counting(texts: list[str], progress: object = None) -> np.ndarray:
        embedded.extend(texts)
        return original(texts, progress=progress)

    monkeypatch.setattr(embedder, "embed_documents", counting)
    article = next(iter(sorted(kb_copy.rglob("*.md"))))
    article.write_text(article.read_text() + "\nA sentence that only this refresh has seen.\n")
    ingest([kb_copy], tmp_path / "home", context=ctx, progress=False)
    after = open_kb(tmp_path / "home", database_url=database_url)
    assert after.generation > before.generation
    assert len(embedded) == 1 and "only this refresh has seen" in embedded[0]
    unchanged = [r for r, cid in enumerate(after.chunk_ids) if cid in before.row_of and
                 after.passages.get(r)["text"] == before.passages.get(before.row_of[cid])["text"]]
    assert len(unchanged) == len(after.chunk_ids) - 1
    old_rows = [before.row_of[after.chunk_ids[r]] for r in unchanged]
    assert np.array_equal(after.vectors_of(unchanged), before.vectors_of(old_rows))


def test_a_damaged_snapshot_lends_no_vectors_to_the_next_build(tmp_path: Path, kb_copy: Path) -> None:
    """Vectors are reused only from a snapshot whose files match their checksums (text keys included)."""
    from citewise.retrieval.snapshot import INDEX_LINK, TEXT_KEYS, VECTORS_FILE, check_snapshot, read_manifest

    home = tmp_path / "home"
    ingest([kb_copy], home, progress=False)
    good = open_kb(home)
    expected = good.vectors_of(list(range(len(good.chunk_ids))))
    directory = (home / INDEX_LINK).resolve()
    assert TEXT_KEYS in read_manifest(home)["files"]  # the reuse keys are verified like every other file
    vectors = np.load(directory / VECTORS_FILE)
    np.save(directory / VECTORS_FILE, np.zeros_like(vectors))  # same shape, wrong values
    assert check_snapshot(home).state == "damaged"
    article = next(iter(sorted(kb_copy.rglob("*.md"))))
    article.write_text(article.read_text() + "\nA sentence that only this refresh has seen.\n")
    ingest([kb_copy], home, progress=False)
    after = open_kb(home)
    same = [r for r, cid in enumerate(after.chunk_ids) if cid in good.row_of
            and after.passages.get(r)["text"] == good.passages.get(good.row_of[cid])["text"]]
    assert len(same) == len(after.chunk_ids) - 1
    assert np.allclose(after.vectors_of(same), expected[[good.row_of[after.chunk_ids[r]] for r in same]], atol=1e-6)
