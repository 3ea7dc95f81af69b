"""Small parsing helpers shared by subcommands, and reading a ``--config`` file.

A config file (YAML or JSON) holds a command's options under their names, with ``_`` for ``-``
(``text_col: review``), and method parameters under ``params``. A key the command does not read is refused,
naming the nearest known one (a misspelt key would otherwise be ignored without a word), and so is a key
that would hold a secret (an API key, a token, a password), at any depth and without showing its value."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

#: Names of keys that would hold a secret (``api_key``, ``apiKey``, ``hf_token``, ``password``...), matched
#: after camelCase and ``-`` are turned into ``_``; ``llm_api_key_env`` names a variable and is not one.
SECRET_KEY = re.compile(r"(?:^|_)(?:api_?key|key|token|secret|password|passwd|pwd|passphrase|credentials?)$")


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


def seed_value(text: str) -> int:
    """The value of a seed flag (an ``argparse`` type): an integer from 0 to
    :data:`~cfaug.run.options.MAX_SEED`, what the random generators a run seeds accept."""
    import argparse

    from cfaug.quoting import quote
    from cfaug.run.options import MAX_SEED

    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects an integer from 0 to {MAX_SEED}, got {quote(text)}") from None
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{seed} is not a seed: a seed is an integer from 0 to {MAX_SEED}")
    return seed


def load_config_file(path: str, known: Collection[str] | None = None) -> dict[str, Any]:
    """Read a YAML or JSON config; keys are option names with '_' for '-' (e.g. ``text_col``).

    Raises :class:`~cfaug.cli.CliError` when the file cannot be read, when a key at any depth would hold a
    secret (:data:`SECRET_KEY`; the value is never shown), when ``params`` is not a mapping, and, given the
    command's ``known`` keys, when a top-level key is not one of them (naming the nearest known one)."""
    from cfaug.cli import CliError
    from cfaug.config import ConfigFileError, nearest_name, read_mapping

    try:
        data = read_mapping(path)
    except ConfigFileError as exc:
        raise CliError(f"config file {exc}") from exc
    for where in secret_keys(data):
        raise CliError(f"config file {path}: {_shown(where)}: do not put API keys in config files, nor tokens, "
                       "secrets or passwords (the value is not shown): keep a key in an environment variable; "
                       "for the LLM's key, name that variable with llm_api_key_env (default OPENAI_API_KEY)")
    config = {str(k).replace("-", "_"): v for k, v in data.items()}
    if known is not None:
        for key in config:
            if key in known:
                continue
            near = nearest_name(key, known)
            hint = f"did you mean {_shown(near)!r}?" if near else f"known keys: {', '.join(sorted(known))}"
            raise CliError(f"config file {path}: unknown key {_shown(key)!r} ({hint}); a config file holds the "
                           "command's options under their names (with _ for -) and method parameters under params")
    if config.get("params") is not None and not isinstance(config["params"], Mapping):
        raise CliError(f"config file {path}: params takes a mapping of method parameters (params: {{NAME: VALUE, "
                       "...}}), not a single value")
    return config


def secret_keys(data: Any, where: str = "") -> Iterator[str]:
    """Where ``data`` (a config file's content) has a key that would hold a secret (:data:`SECRET_KEY`), at
    any depth of mappings and lists: ``llm.api_key``, ``params.sources[0].token``."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            at = f"{where}.{key}" if where else str(key)
            if is_secret_key(str(key)):
                yield at
            else:
                yield from secret_keys(value, at)
    elif isinstance(data, (list, tuple)):
        for n, value in enumerate(data):
            yield from secret_keys(value, f"{where}[{n}]")


def is_secret_key(name: str) -> bool:
    """Whether a config key named ``name`` would hold a secret: ``api_key``, ``apiKey``, ``OPENAI-API-KEY``,
    ``hf_token``, ``password``; not ``api_key_env`` or ``max_tokens``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    return bool(SECRET_KEY.search(re.sub(r"[\s.-]+", "_", snake).lower()))


def run_config_keys(*extra: str, without: Iterable[str] = ()) -> frozenset[str]:
    """The keys a ``--config`` file may hold for a command that reads the run options and the LLM options:
    every run option (:class:`~cfaug.run.options.RunOptions`), every LLM option
    (:data:`~cfaug.cli.llm_options.OPTION_KEYS`) and ``extra``, less ``without``."""
    from cfaug.cli.llm_options import OPTION_KEYS
    from cfaug.run.options import RunOptions

    keys = {f.name for f in dataclasses.fields(RunOptions)} | {option for option, _ in OPTION_KEYS} | set(extra)
    return frozenset(keys - set(without))


def _shown(name: str) -> str:
    """A key's name for a message: cut short, key-shaped words masked."""
    from cfaug.llm.redact import mask_keys
    from cfaug.quoting import shorten

    return shorten(mask_keys(str(name)), 80)
