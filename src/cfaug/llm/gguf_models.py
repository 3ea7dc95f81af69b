"""GGUF language models by name or path, as the LLM layer runs them: ``--llm-model NAME`` names a packaged model
(:data:`PACKAGED`), ``--llm-model PATH.gguf`` any file. The catalogue itself is :mod:`cfaug.packaged_models`
(a part, so judges can read the same files); here its resolution raises :class:`~cfaug.llm.errors.LLMConfigError`,
and :func:`runtime_installed` says whether llama.cpp can run them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

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


__all__ = ["PACKAGED", "SUFFIX", "PackagedModel", "gguf_store", "looks_like_gguf", "resolve_gguf", "runtime_installed"]
