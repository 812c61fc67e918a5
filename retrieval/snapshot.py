"""A knowledge-base snapshot: the indexes of one store generation, self-contained, loaded once.

An index build reads the store in one read transaction and writes everything a question needs —
passages, documents, synonyms, BM25, vectors, metadata columns — into a fresh directory, then points
the `index` symlink at it (an atomic swap). A snapshot never reads the store again, so a run that
pins one snapshot sees one generation from its first step to its last, whatever ingests happen
meanwhile; old snapshots stay usable until nobody holds them.

`open_kb(home)` returns the process-wide snapshot of the current generation (models and indexes
load once per process); `open_kb(home, generation=g)` returns the snapshot a run pinned.

Snapshots prove what they are: the manifest records the store generation, a sha256 of every file and
of the row order, and a snapshot is verified before it is loaded. A damaged one (a shuffled
rows.json, a truncated vectors file, an edited passages file) is never answered from: it is rebuilt
from the store, with a log line.

Writers build; readers answer. A reader whose snapshot is sound but older than the store (an ingest
is building the next one, or was killed while building it) answers from it and says so once in the
log: waiting for a build, or building inline, would stall questions for as long as an ingest embeds,
would make every reader of a home contend for the build lock, and would need write access to the
home. The ingest that is running, the rerun of a killed one (`ingest` always completes an index that
is behind the store) and `citewise doctor --repair` bring it up to date. A reader builds only when
there is nothing sound to answer from (no snapshot, or a damaged one), and then under the build
lock, so never beside a writer.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import mmap
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, NotIngestedError, StoreError
from ..kb.articles import FACETS
from ..kb.synonyms import SynonymExpander
from ..kb.text import ANALYZER_ID
from ..store.sqlite import Store
from .ann import ANN_FILE, ANN_MIN_ROWS, IVFIndex
from .bm25 import BM25Index, query_terms
from .embeddings import Embedder, get_embedder
from .filters import Filter, MetadataIndex, validate_filter
from .hybrid import Hit, SearchParams, hybrid_search
from .passage import Passage, index_text
from .vectors import ExactIndex, VectorIndex

INDEX_LINK = "index"  # symlink to the current index directory
MANIFEST = "manifest.json"
FORMAT = 3  # bump when the layout of an index directory changes: older ones are rebuilt (3: checksums)
OLD_SNAPSHOT_SECONDS = 600.0  # a superseded snapshot stays loaded this long for runs that pinned it
log = logging.getLogger(__name__)


@dataclass
class DocInfo:
    doc_id: str
    title: str
    metadata: dict[str, Any]
    structured: bool
    fields: list[dict[str, Any]]
    guardrails: dict[str, Any]
    first_row: int = 0
    rows: int = 0


class PassageTable:
    """Row-ordered passages of one build: JSON lines read on demand from a memory map.

    Keeping the text beside the indexes (rather than reading SQLite per query) is what makes a
    snapshot self-contained: a document deleted or rewritten after the build cannot change it.
    """

    FILE, OFFSETS = "passages.jsonl", "passages.offsets.npy"

    def __init__(self, directory: Path):
        self.offsets = np.load(directory / self.OFFSETS)
        size = (directory / self.FILE).stat().st_size
        with (directory / self.FILE).open("rb") as fh:
            self._data: mmap.mmap | bytes = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""

    @classmethod
    def write(cls, directory: Path, rows: list[dict[str, Any]]) -> None:
        offsets = [0]
        with (directory / cls.FILE).open("wb") as fh:
            for row in rows:
                line = json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
                fh.write(line)
                offsets.append(offsets[-1] + len(line))
        np.save(directory / cls.OFFSETS, np.asarray(offsets, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def get(self, row: int) -> dict[str, Any]:
        return json.loads(self._data[int(self.offsets[row]):int(self.offsets[row + 1])])


@dataclass
class KnowledgeBase:
    home: Path
    directory: Path
    store: Store
    generation: int
    chunk_ids: list[str]
    doc_of_row: list[str]
    passages: PassageTable
    meta: MetadataIndex
    bm25: BM25Index
    vectors: VectorIndex
    embedder: Embedder
    docs: dict[str, DocInfo]
    synonyms: SynonymExpander
    facets: dict[str, list[str]] = field(default_factory=dict)
    row_of: dict[str, int] = field(default_factory=dict)
    _detector: Any = None
    _memo: OrderedDict = field(default_factory=OrderedDict)
    _memo_lock: threading.Lock = field(default_factory=threading.Lock)

    # --- loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, home: Path, vector_store: str = "local", embedding_model: str = "minilm",
             embedding_base_url: str = "") -> KnowledgeBase:
        """The snapshot to answer from: the current one when it is sound, even when the store has moved
        on (see the module docstring); a missing or damaged one is rebuilt first, under the build lock."""
        home = Path(home)
        if not Store.exists(home):
            raise NotIngestedError(f"no knowledge base at {home}: run `citewise ingest PATH --home {home}` first")
        store = Store(home)
        generation = store.generation()
        if store.count()[0] == 0:
            refuse_truncated_store(home)
            raise NotIngestedError(f"the knowledge base at {home} is empty: run `citewise ingest PATH` first")
        embedder = get_embedder(embedding_model, embedding_base_url)
        check_model(home, embedder.model_id)
        for _ in range(5):
            status = check_snapshot(home, generation)
            if not status.usable:
                status = heal(store, embedder, status, vector_store)
            try:
                kb = cls.open(home, store, embedder, vector_store, directory=status.directory)
            except (OSError, ValueError):
                if status.directory is not None and status.directory.exists():
                    raise
                continue  # a writer swapped in a newer snapshot and removed this one meanwhile: take the newer
            if status.state == "stale":
                note_stale(home, status)
            return kb
        raise StoreError(f"the index of {home} kept changing while it was being opened: retry")

    @classmethod
    def open(cls, home: Path, store: Store, embedder: Embedder, vector_store: str = "local",
             directory: Path | None = None) -> KnowledgeBase:
        directory = directory or (home / INDEX_LINK).resolve()
        manifest = read_manifest_at(directory)
        if manifest is None:
            raise NotIngestedError(f"the index of {home} is missing: run `citewise reindex --home {home}`")
        rows = json.loads((directory / "rows.json").read_text())
        local: VectorIndex = IVFIndex.load(directory) if (directory / ANN_FILE).exists() else ExactIndex.load(directory)
        vectors = local
        if vector_store == "pinecone":
            from .pinecone import PineconeVectorIndex

            remote = PineconeVectorIndex.from_env(home, rows["chunk_ids"], embedder.model_id)
            remote.check_model()
            remote.local = local  # exact re-scoring of fusion candidates stays local
            vectors = remote
        docs = {d["doc_id"]: DocInfo(**d) for d in json.loads((directory / "documents.json").read_text())}
        meta = MetadataIndex.load(str(directory / "metadata.npz"))
        synonyms = json.loads((directory / "synonyms.json").read_text())
        kb = cls(home=home, directory=directory, store=store, generation=int(manifest["generation"]),
                 chunk_ids=rows["chunk_ids"], doc_of_row=rows["doc_ids"], passages=PassageTable(directory),
                 meta=meta, bm25=BM25Index.load(directory / "bm25"), vectors=vectors, embedder=embedder,
                 docs=docs, synonyms=SynonymExpander(synonyms))
        kb.row_of = {cid: i for i, cid in enumerate(kb.chunk_ids)}
        kb.facets = {f: meta.values(f) for f in FACETS}
        return kb

    @property
    def facet_detector(self) -> Any:
        """Built on first use and kept with this (immutable) snapshot."""
        if self._detector is None:
            from ..engine.facets import FacetDetector, term_precision_fn

            self._detector = FacetDetector(self.facets, self.synonyms.groups, term_precision_fn(self))
        return self._detector

    def is_current(self) -> bool:
        return self.store.generation() == self.generation

    # --- search -------------------------------------------------------------------------------
    def search(self, query: str, *, filters: Filter | None = None, params: SearchParams | None = None,
               expansions: list[str] | None = None) -> list[Passage]:
        """Hybrid (or single-branch) search returning passages with their branch scores.

        Memoised per snapshot: within one question the required-data step and retrieval issue the
        same search, and an interrupted run replays its node on every resume.
        """
        key = json.dumps([query, filters or {}, asdict(params or SearchParams()), expansions], sort_keys=True)
        with self._memo_lock:
            cached = self._memo.get(key)
            if cached is not None:
                self._memo.move_to_end(key)
        if cached is None:
            cached = self.passages_of(self.search_rows(query, filters=filters, params=params, expansions=expansions))
            with self._memo_lock:
                self._memo[key] = cached
                if len(self._memo) > 256:
                    self._memo.popitem(last=False)
        return [replace(p) for p in cached]  # callers may annotate their copies

    def search_rows(self, query: str, *, filters: Filter | None = None, params: SearchParams | None = None,
                    expansions: list[str] | None = None) -> list[Hit]:
        """The search itself, without decoding passages (what benchmarks time)."""
        params = params or SearchParams()
        flt = validate_filter(filters or {})
        mask = self.meta.mask(flt)
        extra = self.synonyms.expansions(query) if expansions is None else expansions
        weighted = query_terms(query, extra)
        qvec = self.embedder.embed_query(query) if params.method != "bm25" else None
        return hybrid_search(self.bm25, self.vectors, weighted, qvec, mask, params, flt)

    def passages_of(self, hits: list[Hit]) -> list[Passage]:
        return [Passage(**self.passages.get(h.row), score=h.score, bm25=h.bm25, dense=h.dense,
                        bm25_rank=h.bm25_rank, dense_rank=h.dense_rank, row=h.row) for h in hits]

    def chunks_of(self, doc_id: str) -> list[Passage]:
        """A document's chunks in reading order (rows of a document are contiguous)."""
        doc = self.docs.get(doc_id)
        if doc is None:
            return []
        return [Passage(**self.passages.get(r), row=r) for r in range(doc.first_row, doc.first_row + doc.rows)]

    def vectors_of(self, rows: list[int]) -> np.ndarray:
        """Dense vectors of some rows (from the local index, also kept when Pinecone serves queries)."""
        local = getattr(self.vectors, "local", None) or self.vectors
        return np.asarray(local.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)


# --- the process-wide cache: current snapshots, and superseded ones runs may have pinned ------------
_Key = tuple[Path, str, str, str]
_CURRENT: dict[_Key, KnowledgeBase] = {}
_PINNED: OrderedDict[tuple[_Key, int], tuple[KnowledgeBase, float]] = OrderedDict()
_LOCKS: dict[_Key, threading.Lock] = {}
_CACHE_LOCK = threading.Lock()  # guards the dicts only; loading happens under the per-home lock


def open_kb(home: Path, vector_store: str = "local", embedding_model: str = "minilm",
            embedding_base_url: str = "", *, generation: int | None = None) -> KnowledgeBase:
    """The snapshot a run pinned (`generation`) when still loaded, else the current one."""
    key: _Key = (Path(home).resolve(), vector_store, embedding_model, embedding_base_url)
    with _CACHE_LOCK:
        if generation is not None:
            current = _CURRENT.get(key)
            if current is not None and current.generation == generation:
                return current
            pinned = _PINNED.get((key, generation))
            if pinned is not None:
                _PINNED[(key, generation)] = (pinned[0], time.monotonic())
                return pinned[0]
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:
        with _CACHE_LOCK:
            kb = _CURRENT.get(key)
        if kb is not None and kb.directory.name == _link_target(key[0]):
            return kb  # still the snapshot writers last swapped in (sound, maybe behind the store: see load)
        fresh = KnowledgeBase.load(*key)
        with _CACHE_LOCK:
            if kb is not None:
                _PINNED[(key, kb.generation)] = (kb, time.monotonic())
            _CURRENT[key] = fresh
            _evict_old()
        return fresh


def _link_target(home: Path) -> str | None:
    try:
        return os.readlink(home / INDEX_LINK)
    except OSError:
        return None


def _evict_old() -> None:
    now = time.monotonic()
    for k in [k for k, (_, used) in _PINNED.items() if now - used > OLD_SNAPSHOT_SECONDS]:
        del _PINNED[k]
    while len(_PINNED) > 4:
        _PINNED.popitem(last=False)


def forget(home: Path) -> None:
    """Drop every cached snapshot of a home (after a rebuild in this process)."""
    home = Path(home).resolve()
    with _CACHE_LOCK:
        for key in [k for k in _CURRENT if k[0] == home]:
            del _CURRENT[key]
        for key in [k for k in _PINNED if k[0][0] == home]:
            del _PINNED[key]


# --- proving a snapshot: checksums, status, healing -------------------------------------------------
def read_manifest(home: Path) -> dict[str, Any] | None:
    return read_manifest_at(Path(home) / INDEX_LINK)


def read_manifest_at(directory: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def file_digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def row_digest(chunk_ids: list[str], doc_ids: list[str]) -> str:
    """The row order of an index: which chunk (of which document) each row holds. `citewise doctor`
    compares it with the store's own order, which catches a store edited without a new generation."""
    h = hashlib.sha256()
    for pair in zip(chunk_ids, doc_ids, strict=True):
        h.update(json.dumps(pair, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()


def index_files(directory: Path) -> list[str]:
    """Every file of a build (relative, sorted), the manifest aside."""
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*")
                  if p.is_file() and p.relative_to(directory).as_posix() != MANIFEST)


def verify_files(directory: Path, manifest: dict[str, Any]) -> str | None:
    """None when the build is exactly what was written; else what differs.

    The row order is proven on load by the checksum of rows.json (and of passages.jsonl, whose lines
    are in row order); the manifest's separate `row_order` digest is what `citewise doctor` compares
    with the order of the store's own chunks.
    """
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return "its manifest records no checksums"
    present = set(index_files(directory))
    missing, extra = sorted(set(files) - present), sorted(present - set(files))
    if missing:
        return f"file(s) missing: {', '.join(missing[:5])}"
    if extra:
        return f"file(s) not written by the build: {', '.join(extra[:5])}"
    for rel in sorted(files):
        if file_digest(directory / rel) != files[rel]:
            return f"{rel} does not match the checksum recorded when it was built"
    if not isinstance(manifest.get("row_order"), str):
        return "its manifest records no row order"
    return None


@dataclass
class SnapshotStatus:
    """What `check_snapshot` found. `current` and `stale` (sound, of an older generation) are usable;
    `missing`, `outdated` (another format or analyser) and `damaged` are rebuilt before use."""

    state: str
    detail: str = ""
    generation: int | None = None
    directory: Path | None = None
    manifest: dict[str, Any] | None = None

    @property
    def usable(self) -> bool:
        return self.state in ("current", "stale")


def check_snapshot(home: Path, store_generation: int | None = None, *, verify: bool = True) -> SnapshotStatus:
    """The state of the snapshot `index` points at, against the store's generation when given."""
    link = Path(home) / INDEX_LINK
    try:
        directory = link.resolve(strict=True)
    except (OSError, RuntimeError):
        return SnapshotStatus("missing", f"{link} is missing or points at nothing")
    manifest = read_manifest_at(directory)
    if manifest is None:
        return SnapshotStatus("damaged", f"{directory.name}/{MANIFEST} is missing or unreadable", directory=directory)
    try:
        generation = int(manifest["generation"])
    except (KeyError, TypeError, ValueError):
        return SnapshotStatus("damaged", f"{directory.name}/{MANIFEST} records no generation", directory=directory)
    if manifest.get("format") != FORMAT or manifest.get("analyzer") != ANALYZER_ID:
        return SnapshotStatus("outdated", f"built by another version of citewise (format {manifest.get('format')})",
                              generation, directory, manifest)
    if verify:
        problem = verify_files(directory, manifest)
        if problem:
            return SnapshotStatus("damaged", f"{directory.name}: {problem}", generation, directory, manifest)
    if store_generation is not None and generation != store_generation:
        return SnapshotStatus("stale", f"built from store generation {generation}, the store is at {store_generation}",
                              generation, directory, manifest)
    return SnapshotStatus("current", "", generation, directory, manifest)


def heal(store: Store, embedder: Embedder, status: SnapshotStatus, vector_store: str = "local") -> SnapshotStatus:
    """Rebuild a missing or damaged snapshot from the store (it is never answered from), under the build
    lock: when another process finished a build while this one waited, that build is used instead."""
    home = store.home
    log.warning("citewise: the index of %s is %s (%s): rebuilding it from the store", home, status.state,
                status.detail or "no snapshot")
    try:
        with build_lock(home):
            again = check_snapshot(home, store.generation())
            if again.usable:
                return again
            build_indexes(store, embedder, vector_store=vector_store)
    except OSError as exc:
        raise StoreError(f"the index of {home} is {status.state} ({status.detail}) and this process cannot rebuild "
                         f"it ({exc.strerror or exc}): run `citewise doctor --repair --home {home}` as a user who "
                         "can write the home") from None
    healed = check_snapshot(home, store.generation())
    log.warning("citewise: the index of %s was rebuilt (generation %s)", home, healed.generation)
    return healed


_STALE_NOTED: set[tuple[Path, str]] = set()


def note_stale(home: Path, status: SnapshotStatus) -> None:
    """Say once per snapshot that answers come from a sound but older generation, and what completes it."""
    key = (Path(home).resolve(), status.directory.name if status.directory else "")
    if key not in _STALE_NOTED:
        _STALE_NOTED.add(key)
        log.warning("citewise: answering from the index of %s %s; an ingest is building the next one or was "
                    "interrupted: `citewise ingest` (rerun) or `citewise doctor --repair --home %s` completes it",
                    home, status.detail, home)


def refuse_truncated_store(home: Path) -> None:
    """An empty store beside an index built from content means the store file was emptied or replaced:
    say so, rather than "not ingested" (and never rebuild the index from nothing)."""
    manifest = read_manifest(home)
    if manifest and int(manifest.get("chunks") or 0) > 0:
        raise StoreError(f"{Path(home) / 'citewise.db'} holds no documents, but the index beside it was built from "
                         f"{manifest['chunks']} chunks (generation {manifest.get('generation')}): the store file was "
                         "emptied or replaced. Restore it from a backup, or re-ingest your sources with "
                         f"`citewise ingest PATH --home {home}`")


# --- building --------------------------------------------------------------------------------------
def is_current(home: Path, generation: int) -> bool:
    """The manifest says the snapshot is of this generation and format (files not verified: see check_snapshot)."""
    return check_snapshot(home, generation, verify=False).state == "current"


def recorded_model(home: Path) -> str | None:
    manifest = read_manifest(home)
    return manifest.get("embedding_model") if manifest else None


def check_model(home: Path, model_id: str) -> None:
    existing = recorded_model(home)
    if existing is not None and existing != model_id:
        raise ConfigError(f"the index at {home} was built with {existing!r}, not {model_id!r}; vectors of two "
                          f"models are never mixed: use the same model or rebuild with "
                          f"`citewise reindex --home {home} --embedding-model ...`")


@contextlib.contextmanager
def build_lock(home: Path) -> Iterator[None]:
    """An exclusive lock per home across processes (flock: released even if the holder is killed).

    flock locks belong to an open file description, so two threads of one process exclude each other too.
    """
    Path(home).mkdir(parents=True, exist_ok=True)
    with (Path(home) / ".build.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_indexes(store: Store, embedder: Embedder | None = None,
                  progress: Callable[[int], None] | None = None, vector_store: str = "local",
                  full_sync: bool = False) -> dict[str, Any]:
    """Build a snapshot of the store's current generation in a new directory and swap it in.

    With vector_store="pinecone" the vectors are also synced to the Pinecone namespace of this home.
    """
    embedder = embedder or get_embedder()
    started = time.perf_counter()
    with store.reading():  # one consistent view: generation, documents, chunks and synonyms agree
        generation = store.generation()
        documents = list(store.documents())
        synonyms = store.synonyms()
        rows = [dict(r) for r in store.iter_chunks()]
    chunk_ids = [r["chunk_id"] for r in rows]
    doc_ids = [r["doc_id"] for r in rows]
    texts = [index_text(r["title"], r["section"], r["text"]) for r in rows]
    metadata = [json.loads(r["metadata"]) for r in rows]
    spans: dict[str, list[int]] = {}
    for i, d in enumerate(doc_ids):
        spans.setdefault(d, [i, 0])[1] += 1
    home = store.home
    clean_stale_builds(home)
    tmp = Path(tempfile.mkdtemp(prefix=f"index.tmp-{os.getpid()}-", dir=home))
    _share_like_home(tmp)
    try:
        BM25Index.build(texts).save(tmp / "bm25")
        vectors = embedder.embed_documents(texts, progress=progress) if texts else np.zeros((0, embedder.dim))
        ExactIndex(vectors).save(tmp)
        if len(chunk_ids) >= ANN_MIN_ROWS:  # exact search stops meeting latency targets around here
            IVFIndex.build(vectors).save(tmp)
        MetadataIndex(metadata).save(str(tmp / "metadata.npz"))
        PassageTable.write(tmp, [{"chunk_id": r["chunk_id"], "doc_id": r["doc_id"], "title": r["title"],
                                  "section": r["section"], "chunk_type": r["chunk_type"], "tier": r["tier"],
                                  "text": r["text"], "ordinal": r["ordinal"], "tokens": r["tokens"],
                                  "metadata": md} for r, md in zip(rows, metadata, strict=True)])
        docs = [{**d, "first_row": spans.get(d["doc_id"], [0, 0])[0], "rows": spans.get(d["doc_id"], [0, 0])[1]}
                for d in documents]
        (tmp / "documents.json").write_text(json.dumps(docs))
        (tmp / "synonyms.json").write_text(json.dumps(synonyms))
        if vector_store == "pinecone":
            from .pinecone import PineconeVectorIndex, namespace_for

            remote = PineconeVectorIndex.from_env(home, chunk_ids, embedder.model_id)
            remote.sync(chunk_ids, vectors, metadata, home / f"pinecone-{namespace_for(home)}.json", full=full_sync)
        (tmp / "rows.json").write_text(json.dumps({"chunk_ids": chunk_ids, "doc_ids": doc_ids}))
        manifest = {"format": FORMAT, "generation": generation, "embedding_model": embedder.model_id,
                    "analyzer": ANALYZER_ID, "chunks": len(chunk_ids), "documents": len(documents),
                    "row_order": row_digest(chunk_ids, doc_ids),
                    "files": {rel: file_digest(tmp / rel) for rel in index_files(tmp)},
                    "built_at": time.time(), "seconds": round(time.perf_counter() - started, 3)}
        _write_durably(tmp, manifest)
        final = tmp.with_name(f"index-g{generation}-{tmp.name.rsplit('-', 1)[-1]}")
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    swap_in(home, final)
    return manifest


def _share_like_home(directory: Path) -> None:
    """mkdtemp makes a private (0700) directory; a snapshot is as readable as the home it lives in,
    so a server running as another user can answer from it."""
    mode = Path(directory).parent.stat().st_mode & 0o777
    os.chmod(directory, mode | 0o700)


def _write_durably(directory: Path, manifest: dict[str, Any]) -> None:
    """The manifest goes last and every file is on disk before the swap: a crash (or power loss) after
    the swap can never leave `index` pointing at a build whose files are still in the page cache."""
    (directory / MANIFEST).write_text(json.dumps(manifest))
    for path in [*(directory / rel for rel in index_files(directory)), directory / MANIFEST]:
        with path.open("rb") as fh:
            os.fsync(fh.fileno())
    for folder in {directory, *(p.parent for p in directory.rglob("*") if p.is_file())}:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def swap_in(home: Path, directory: Path) -> None:
    """Point `index` at a finished build atomically, then remove older builds.

    Readers resolve the link once when they load; a removed directory stays readable for a process
    that already opened (or memory-mapped) its files.
    """
    link = home / INDEX_LINK
    if link.exists() and not link.is_symlink():  # an index directory from before snapshots were links
        legacy = home / f"index-legacy-{os.getpid()}"
        link.rename(legacy)
        shutil.rmtree(legacy, ignore_errors=True)
    tmp_link = home / f".index-link-{os.getpid()}-{threading.get_ident()}"
    with contextlib.suppress(FileNotFoundError):
        tmp_link.unlink()
    tmp_link.symlink_to(directory.name)
    os.replace(tmp_link, link)
    for old in home.glob("index-g*"):
        if old != directory:
            shutil.rmtree(old, ignore_errors=True)


def stale_builds(home: Path) -> list[Path]:
    """Temporary build directories and link files whose builder process is gone (killed mid-build)."""
    stale = []
    for tmp in [*Path(home).glob("index.tmp-*"), *Path(home).glob(".index-link-*")]:
        try:
            pid = int(tmp.name.lstrip(".").split("-")[2 if tmp.name.startswith(".") else 1])
        except (IndexError, ValueError):
            pid = -1
        if pid != os.getpid() and not _alive(pid):
            stale.append(tmp)
    return stale


def orphan_builds(home: Path) -> list[Path]:
    """Finished builds that `index` does not point at (a builder killed between its rename and the swap)."""
    target = _link_target(Path(home))
    return [d for d in Path(home).glob("index-g*") if d.name != target]


def clean_stale_builds(home: Path) -> list[Path]:
    """Remove temporaries of dead builders; returns what was removed."""
    removed = stale_builds(home)
    for tmp in removed:
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return removed


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
