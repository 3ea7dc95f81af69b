"""GGUF language models by name or path, as the LLM layer runs them: ``--llm-model NAME`` names a packaged model
(:data:`PACKAGED`), ``--llm-model PATH.gguf`` any file. The catalogue itself is :mod:`cfaug.packaged_models`
(a part, so judges can read the same files); here its resolution raises :class:`~cfaug.llm.errors.LLMConfigError`,
and :func:`runtime_installed` says whether llama.cpp can run them.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from cfaug.llm.errors import LLMConfigError
from cfaug.packaged_models import PACKAGED, SUFFIX, ModelFileError, PackagedModel, gguf_store, looks_like_gguf
from cfaug.packaged_models import resolve_gguf as _resolve_gguf


def runtime_installed() -> bool:
    """Whether llama.cpp can run GGUF models here (``xllamacpp``, the ``local-llm`` extra)."""
    return importlib.util.find_spec("xllamacpp") is not None


def resolve_gguf(model: str) -> Path:
    """The model file ``model`` names (a packaged name or a ``.gguf`` path); :class:`LLMConfigError` saying
    what to install or which file is missing."""
    try:
        return _resolve_gguf(model)
    except ModelFileError as exc:
        raise LLMConfigError(str(exc)) from None


#: a GGUF file at most this large is a small model (under about a billion parameters at 4 bits)
SMALL_MODEL_BYTES = 700 * 2 ** 20


def runs_here(model: str | None, base_url: Any = None) -> bool:
    """Whether ``model`` names a GGUF model run here by llama.cpp (a packaged name or a ``.gguf`` path, and no
    server ``base_url``)."""
    return bool(model) and not base_url and looks_like_gguf(str(model))


def small_local_model(model: str | None, base_url: Any = None) -> bool:
    """Whether ``model`` is a small language model run here: a GGUF model (a packaged name or a ``.gguf``
    path, not served at ``base_url``) whose file holds at most :data:`SMALL_MODEL_BYTES` (its header's
    parameter count where it gives one). A packaged name and its file answer alike; a file that cannot be
    read is not small (its run will say why)."""
    if not runs_here(model, base_url):
        return False
    try:
        path = _resolve_gguf(str(model))
        st = path.stat()
    except (ModelFileError, OSError):
        return False
    return _small_file(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _small_file(path: str, size: int, mtime_ns: int) -> bool:
    """Whether the GGUF file at ``path`` (of ``size`` bytes, modified at ``mtime_ns``: a changed file is read
    again) is a readable model of at most :data:`SMALL_MODEL_BYTES`."""
    from cfaug.llm.gguf import GGUFError, read_metadata

    try:
        info = read_metadata(path)
    except (GGUFError, OSError):
        return False
    return info.size <= SMALL_MODEL_BYTES


__all__ = ["PACKAGED", "SMALL_MODEL_BYTES", "SUFFIX", "PackagedModel", "gguf_store", "looks_like_gguf", "resolve_gguf",
           "runs_here", "runtime_installed", "small_local_model"]
