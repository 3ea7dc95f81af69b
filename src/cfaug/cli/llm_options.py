"""The ``--llm-*`` options of ``cfaug augment`` and how they become the ``llm`` method parameter.

Every option can also be set in the ``--config`` file under its option name (``llm_base_url``,
``llm_model``, ``concurrency``, ``max_budget``...); flags win over the file, the file's top-level options
win over its ``params: {llm: {...}}`` mapping. The API key is never an option: its environment variable
is named by ``--llm-api-key-env`` (default ``OPENAI_API_KEY``) and read when the client starts.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from cfaug.llm.settings import DEFAULT_BATCH_SIZE, DEFAULT_KEY_ENV, DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT

#: (option name in args/config file, key in the ``llm`` settings mapping)
OPTION_KEYS: tuple[tuple[str, str], ...] = (
    ("llm_backend", "backend"),
    ("llm_base_url", "base_url"),
    ("llm_model", "model"),
    ("llm_api", "api"),
    ("llm_api_key_env", "api_key_env"),
    ("llm_device", "device"),
    ("llm_batch_size", "batch_size"),
    ("cache_dir", "cache_dir"),
    ("no_cache", "cache"),
    ("refresh", "refresh"),
    ("max_budget", "max_budget"),
    ("price_table", "price_table"),
    ("rpm", "rpm"),
    ("tpm", "tpm"),
    ("request_timeout", "request_timeout"),
    ("max_retries", "max_retries"),
)


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the LLM option group to ``parser`` (every default is None, so a config file can fill it)."""
    g = parser.add_argument_group(
        "LLM (methods that call a language model, e.g. zero-shot)",
        "The API key is read from the environment variable named by --llm-api-key-env.")
    g.add_argument("--llm-backend", default=None,
                   help="openai (any OpenAI-compatible server), transformers (local model folder) or vllm "
                        "(default: openai when a base URL is given, transformers when --llm-model is a folder)")
    g.add_argument("--llm-base-url", action="append", default=None, metavar="URL",
                   help="server URL, e.g. http://localhost:8000/v1; repeat or comma-separate to load-balance "
                        "(default: $CFAUG_LLM_BASE_URL or $OPENAI_BASE_URL)")
    g.add_argument("--llm-model", default=None, help="served model name, or local model folder (default: $CFAUG_LLM_MODEL)")
    g.add_argument("--llm-api", choices=("chat", "completions"), default=None, help="HTTP endpoint (default chat)")
    g.add_argument("--llm-api-key-env", default=None, metavar="VAR", type=_key_env_name,
                   help=f"name of the environment variable holding the API key (default {DEFAULT_KEY_ENV}); "
                        "never the key itself")
    g.add_argument("--llm-device", default=None, help="local models: cpu, cuda, cuda:1 (default: cuda if available)")
    g.add_argument("--llm-batch-size", type=int, default=None, help=f"local models: requests per batch (default {DEFAULT_BATCH_SIZE})")
    g.add_argument("--cache-dir", default=None,
                   help="request cache folder (default: $CFAUG_CACHE_DIR or the user cache folder, e.g. ~/.cache/cfaug/llm)")
    g.add_argument("--no-cache", action="store_const", const=True, default=None,
                   help="neither read nor write the request cache")
    g.add_argument("--refresh", action="store_const", const=True, default=None,
                   help="ask again even when the cache has an answer (and store the new answers)")
    g.add_argument("--max-budget", type=float, default=None, metavar="USD",
                   help="stop cleanly before the estimated cost would exceed this (needs a known price)")
    g.add_argument("--price-table", default=None, metavar="FILE",
                   help="YAML/JSON of 'model: {input: USD per 1M tokens, output: ...}' added to the built-in prices")
    g.add_argument("--rpm", type=float, default=None, help="at most this many requests per minute")
    g.add_argument("--tpm", type=float, default=None, help="at most this many tokens per minute")
    g.add_argument("--request-timeout", type=float, default=None, metavar="SECONDS", help=f"per request (default {DEFAULT_REQUEST_TIMEOUT:g})")
    g.add_argument("--max-retries", type=int, default=None, help=f"retries of a failing request (default {DEFAULT_MAX_RETRIES})")


def llm_params_from_args(args: argparse.Namespace, params: dict[str, Any]) -> None:
    """Merge the LLM options (flags, then the config file's top-level options) into ``params["llm"]``.
    Leaves ``params`` untouched when no LLM option is set anywhere, so non-LLM methods are unaffected."""
    cfg: dict[str, Any] = {}
    if getattr(args, "config", None):
        from cfaug.cli.options import load_config_file

        cfg = load_config_file(args.config)
    # (a key in the file, llm_api_key or any other, was refused when the command read it)
    if cfg.get("llm_api_key_env") is not None and getattr(args, "llm_api_key_env", None) is None:
        from cfaug.cli import CliError
        from cfaug.llm.errors import LLMConfigError
        from cfaug.llm.settings import check_key_env

        try:
            check_key_env(cfg["llm_api_key_env"], f"llm_api_key_env in {args.config}")
        except LLMConfigError as exc:
            raise CliError(str(exc)) from None
    given = params.get("llm")
    if given is not None and not isinstance(given, Mapping):
        from cfaug.cli import CliError

        raise CliError("llm takes a mapping of LLM settings, not a single value: set them with the --llm-* "
                       "flags (--llm-model, --llm-base-url...), or in a config file as params: {llm: {model: ..., "
                       "base_url: ...}}")
    llm = dict(given or {})
    for option, key in OPTION_KEYS:
        value = getattr(args, option, None)
        if value is None:
            value = cfg.get(option)
        if value is None:
            continue
        if option == "no_cache":
            value = not _truthy(value)
        llm[key] = value
    if llm:
        params["llm"] = llm


def _key_env_name(value: str) -> str:
    """``--llm-api-key-env``'s value: the name of an environment variable. Anything else (a key pasted
    in its place, above all) is refused without being shown (see :func:`cfaug.llm.settings.check_key_env`)."""
    from cfaug.llm.errors import LLMConfigError
    from cfaug.llm.settings import check_key_env

    try:
        check_key_env(value, "--llm-api-key-env")
    except LLMConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--llm-api-key-env ")) from None
    return value


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
