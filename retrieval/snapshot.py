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

With PostgreSQL (`database_url`) the store is shared and `home` is this replica's own cache of
snapshots. The replica follows the database: a listener hears each new generation, and a background
refresher builds the new snapshot (window vectors come from the embedding cache, so only new text
is embedded) and swaps it in. Until it is ready, new questions are answered from the snapshot
already loaded: a refresh never blocks a question, and a run keeps the snapshot it started with.
A replica's home has no writer of its own, so there the refresher is the writer: it builds the
newest generation (and replaces a damaged snapshot) in the background, while readers answer from
the last sound one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import mmap
import os
import re
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
from ..kb.articles import FACETS, PROVIDER, QUARANTINED
from ..kb.synonyms import SynonymExpander, with_kb_acronyms
from ..kb.text import ANALYZER_ID
from ..store import Store, open_store, resolve_url, store_exists
from .ann import ANN_FILE, ANN_MIN_ROWS, IVFIndex
from .bm25 import BM25Index, query_terms
from .embeddings import Embedder, get_embedder
from .filters import Filter, MetadataIndex, validate_filter
from .hybrid import Hit, SearchParams, hybrid_search
from .passage import Passage, index_text
from .vectors import VECTORS_FILE, ExactIndex, VectorIndex

INDEX_LINK = "index"  # symlink to the current index directory
MANIFEST = "manifest.json"
TEXT_KEYS = "text_keys.json"  # sha1 of each row's index text: what the next build may reuse vectors by
FORMAT = 3  # bump when the layout of an index directory changes: older ones are rebuilt (3: checksums)
OLD_SNAPSHOT_SECONDS = 600.0  # a superseded snapshot stays loaded this long for runs that pinned it
KEEP_PINNED = 4  # superseded snapshots kept beyond this many only while a run used them recently...
PIN_GRACE_SECONDS = 60.0  # ...within this many seconds (longer than any run)
MAX_PINNED = 16  # and never more than this many (memory)
REFRESH_QUIET_SECONDS = 0.25  # a replica waits for this much quiet after a change before rebuilding...
REFRESH_MAX_WAIT_SECONDS = 1.0  # ...but no longer than this after the first change it heard of
DB_RETRY_SECONDS = 5.0  # a replica whose database is unreachable checks again after this long

log = logging.getLogger("citewise.snapshot")


TEXT_SCAN = 50_000  # how much of a plain document is read for the provider its text names (its opening)


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
    _doc_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _named: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    _types: dict[str, frozenset[str]] = field(default_factory=dict)

    # --- loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, home: Path, vector_store: str = "local", embedding_model: str = "minilm",
             embedding_base_url: str = "", database_url: str | None = None) -> KnowledgeBase:
        """The snapshot to answer from: the current one when it is sound, even when the store has moved
        on (see the module docstring); a missing, damaged or foreign one is rebuilt first, under the build
        lock."""
        home = Path(home)
        if not store_exists(home, database_url):
            raise NotIngestedError(f"no knowledge base at {home}: run `citewise ingest PATH --home {home}` first")
        store = open_store(home, database_url)
        generation = store.generation()
        if store.count()[0] == 0:
            if store.kind == "sqlite":
                refuse_truncated_store(home)
            where = home if store.kind == "sqlite" else getattr(store, "location", "the database")
            raise NotIngestedError(f"the knowledge base at {where} is empty: run `citewise ingest PATH` first")
        embedder = get_embedder(embedding_model, embedding_base_url)
        check_model(home, embedder.model_id)
        sid = store.store_id()
        for _ in range(5):
            status = check_snapshot(home, generation, store_id=sid)
            if not status.usable:
                status = heal(store, embedder, status, vector_store)
            try:
                kb = cls.open(home, store, embedder, vector_store, directory=status.directory)
            except (OSError, ValueError):
                if status.directory is not None and status.directory.exists():
                    raise
                continue  # a writer swapped in a newer snapshot and removed this one meanwhile: take the newer
            if status.state == "stale":
                note_stale(home, status, store.kind)
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

            remote = PineconeVectorIndex.from_env(home, rows["chunk_ids"], embedder.model_id,
                                                  shared_id=_shared_id(store))
            remote.check_model()
            remote.local = local  # exact re-scoring of fusion candidates stays local
            vectors = remote
        docs = {d["doc_id"]: DocInfo(**d) for d in json.loads((directory / "documents.json").read_text())}
        meta = MetadataIndex.load(str(directory / "metadata.npz"))
        synonyms = json.loads((directory / "synonyms.json").read_text())
        bm25 = BM25Index.load(directory / "bm25")
        kb = cls(home=home, directory=directory, store=store, generation=int(manifest["generation"]),
                 chunk_ids=rows["chunk_ids"], doc_of_row=rows["doc_ids"], passages=PassageTable(directory),
                 meta=meta, bm25=bm25, vectors=vectors, embedder=embedder,
                 docs=docs, synonyms=SynonymExpander(synonyms, known=bm25.vocab.__contains__))
        kb.row_of = {cid: i for i, cid in enumerate(kb.chunk_ids)}
        kb.facets = {f: meta.values(f) for f in FACETS}
        return kb

    @property
    def facet_detector(self) -> Any:
        """Built on first use and kept with this (immutable) snapshot."""
        if self._detector is None:
            from ..engine.facets import FacetDetector, name_case_fn, term_precision_fn

            self._detector = FacetDetector(self.facets, self.synonyms.groups, term_precision_fn(self),
                                           name_case=name_case_fn(self),
                                           occurs=lambda term: self.bm25.rows_containing(term).size > 0)
        return self._detector

    def chunk_types(self, doc_id: str) -> frozenset[str]:
        """The section kinds a document has (its chunks' types), kept per snapshot."""
        found = self._types.get(doc_id)
        if found is None:
            found = self._types[doc_id] = frozenset(p.chunk_type for p in self.chunks_of(doc_id))
        return found

    def named_facets(self, doc_id: str) -> dict[str, list[str]]:
        """The facet values a plain document's title or file name names ("fabrikam-wellness-benefit-
        schedule.xlsx" names Fabrikam): it has no front matter to say whose it is. A title that names no
        provider leaves its text to say: a text naming exactly one ("Staff at Contoso buildings...") is that
        provider's; one naming several (a FAQ covering every provider) is nobody's. Kept per snapshot."""
        found = self._named.get(doc_id)
        if found is None:
            info = self.docs.get(doc_id)
            title = info.title if info else ""
            stem_name = doc_id.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("_", " ")
            found = self.facet_detector.detect(f"{title}. {stem_name}")
            if not found.get(PROVIDER) and (owner := self._text_provider(doc_id)):
                found = {**found, PROVIDER: [owner]}
            self._named[doc_id] = found
        return found

    def _text_provider(self, doc_id: str) -> str | None:
        """The one provider a document's text names as a name (capitalised: "Residential" of "Northwind
        Residential", not "every residential tenancy"), in two sentences or more of its first TEXT_SCAN
        characters; None when it names none, several, or one in passing ("Unlike Contoso, we ...")."""
        text = " ".join(p.text for p in self.chunks_of(doc_id))[:TEXT_SCAN]
        mentions: dict[str, int] = {}
        sentences = [s.split() for s in re.split(r"(?<=[.!?:])\s+|\n+", text)]
        # a sentence's first word is capitalised anyway ("Residential landlords must"): it is a name only
        # where the text also capitalises it inside a sentence, or a capitalised word follows it
        inside = {w.strip(".,;:!?()\"'") for tokens in sentences for w in tokens[1:] if w[:1].isupper()}
        for tokens in sentences:
            if tokens and not (len(tokens) > 1 and tokens[1][:1].isupper()) and tokens[0].strip(".,;:!?()\"'") \
                    not in inside:
                tokens = tokens[1:]
            names = " ".join(w for w in tokens if w[:1].isupper())
            for value in self.facet_detector.detect(names).get(PROVIDER, []) if names else []:
                mentions[value] = mentions.get(value, 0) + 1
        if len(mentions) == 1 and next(iter(mentions.values())) >= 2:
            return next(iter(mentions))
        return None

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
        """A document's chunks in reading order (rows of a document are contiguous). A chunk held back at
        ingest (it addresses the assistant) is not among them: what search never returns, the answering
        steps that read a whole article (its context, its fields, its checks) never see either."""
        return [Passage(**p, row=r) for r, p in self._trusted_rows(doc_id)]

    def _trusted_rows(self, doc_id: str) -> list[tuple[int, dict[str, Any]]]:
        doc = self.docs.get(doc_id)
        if doc is None:
            return []
        rows = ((r, self.passages.get(r)) for r in range(doc.first_row, doc.first_row + doc.rows))
        return [(r, p) for r, p in rows if not (p.get("metadata") or {}).get(QUARANTINED)]

    def doc_vector(self, doc_id: str) -> np.ndarray | None:
        """A document's mean chunk vector, normalised: what the whole article is about (cached)."""
        with self._memo_lock:
            cached = self._doc_vectors.get(doc_id)
        rows = [r for r, _ in self._trusted_rows(doc_id)] if cached is None else []
        if rows:
            mean = self.vectors_of(rows).mean(axis=0)
            cached = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
            cached.setflags(write=False)  # shared by every thread answering from this snapshot
            with self._memo_lock:
                self._doc_vectors[doc_id] = cached
        return cached

    def vectors_of(self, rows: list[int]) -> np.ndarray:
        """Dense vectors of some rows (from the local index, also kept when Pinecone serves queries)."""
        local = getattr(self.vectors, "local", None) or self.vectors
        return np.asarray(local.vectors[np.asarray(rows, dtype=np.int64)], dtype=np.float32)


# --- the process-wide cache: current snapshots, and superseded ones runs may have pinned ------------
_Key = tuple[Path, str, str, str, str]  # home, vector store, embedding model, embedding URL, database URL
_CURRENT: dict[_Key, KnowledgeBase] = {}
_PINNED: OrderedDict[tuple[_Key, int], tuple[KnowledgeBase, float]] = OrderedDict()
_LOCKS: dict[_Key, threading.Lock] = {}
_FOLLOWERS: dict[_Key, _Follower] = {}
_CACHE_LOCK = threading.Lock()  # guards the dicts only; loading happens under the per-home lock


def open_kb(home: Path, vector_store: str = "local", embedding_model: str = "minilm",
            embedding_base_url: str = "", *, generation: int | None = None,
            database_url: str | None = None) -> KnowledgeBase:
    """The snapshot a run pinned (`generation`) when still loaded, else the current one.

    `database_url=None` reads $CITEWISE_DATABASE_URL; "" is the SQLite store in the home.
    """
    key: _Key = (Path(home).resolve(), vector_store, embedding_model, embedding_base_url, resolve_url(database_url))
    with _CACHE_LOCK:
        current = _CURRENT.get(key)
        if generation is not None:
            if current is not None and current.generation == generation:
                return current
            pinned = _PINNED.get((key, generation))
            if pinned is not None:
                _PINNED[(key, generation)] = (pinned[0], time.monotonic())
                _PINNED.move_to_end((key, generation))
                return pinned[0]
            if current is not None:
                log.warning("citewise: KB generation %d pinned by a run is no longer loaded; the run continues "
                            "with generation %d", generation, current.generation)
        lock = _LOCKS.setdefault(key, threading.Lock())
        follower = _FOLLOWERS.get(key)
    if current is not None and follower is not None:
        served = follower.serve(current)  # a replica never waits for a rebuild: it answers from what it has
        if served is not None:
            return served
    with lock:
        with _CACHE_LOCK:
            kb = _CURRENT.get(key)
        if kb is not None and kb.directory.name == _link_target(key[0]):
            return kb  # still the snapshot writers last swapped in (sound, maybe behind the store: see load)
        fresh = KnowledgeBase.load(*key)
        _install(key, fresh)
    _follow(key, fresh.store)
    return fresh


def _install(key: _Key, fresh: KnowledgeBase) -> None:
    """Make `fresh` the current snapshot of `key`; the one it replaces stays for runs that pinned it."""
    with _CACHE_LOCK:
        old = _CURRENT.get(key)
        if old is not None and old.generation != fresh.generation:
            _PINNED[(key, old.generation)] = (old, time.monotonic())
        _CURRENT[key] = fresh
        _PINNED.pop((key, fresh.generation), None)
        _evict_old()


def _link_target(home: Path) -> str | None:
    try:
        return os.readlink(home / INDEX_LINK)
    except OSError:
        return None


def _evict_old() -> None:
    now = time.monotonic()
    for k in [k for k, (_, used) in _PINNED.items() if now - used > OLD_SNAPSHOT_SECONDS]:
        del _PINNED[k]
    idle = [k for k, (_, used) in _PINNED.items() if now - used > PIN_GRACE_SECONDS]
    for k in idle[:max(0, len(_PINNED) - KEEP_PINNED)]:
        del _PINNED[k]
    while len(_PINNED) > MAX_PINNED:
        _PINNED.popitem(last=False)


def _follow(key: _Key, store: Store) -> None:
    """Start following a shared store's generation (once per key; SQLite stores decline)."""
    with _CACHE_LOCK:
        if key in _FOLLOWERS or store.kind == "sqlite":
            return
        follower = _FOLLOWERS[key] = _Follower(key)
    if not store.watch(follower.poke):
        with _CACHE_LOCK:
            _FOLLOWERS.pop(key, None)


class _Follower:
    """Keeps a replica's snapshot of a shared store current, in a background thread.

    `poke(generation)` comes from the store's listener; the refresher waits for a short quiet spell
    (an ingest commits document by document), builds the snapshot of the store's generation under
    the home's build lock, loads it and swaps it in. Questions meanwhile get the loaded snapshot.
    """

    def __init__(self, key: _Key):
        self.key = key
        self.wanted = -1  # the newest generation heard of
        self.refreshes = 0
        self.last_seconds = 0.0
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._last_poke = 0.0
        self._down_until = 0.0  # while the database is unreachable, questions skip the generation check

    def poke(self, generation: int) -> None:
        with self._changed:
            if generation > self.wanted:  # only news restarts the quiet spell (questions re-poke while stale)
                self.wanted = generation
                self._last_poke = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="citewise-snapshot-refresh", daemon=True)
                self._thread.start()
            self._changed.notify()

    def serve(self, current: KnowledgeBase) -> KnowledgeBase | None:
        """The snapshot to answer from without waiting, or None when loading one is quick (or needed)."""
        if time.monotonic() < self._down_until:
            return current
        try:
            latest = current.store.generation()
        except StoreError as exc:  # the database is unreachable: keep answering from what we have
            self._down_until = time.monotonic() + DB_RETRY_SECONDS  # and do not make every question wait on it
            log.warning("citewise: %s; answering from KB generation %d", exc, current.generation)
            return current
        if latest == current.generation:
            return current
        if is_current(self.key[0], latest, current.store.store_id()):
            return None  # already built on disk (e.g. by an ingest in this home): load it now
        self.poke(latest)
        return current

    def _run(self) -> None:
        handled, backoff = -1, 1.0
        while True:
            with self._changed:
                while self.wanted <= handled:
                    self._changed.wait()
                first = time.monotonic()
                while True:  # let a burst of commits settle, within bounds
                    quiet = time.monotonic() - self._last_poke
                    if quiet >= REFRESH_QUIET_SECONDS or time.monotonic() - first >= REFRESH_MAX_WAIT_SECONDS:
                        break
                    self._changed.wait(REFRESH_QUIET_SECONDS - quiet)
                target = self.wanted
            try:
                self.refresh()
            except Exception as exc:  # keep serving the old snapshot, and retry with backoff
                log.warning("citewise: refreshing the KB snapshot failed (retry in %.0f s): %s", backoff, exc)
                time.sleep(backoff)
                backoff = min(backoff * 2, 60.0)
                continue
            handled, backoff = target, 1.0

    def _loaded_generation(self) -> int:
        with _CACHE_LOCK:
            kb = _CURRENT.get(self.key)
        return kb.generation if kb is not None else -1

    def refresh(self) -> None:
        """Build (if this home has no snapshot of the store's generation yet) and swap in the newest snapshot."""
        started = time.perf_counter()
        home, vector_store, model, base_url, url = self.key
        store = open_store(home, url)
        embedder = get_embedder(model, base_url)
        generation, sid = store.generation(), store.store_id()
        if store.count()[0] == 0:  # everything was deleted: answering from the old snapshot would be wrong
            with _CACHE_LOCK:
                _CURRENT.pop(self.key, None)
            return
        built = False
        status = check_snapshot(home, generation, store_id=sid)  # verified: a damaged one is replaced too
        if status.state != "current":
            with build_lock(home):
                status = check_snapshot(home, store.generation(), store_id=sid)
                if status.state != "current":
                    if status.state in ("damaged", "outdated"):
                        log.warning("citewise: the index of %s is %s (%s): rebuilding it from the store", home,
                                    status.state, status.detail)
                    build_indexes(store, embedder, vector_store=vector_store, sync_remote=False)
                    built = True
                    status = check_snapshot(home, store.generation(), store_id=sid)
        if status.usable and (status.generation or 0) > self._loaded_generation():
            with _LOCKS.setdefault(self.key, threading.Lock()):
                _install(self.key, KnowledgeBase.open(home, store, embedder, vector_store, directory=status.directory))
        elif not built:
            return  # nothing to do: a question (or another process) got there first
        self.refreshes += 1
        self.last_seconds = round(time.perf_counter() - started, 3)


def follower_stats(home: Path) -> list[dict[str, Any]]:
    """How often this process refreshed its snapshots of a home, and how long the last refresh took."""
    home = Path(home).resolve()
    with _CACHE_LOCK:
        return [{"generation_heard": f.wanted, "refreshes": f.refreshes, "last_seconds": f.last_seconds}
                for k, f in _FOLLOWERS.items() if k[0] == home]


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
    `missing`, `outdated` (another format or analyser, or built from another store) and `damaged` are
    rebuilt before use."""

    state: str
    detail: str = ""
    generation: int | None = None
    directory: Path | None = None
    manifest: dict[str, Any] | None = None

    @property
    def usable(self) -> bool:
        return self.state in ("current", "stale")


def check_snapshot(home: Path, store_generation: int | None = None, *, store_id: str | None = None,
                   verify: bool = True) -> SnapshotStatus:
    """The state of the snapshot `index` points at, against the store's generation (and id) when given.

    A snapshot of another store (a database re-created, or a replica home pointed at another database)
    is `outdated`, however its generation compares: its rows are not this store's."""
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
    if store_id is not None and manifest.get("store_id", "") != store_id:
        return SnapshotStatus("outdated", f"built from another store (id {manifest.get('store_id') or 'unknown'!r}, "
                              f"this one is {store_id!r})", generation, directory, manifest)
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
    sid = store.store_id()
    try:
        with build_lock(home):
            again = check_snapshot(home, store.generation(), store_id=sid)
            if again.usable:
                return again
            build_indexes(store, embedder, vector_store=vector_store)
    except OSError as exc:
        raise StoreError(f"the index of {home} is {status.state} ({status.detail}) and this process cannot rebuild "
                         f"it ({exc.strerror or exc}): run `citewise doctor --repair --home {home}` as a user who "
                         "can write the home") from None
    healed = check_snapshot(home, store.generation(), store_id=sid)
    log.warning("citewise: the index of %s was rebuilt (generation %s)", home, healed.generation)
    return healed


_STALE_NOTED: set[tuple[Path, str]] = set()


def note_stale(home: Path, status: SnapshotStatus, kind: str = "sqlite") -> None:
    """Say once per snapshot that answers come from a sound but older generation, and what completes it."""
    key = (Path(home).resolve(), status.directory.name if status.directory else "")
    if key in _STALE_NOTED:
        return
    _STALE_NOTED.add(key)
    if kind != "sqlite":  # a replica of a shared store: its refresher builds the newest snapshot
        log.warning("citewise: answering from the index of %s %s while this replica builds the newest one in the "
                    "background", home, status.detail)
    else:
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
def is_current(home: Path, generation: int, store_id: str | None = None) -> bool:
    """The manifest says the snapshot is of this generation and format (and, given `store_id`, of this
    store); files not verified: see check_snapshot."""
    return check_snapshot(home, generation, store_id=store_id, verify=False).state == "current"


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
                  full_sync: bool = False, sync_remote: bool = True) -> dict[str, Any]:
    """Build a snapshot of the store's current generation in a new directory and swap it in.

    With vector_store="pinecone" the vectors are also synced to the Pinecone namespace of this
    knowledge base, unless `sync_remote` is off (a replica following a shared store: the process
    that ingested syncs, the others only read).
    """
    embedder = embedder or get_embedder()
    started = time.perf_counter()
    with store.reading():  # one consistent view: generation, documents, chunks and synonyms agree
        generation = store.generation()
        store_id = store.store_id()
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
        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        embed_started = time.perf_counter()
        vectors = reuse_vectors(home, embedder, texts, keys, progress)
        embedding_seconds = time.perf_counter() - embed_started
        (tmp / TEXT_KEYS).write_text(json.dumps(keys))
        ExactIndex(vectors).save(tmp)
        if len(chunk_ids) >= ANN_MIN_ROWS:  # exact search stops meeting latency targets around here
            IVFIndex.build(vectors).save(tmp)
        MetadataIndex(metadata).save(str(tmp / "metadata.npz"))
        PassageTable.write(tmp, [{"chunk_id": r["chunk_id"], "doc_id": r["doc_id"], "title": r["title"],
                                  "section": r["section"], "chunk_type": r["chunk_type"], "tier": r["tier"],
                                  "text": r["text"], "ordinal": r["ordinal"], "tokens": r["tokens"],
                                  "metadata": md, "position": json.loads(r.get("position") or "{}")}
                                 for r, md in zip(rows, metadata, strict=True)])
        docs = [{**d, "first_row": spans.get(d["doc_id"], [0, 0])[0], "rows": spans.get(d["doc_id"], [0, 0])[1]}
                for d in documents]
        (tmp / "documents.json").write_text(json.dumps(docs))
        tags = [d.get("metadata", {}).get("tags") or [] for d in documents]
        (tmp / "synonyms.json").write_text(json.dumps(with_kb_acronyms(synonyms, (r["text"] for r in rows), tags)))
        if vector_store == "pinecone" and sync_remote:
            from .pinecone import PineconeVectorIndex

            remote = PineconeVectorIndex.from_env(home, chunk_ids, embedder.model_id, shared_id=_shared_id(store))
            remote.sync(chunk_ids, vectors, metadata, home / f"pinecone-{remote.namespace}.json", full=full_sync)
        (tmp / "rows.json").write_text(json.dumps({"chunk_ids": chunk_ids, "doc_ids": doc_ids}))
        manifest = {"format": FORMAT, "generation": generation, "store_id": store_id, "store": store.kind,
                    "embedding_model": embedder.model_id,
                    "analyzer": ANALYZER_ID, "chunks": len(chunk_ids), "documents": len(documents),
                    "built_at": time.time(), "seconds": round(time.perf_counter() - started, 3),
                    "embedding_seconds": round(embedding_seconds, 3),
                    "row_order": row_digest(chunk_ids, doc_ids),
                    "files": {rel: file_digest(tmp / rel) for rel in index_files(tmp)}}
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


EMBED_SLICE = 128  # chunks per embedding call: a progress update every few seconds even on a busy CPU


def embed_in_slices(embedder: Embedder, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Vectors of `texts`, embedded a slice at a time so `progress` counts chunks, the unit its total is
    in (embedders report their own units, e.g. MiniLM windows, which would overflow a chunk total).

    Texts go longest first: each slice then holds texts of similar length (little padding in a model
    batch), and the ETA starts pessimistic and improves instead of promising too much early on.
    """
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    parts = []
    for start in range(0, len(order), EMBED_SLICE):
        part = order[start:start + EMBED_SLICE]
        parts.append(np.asarray(embedder.embed_documents([texts[i] for i in part]), dtype=np.float32))
        if progress is not None:
            progress(len(part))
    stacked = np.concatenate(parts)  # the width is known only now (a remote model reports it on first use)
    vectors = np.empty_like(stacked)
    vectors[order] = stacked
    return vectors


def reuse_vectors(home: Path, embedder: Embedder, texts: list[str], keys: list[str],
                  progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Vectors for `texts`, taken from the home's current snapshot where the text is unchanged (only when
    that snapshot is sound: its text keys and vectors match their checksums).

    What makes a refresh incremental: a row whose text the previous build already embedded (same
    model) is copied, so only new or changed text goes through windowing and the embedding cache
    (`embed_in_slices`: progress counts chunks, reused ones included).
    """
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    previous: dict[str, int] = {}
    old: np.ndarray | None = None
    status = check_snapshot(home)  # every file against its checksum: a damaged snapshot lends no vectors
    manifest, directory = status.manifest, status.directory
    if (status.usable and manifest and directory is not None and manifest.get("embedding_model") == embedder.model_id
            and (directory / TEXT_KEYS).is_file()):
        try:
            old_keys = json.loads((directory / TEXT_KEYS).read_text())
            old = np.load(directory / VECTORS_FILE, mmap_mode="r")
            if len(old_keys) == len(old):
                previous = {k: i for i, k in enumerate(old_keys)}
        except (OSError, ValueError):
            previous, old = {}, None
    if old is None or not previous:
        return embed_in_slices(embedder, texts, progress)
    todo = [i for i, k in enumerate(keys) if k not in previous]
    vectors = np.empty((len(texts), old.shape[1]), dtype=np.float32)
    reused = [i for i, k in enumerate(keys) if k in previous]
    if reused:
        vectors[reused] = old[[previous[keys[i]] for i in reused]]
        if progress is not None:
            progress(len(reused))
    if todo:
        vectors[todo] = embed_in_slices(embedder, [texts[i] for i in todo], progress)
    return vectors


def _shared_id(store: Store) -> str:
    """The Pinecone namespace key of a shared store (every replica's home differs; the KB does not)."""
    return "" if store.kind == "sqlite" else store.store_id()


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
