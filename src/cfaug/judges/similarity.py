"""Closeness of a rewrite to its original: sentence-embedding cosine and token edit rate."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cfaug.data.locations import user_cache_dir
from cfaug.device import resolve_device
from cfaug.local_models import default_encoder_path, quiet_transformers, resolve_local_model


class SentenceEncoder:
    """A sentence-transformers encoder loaded from a local path (default: the packaged
    all-MiniLM-L6-v2). Embeddings are L2-normalised; texts longer than the model's window
    (256 word pieces for MiniLM) are truncated. Results are memoised per text within the process.
    ``precision``: ``float32`` (default), ``bfloat16`` or ``auto``, as for
    :class:`~cfaug.judges.token_embeddings.TokenEncoder`."""

    MEMO_LIMIT = 200_000  #: embeddings kept in memory (about 300 MB for a 384-dimensional encoder)

    def __init__(self, path: str | os.PathLike[str] | None = None, device: str | None = None,
                 batch_size: int = 64, precision: str | None = "float32") -> None:
        from sentence_transformers import SentenceTransformer

        from cfaug.device import resolve_precision

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.path = Path(path) if path else default_encoder_path()
        resolve_local_model(self.path, "sentence encoder")
        self.device = resolve_device(device)
        self.batch_size = batch_size
        quiet_transformers()
        self.model = SentenceTransformer(str(self.path), device=self.device)
        self.precision = resolve_precision(precision, self.device)
        if self.precision != "float32":
            import torch

            self.model.to(getattr(torch, self.precision))
        self._memo: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:
        return f"sentence-embedding:{self.path.name}"

    def describe(self) -> dict[str, str]:
        return {"encoder": str(self.path), "max_seq_length": str(self.model.max_seq_length),
                "weights_sha256": _weights_hash(self.path), "precision": self.precision}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing and len(self._memo) + len(missing) > self.MEMO_LIMIT:
            self._memo = {t: self._memo[t] for t in texts if t in self._memo}  # bound memory on long runs
        if missing:
            vecs = self.model.encode(missing, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
            vecs = np.asarray(vecs, dtype=np.float32)
            if self.precision != "float32":  # a bfloat16 model normalises in bfloat16: norms off by ~1e-3
                vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            for t, v in zip(missing, vecs):
                self._memo[t] = v
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])

    def known(self, text: str) -> bool:
        """Whether ``text``'s embedding is memoised (so :meth:`encode` will not run the model for it)."""
        return text in self._memo

    def remember(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Memoise embeddings computed elsewhere from this encoder's own transformer and pooling (e.g. by a
        token encoder's forward pass over the same word pieces); rows are L2-normalised here."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        for t, v in zip(texts, vectors / np.maximum(norms, 1e-12)):
            self._memo[t] = v.astype(np.float32, copy=False)

    def encode_persistent(self, texts: Sequence[str], cache_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
        """Like :meth:`encode`, for a fixed list such as a lexicon: the matrix is stored on disk, keyed by
        the encoder's weights and the list, so later runs load it instead of encoding again (see
        :func:`stored_embeddings`, which also finds the matrices shipped with cfaug)."""
        texts = list(texts)
        mat = stored_embeddings(texts, self.path, cache_dir)
        if mat is not None:
            for t, v in zip(texts, mat):
                self._memo.setdefault(t, v)
            return mat
        mat = self.encode(texts)
        folder = Path(cache_dir) if cache_dir else embedding_cache_dir()
        key = _persistent_key(texts, self.path)
        path = folder / f"{key}.npy"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f"{key}.{os.getpid()}.tmp.npy"
            np.save(tmp, mat)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache folder only costs speed
        return mat

    @property
    def dimension(self) -> int:
        if "" not in self._memo:
            self.encode([""])
        return int(self._memo[""].shape[-1])

    def cosine(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Row-wise cosine similarity of ``a[i]`` and ``b[i]``."""
        if len(a) != len(b):
            raise ValueError("cosine needs two lists of the same length")
        ea, eb = self.encode(a), self.encode(b)
        return np.sum(ea * eb, axis=1)


def embedding_cache_dir() -> Path:
    """``$CFAUG_EMBEDDING_CACHE`` if set, else ``~/.cache/cfaug/embeddings`` (honouring ``$XDG_CACHE_HOME``)."""
    return user_cache_dir("CFAUG_EMBEDDING_CACHE", "embeddings")


def shipped_embedding_dir() -> Path:
    """Matrices of :meth:`SentenceEncoder.encode_persistent` that ship with cfaug, named by the same key as the
    user cache (the opinion lexicon under the packaged MiniLM, made by ``tools/lexicon_vectors.py``): a first
    run on a new machine loads them instead of running the encoder over thousands of words."""
    from importlib import resources

    return Path(str(resources.files("cfaug.resources") / "embeddings"))


def _persistent_key(texts: Sequence[str], encoder_path: Path) -> str:
    return hashlib.sha256(("\n".join(texts) + "\0" + _weights_hash(encoder_path)).encode()).hexdigest()[:24]


def stored_embeddings(texts: Sequence[str], encoder_path: str | os.PathLike[str] | None = None,
                      cache_dir: str | os.PathLike[str] | None = None) -> np.ndarray | None:
    """The matrix :meth:`SentenceEncoder.encode_persistent` gives for ``texts`` under the encoder at
    ``encoder_path`` (default: the packaged all-MiniLM-L6-v2), read from the cache folder (``cache_dir``,
    default :func:`embedding_cache_dir`) or from the copies shipped with cfaug, without loading the model
    (or importing sentence-transformers); None when neither holds it, or when ``encoder_path`` is not a
    model folder (loading the encoder then says why)."""
    path = Path(encoder_path).expanduser() if encoder_path else default_encoder_path()
    if not path.is_dir():
        return None
    texts = list(texts)
    name = f"{_persistent_key(texts, path)}.npy"
    for folder in (Path(cache_dir) if cache_dir else embedding_cache_dir(), shipped_embedding_dir()):
        f = folder / name
        if f.exists():
            try:
                mat = np.load(f)
            except (OSError, ValueError):
                continue  # unreadable cache file: encode again (and overwrite it)
            if mat.shape[0] == len(texts):
                return mat
    return None


@functools.lru_cache(maxsize=8)
def _weights_hash(path: Path) -> str:
    for name in ("model.safetensors", "pytorch_model.bin"):
        f = path / name
        if f.exists():
            h = hashlib.sha256()
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            return h.hexdigest()[:16]
    return "unknown"
