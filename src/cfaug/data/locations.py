"""Where cfaug keeps files between runs: one rule for every user cache folder (the model store, sentence
embeddings, the importance ensemble's votes)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir(env_var: str, name: str) -> Path:
    """``$ENV_VAR`` if set, else ``~/.cache/cfaug/<name>`` (honouring ``$XDG_CACHE_HOME``)."""
    if os.environ.get(env_var):
        return Path(os.environ[env_var]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cfaug" / name


__all__ = ["user_cache_dir"]
