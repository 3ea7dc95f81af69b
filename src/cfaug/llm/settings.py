"""LLM settings: which backend and model, how hard to push it, where to cache, what it may cost.

Settings arrive as a plain mapping (method parameter ``llm``, filled by the ``cfaug augment`` flags or a
config file) and are validated here. The API key itself is never a setting: only the *name* of the
environment variable that holds it (``api_key_env``), read when the client is created.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cfaug.config import unknown_names
from cfaug.llm.errors import LLMConfigError
from cfaug.llm.gguf_models import looks_like_gguf
from cfaug.llm.redact import ENV_NAME, looks_like_key, token_like
from cfaug.llm.redact import redact_url as _redact_url
from cfaug.quoting import quote

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: Environment variables read when no base URL / model is given.
BASE_URL_ENVS = ("CFAUG_LLM_BASE_URL", "OPENAI_BASE_URL")
MODEL_ENV = "CFAUG_LLM_MODEL"

#: Defaults stated once: the settings below, the client, the runner and help texts take them from here.
DEFAULT_CONCURRENCY = 16  #: requests in flight at once
DEFAULT_REQUEST_TIMEOUT = 120.0  #: seconds per request
DEFAULT_MAX_RETRIES = 6  #: retries of a failing request
DEFAULT_BATCH_SIZE = 8  #: local models: requests per batch

#: Settings that change how a run is executed but not what it produces; they are left out of the run
#: identity, so a killed run can be resumed with, say, a lower ``concurrency``.
OPERATIONAL = frozenset({
    "base_url", "api_key_env", "concurrency", "cache", "cache_dir", "refresh", "max_budget", "price_table",
    "rpm", "tpm", "request_timeout", "max_retries", "retry_base_delay", "retry_max_delay", "device",
    "batch_size", "threads", "context",
})


@dataclass
class LLMSettings:
    """Everything needed to build an :class:`~cfaug.llm.client.LLMClient`.

    ``backend`` is a registered backend name (``openai``, ``llamacpp``, ``transformers``, ``vllm``) or
    ``auto``: the HTTP backend when a base URL is known, llama.cpp in this process when ``model`` is a
    ``.gguf`` file or a packaged model's name (and no base URL is given), the transformers backend when
    ``model`` is a local folder. ``threads`` and ``context`` (tokens per slot) are llama.cpp's.
    ``api`` picks the HTTP endpoint (``chat`` or ``completions``). ``max_budget`` is in the currency of
    the price table (USD by default).
    """

    backend: str = "auto"
    base_url: list[str] = field(default_factory=list)
    model: str = ""
    api: str = "chat"
    api_key_env: str = DEFAULT_KEY_ENV
    concurrency: int = DEFAULT_CONCURRENCY
    cache: bool = True
    cache_dir: str | None = None
    refresh: bool = False
    max_budget: float | None = None
    price_table: str | None = None
    rpm: float | None = None
    tpm: float | None = None
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    retry_base_delay: float = 0.5
    retry_max_delay: float = 30.0
    device: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    dtype: str | None = None
    threads: int | None = None
    context: int | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> LLMSettings:
        """Validate and convert ``data`` (strings from a command line or YAML values)."""
        if data is not None and not isinstance(data, Mapping):
            raise LLMConfigError("the llm settings are a mapping of names to values (the --llm-* flags, or "
                                 "params: {llm: {model: ..., base_url: ...}} in a config file), not a single value")
        data = dict(data or {})
        for secret in ("api_key", "key", "openai_api_key"):
            if secret in data:
                raise LLMConfigError(
                    f"llm setting {secret!r}: keys are not settings; put the key in an environment variable "
                    f"and name it with api_key_env (default {DEFAULT_KEY_ENV})")
        known = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise LLMConfigError(f"unknown llm setting(s): {unknown_names(unknown, known)}; "
                                 f"valid: {', '.join(sorted(known))}")
        kwargs = {k: _convert(k, v, known[k]) for k, v in data.items() if v is not None}
        settings = cls(**kwargs)
        settings._check()
        return settings

    def _check(self) -> None:
        check_key_env(self.api_key_env, "llm setting api_key_env")
        if self.api not in ("chat", "completions"):
            raise LLMConfigError(f"llm api must be 'chat' or 'completions', got {quote(self.api)}")
        for name in ("concurrency", "batch_size", "max_retries", "threads", "context"):
            low = 0 if name == "max_retries" else 1
            if getattr(self, name) is not None and getattr(self, name) < low:
                raise LLMConfigError(f"llm setting {name} must be at least {low}, got {getattr(self, name)}")
        for name in ("max_budget", "rpm", "tpm", "request_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise LLMConfigError(f"llm setting {name} must be positive, got {value}")
        for url in self.base_url:
            parts = urlsplit(url)
            try:
                parts.port  # noqa: B018 - raises on a port that is not a number
            except ValueError:
                raise LLMConfigError(f"llm base URL {quote(redact_url(url))} has an invalid port") from None
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise LLMConfigError(
                    f"llm base URL {quote(redact_url(url))} is not an http(s) URL like http://localhost:8000/v1")

    # -- resolution ----------------------------------------------------------------------------------
    def resolved(self) -> LLMSettings:
        """A copy with base URL and model filled from the environment and ``backend`` decided."""
        s = dataclasses.replace(self, base_url=list(self.base_url))
        if s.backend == "auto" and not s.base_url and s.model and looks_like_gguf(s.model):
            s.backend = "llamacpp"  # a model file or packaged model named: run it here, not on a server
        if not s.base_url and s.backend.split(".")[0] in ("auto", "openai"):
            for env in BASE_URL_ENVS:
                if os.environ.get(env):
                    s.base_url = split_urls([os.environ[env]])
                    break
        if not s.model and os.environ.get(MODEL_ENV):
            s.model = os.environ[MODEL_ENV]
        if s.backend == "auto":
            if s.base_url:
                s.backend = "openai"
            elif s.model and Path(s.model).expanduser().is_dir():
                s.backend = "transformers"
            else:
                raise LLMConfigError(
                    "no LLM given: pass --llm-base-url URL --llm-model NAME for a server (vLLM, Ollama, "
                    "llama.cpp, OpenAI), --llm-model FILE.gguf or a packaged model's name (cfaug llm models) to "
                    "run one here, or --llm-model PATH for a local transformers model")
        if not s.model:
            raise LLMConfigError("no LLM model given: pass --llm-model (a served model name or a local path)")
        s._check()
        return s

    def public(self) -> dict[str, Any]:
        """The settings as recorded in a run manifest: no secrets (base URLs lose any user:password and
        their query values, see :func:`redact_url`)."""
        d = dataclasses.asdict(self)
        d["base_url"] = [redact_url(u) for u in self.base_url]
        return d

    def identity(self) -> dict[str, Any]:
        """The settings that change what a run produces (backend, model, endpoint kind)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in OPERATIONAL}


def split_urls(values: list[str] | str | None) -> list[str]:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; a trailing slash is dropped and a bare host gets ``/v1``."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out = []
    for v in values:
        for part in str(v).split(","):
            part = part.strip().rstrip("/")
            if not part:
                continue
            parts = urlsplit(part)
            if parts.path in ("", "/"):
                part = urlunsplit((parts.scheme, parts.netloc, "/v1", parts.query, parts.fragment))
            out.append(part)
    return out


def redact_url(url: str) -> str:
    """The URL fit to be shown: no ``user:password@``, query values masked (:func:`cfaug.llm.redact.redact_url`)."""
    return _redact_url(url)


def check_key_env(name: object, where: str) -> None:
    """Raise :class:`LLMConfigError` unless ``name`` can name an environment variable (letters, digits and
    ``_``, not starting with a digit). ``where`` names the setting (``--llm-api-key-env``...). The message
    says that the setting takes the *name* of the variable holding the key, not the key; a value that
    looks like a key (:func:`~cfaug.llm.redact.looks_like_key`) is never shown."""
    if isinstance(name, str) and ENV_NAME.match(name):
        return
    hidden = looks_like_key(name) or token_like(name)  # what could be a key is never shown
    shown = "the value given looks like a key and is not shown" if hidden \
        else f"got {quote(name, 60)}, which is not a variable name"
    raise LLMConfigError(
        f"{where} takes the name of the environment variable that holds the API key (such as "
        f"{DEFAULT_KEY_ENV}), not the key itself; {shown}. Put the key in an environment variable and "
        "give its name")


def _convert(name: str, value: Any, f: dataclasses.Field) -> Any:
    typ = str(f.type)
    try:
        if name == "base_url":
            return split_urls(value if isinstance(value, list) else [value])
        if typ.startswith("bool"):
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("1", "true", "yes", "on"):
                return True
            if str(value).lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if typ.startswith("int"):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return int(value)
        if typ.startswith("float"):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        shown = "a value that looks like a key (not shown)" if looks_like_key(value) else quote(value)
        raise LLMConfigError(f"llm setting {name}: cannot read {shown} as {typ.split(' ')[0]}") from None
