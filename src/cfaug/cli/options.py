"""Small parsing helpers shared by subcommands."""

from __future__ import annotations

from typing import Any


def parse_params(pairs: list[str]) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}`` (values are converted by the method config)."""
    from cfaug.cli import CliError
    from cfaug.quoting import quote

    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            raise CliError(f"--param expects KEY=VALUE, got {quote(p)}")
        k, v = p.split("=", 1)
        out[k.strip().replace("-", "_")] = v
    return out


def load_config_file(path: str) -> dict[str, Any]:
    """Read a YAML or JSON config; keys are option names with '_' for '-' (e.g. ``text_col``)."""
    from cfaug.cli import CliError
    from cfaug.config import ConfigFileError, read_mapping

    try:
        data = read_mapping(path)
    except ConfigFileError as exc:
        raise CliError(f"config file {exc}") from exc
    return {str(k).replace("-", "_"): v for k, v in data.items()}
