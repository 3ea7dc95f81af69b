"""Reading YAML or JSON files that hold a mapping (run configs, price tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class ConfigFileError(ValueError):
    """The file is missing, unparseable, or does not hold a mapping."""


def read_mapping(path: str | Path) -> dict[str, Any]:
    """The mapping stored in ``path``: JSON for ``.json``, YAML otherwise."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ConfigFileError(f"{path}: file not found")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - json and yaml raise many kinds
        raise ConfigFileError(f"{path}: cannot parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path}: expected a mapping of names to values")
    return data
