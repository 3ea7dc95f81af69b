"""Small parsing helpers shared by subcommands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}`` (values are converted by the method config)."""
    from cfaug.cli import CliError

    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            raise CliError(f"--param expects KEY=VALUE, got {p!r}")
        k, v = p.split("=", 1)
        out[k.strip().replace("-", "_")] = v
    return out


def load_config_file(path: str) -> dict[str, Any]:
    """Read a YAML or JSON config; keys are option names with '_' for '-' (e.g. ``text_col``)."""
    from cfaug.cli import CliError

    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: config file not found")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001
        raise CliError(f"{path}: cannot parse config: {exc}") from exc
    if not isinstance(data, dict):
        raise CliError(f"{path}: config must be a mapping of option names to values")
    return {str(k).replace("-", "_"): v for k, v in data.items()}
