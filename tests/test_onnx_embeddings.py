"""The onnxruntime MiniLM backend: same vectors and windows as sentence-transformers, and no torch on the query path.

Parity matters because both backends share model ids, cached window vectors and existing indexes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from citewise.retrieval import onnx_minilm
from citewise.retrieval.embeddings import MiniLMEmbedder, VectorCache
from tests.paths import ROOT, SAMPLE_KB

SCIFACT = Path(os.environ.get("CITEWISE_SCIFACT_DIR") or ROOT.parent / "shared" / "data" / "scifact")
N_TEXTS = 1000
N_LONG = 32  # texts longer than one 254-piece window


def parity_texts() -> list[str]:
    """1,000 texts: SciFact titles plus abstracts longer than one window (the sample KB if SciFact is absent).

    Mostly short texts keep the torch side of the comparison inside ~30 s on two cores, while the
    long ones exercise windowing, truncation at 256 pieces and padding inside mixed-length batches.
    """
    tok = onnx_minilm.raw_tokenizer(onnx_minilm.model_dir() / "tokenizer.json")

    def n_pieces(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    if (SCIFACT / "corpus.jsonl").is_file():
        with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
            recs = [json.loads(line) for line in fh if line.strip()]
        long = list(islice((r["text"] for r in recs if n_pieces(r["text"]) > 254), N_LONG))
        short = [r["title"] for r in recs if r.get("title")][:N_TEXTS - len(long)]
        return short + long
    paras = [p.strip() for f in sorted(SAMPLE_KB.rglob("*.md")) for p in f.read_text(encoding="utf-8").split("\n\n")
             if len(p.strip()) > 20]
    long = [" ".join(paras[i:i + 12]) for i in range(0, len(paras), 12)]
    long = [t for t in long if n_pieces(t) > 254][:N_LONG]
    short = [f"{p[:200]} ({i})" for i, p in enumerate(paras * (N_TEXTS // max(len(paras), 1) + 1))]
    return short[:N_TEXTS - len(long)] + long


@pytest.fixture(scope="module")
def texts() -> list[str]:
    out = parity_texts()
    assert len(out) == N_TEXTS
    return out


@pytest.fixture(scope="module")
def vectors(texts: list[str], tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, np.ndarray]:
    tmp = tmp_path_factory.mktemp("onnx-parity")
    # Separate window caches: a shared one would hand the second backend the first one's vectors.
    onnx = MiniLMEmbedder(backend="onnx", cache=VectorCache(tmp / "onnx.sqlite"))
    torch_ = MiniLMEmbedder(backend="torch", cache=VectorCache(tmp / "torch.sqlite"))
    assert onnx.backend == "onnx" and torch_.backend == "torch"
    return onnx.embed_documents(texts), torch_.embed_documents(texts)


def test_onnx_vectors_match_torch_on_1000_texts(texts: list[str], vectors: tuple[np.ndarray, np.ndarray],
                                                record_property) -> None:
    onnx, torch_ = vectors
    assert onnx.shape == torch_.shape == (N_TEXTS, 384)
    cos = (onnx * torch_).sum(axis=1)
    long = np.array([len(MiniLMEmbedder().windows(t)) > 1 for t in texts])
    assert long.sum() >= 20  # windowed texts are part of the comparison
    record_property("report:onnx vs torch cosine (1000 texts)",
                    f"min {cos.min():.7f}, mean {cos.mean():.7f}, min over windowed {cos[long].min():.7f}")
    assert cos.min() >= 0.999
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)


def test_windows_match_the_transformers_tokenizer(texts: list[str]) -> None:
    """Window texts key the on-disk window cache: the `tokenizers` path must cut exactly as before."""
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(onnx_minilm.model_dir()), local_files_only=True)
    emb = MiniLMEmbedder()
    for text in [*texts, "[CLS] literal special tokens [SEP] survive " * 60]:
        ids = hf(text, add_special_tokens=False, truncation=False)["input_ids"]
        expected = [text] if len(ids) <= emb.window else [
            hf.decode(ids[s:s + emb.window]) for s in range(0, len(ids), emb.stride)
            if s == 0 or s - emb.stride + emb.window < len(ids)]
        assert emb.windows(text) == expected


def test_query_path_does_not_import_torch(tmp_path: Path) -> None:
    onnx_minilm.ensure_exported()  # the cached export a query process finds
    code = ("import sys\nfrom citewise.retrieval.embeddings import get_embedder\n"
            "emb = get_embedder('minilm')\nv = emb.embed_query('How do I roll over my 401(k)?')\n"
            "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
            "print(emb.backend, v.shape[0], round(float(v @ v), 4), heavy)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("CITEWISE_EMBEDDINGS_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120, check=True).stdout.strip()
    assert out == "onnx 384 1.0 []"


def test_export_file_is_keyed_by_weights_and_package_version(tmp_path: Path) -> None:
    real = onnx_minilm.export_path()
    assert onnx_minilm.package_version() in real.name and f"-r{onnx_minilm.EXPORT_REVISION}." in real.name
    other = tmp_path / "model"
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"different weights")
    first = onnx_minilm.export_path(other)
    (other / "model.safetensors").write_bytes(b"other weights, once more")  # a replaced file is re-hashed
    assert len({first, onnx_minilm.export_path(other), real}) == 3


def test_auto_falls_back_to_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_minilm, "available", lambda: False)
    assert MiniLMEmbedder(backend="auto").backend == "torch"
    monkeypatch.setattr(onnx_minilm, "available", lambda: True)

    def broken(*_a, **_k):
        raise ImportError("No module named 'onnx'")

    monkeypatch.setattr(onnx_minilm, "load", broken)
    with pytest.warns(RuntimeWarning, match="sentence-transformers"):
        assert MiniLMEmbedder(backend="auto").backend == "torch"
    with pytest.raises(ImportError):
        _ = MiniLMEmbedder(backend="onnx").backend
    monkeypatch.setenv("CITEWISE_EMBEDDINGS_BACKEND", "torch")
    assert MiniLMEmbedder().backend == "torch"
