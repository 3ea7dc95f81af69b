"""llama.cpp in this process: a GGUF model (a packaged name or a ``.gguf`` path) served on loopback by
llama.cpp's own OpenAI-compatible server (``xllamacpp``, the ``local-llm`` extra), asked through the same
HTTP client as any server, so the request cache, the usage ledger (cost 0, tokens counted), retries, the
answer reader and budgets work as they do for a remote model.

The server starts when the client is created (a missing package or a damaged file fails there, before any
work): on 127.0.0.1, on a port the system picks, with a random token every request must carry. It has
``min(concurrency, MAX_SLOTS)`` slots, each with the model's training context up to :data:`DEFAULT_CONTEXT`
tokens (``llm`` setting ``context``), and half the machine's cores as threads (setting ``threads``). It
stops when the client closes, and at interpreter exit whatever happened before (Ctrl-C, an error): the
server is a thread of this process, so no process is left behind. A model without a chat template (a base
model) is asked through the completions endpoint.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import secrets
import threading
from typing import Any, ClassVar

from cfaug.llm.backends.base import BACKENDS
from cfaug.llm.backends.openai_http import Endpoint, OpenAIBackend, _endpoint_url
from cfaug.llm.errors import LLMConfigError
from cfaug.llm.gguf import GGUFError, GGUFInfo, read_metadata
from cfaug.llm.gguf_models import resolve_gguf
from cfaug.llm.settings import LLMSettings
from cfaug.llm.types import Request
from cfaug.packaged_models import file_sha256, model_hash, model_name

#: at most this many requests are decoded together (each slot holds its own context)
MAX_SLOTS = 4
#: context tokens per slot when the model was trained with more (and ``context`` is not set)
DEFAULT_CONTEXT = 4096
#: what to install when xllamacpp is missing
INSTALL = "pip install 'cfaug[local-llm]'"

_RUNNING: dict[int, Any] = {}  # id -> xllamacpp.Server still running (stopped at exit)
_LOCK = threading.Lock()


def default_threads() -> int:
    """Threads llama.cpp decodes with: half the cores (at least 1, at most 8). On a 2-core machine one thread
    measured faster than two while the rest of cfaug also needed the CPU."""
    return max(1, min(8, (os.cpu_count() or 2) // 2))


@BACKENDS.register("llamacpp.v1", "a GGUF model run by llama.cpp in this process (extra 'local-llm'): a packaged "
                   "name such as smollm2-135m-instruct, or a .gguf path")
class LlamaCppBackend(OpenAIBackend):
    kind = "llamacpp"
    #: a local model costs nothing: the ledger counts tokens at price 0, so a budget can be set
    free: ClassVar[bool] = True

    def __init__(self, settings: LLMSettings) -> None:
        self.path = resolve_gguf(settings.model)
        try:
            self.info: GGUFInfo = read_metadata(self.path)
        except (GGUFError, OSError) as exc:
            raise LLMConfigError(f"model {settings.model}: {exc}") from None
        api = settings.api if self.info.chat_template else "completions"
        # the endpoint is known once the server runs; until then a placeholder keeps the parent from
        # choosing OpenAI's URL, and the key is the server's own token, never the user's API key
        placeholder = dataclasses.replace(settings, base_url=["http://127.0.0.1:9/v1"], api=api)
        super().__init__(placeholder)
        self.slots = max(1, min(settings.concurrency, MAX_SLOTS))
        self.threads = settings.threads or default_threads()
        trained = self.info.context_length or DEFAULT_CONTEXT
        self.context = min(trained, settings.context or DEFAULT_CONTEXT)
        self._token = secrets.token_urlsafe(24)
        self._key = self._token
        self._secrets = [self._token]
        self._headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self._token}"}
        self.server: Any = None
        self.address = ""
        self._by_api: dict[str, Endpoint] = {}

    @property
    def model_id(self) -> str:
        return f"gguf:{model_hash(self.path)}"

    @property
    def public_model(self) -> str:
        """The packaged name, or the file's base name (llama.cpp's server reports the file's path)."""
        return model_name(self.settings.model, self.path)

    @property
    def model_sha256(self) -> str:
        """The model file's sha256 (hashed once per process)."""
        return file_sha256(self.path)

    def describe(self) -> dict[str, Any]:
        """What the run manifest records about the model and the server (the only place its path is kept)."""
        return {"name": self.public_model, "path": str(self.path), "size": self.info.size,
                "sha256": self.model_sha256, "sha256_16": model_hash(self.path),
                "architecture": self.info.architecture, "trained_context": self.info.context_length,
                "context_per_slot": self.context, "slots": self.slots, "threads": self.threads,
                "api": self.settings.api, "license": self.info.license, "address": self.address}

    def check(self) -> None:
        self.start()

    def start(self) -> None:
        """Load the model and start the server (once)."""
        if self.server is not None:
            return
        try:
            import xllamacpp
        except ImportError:
            raise LLMConfigError(f"model {self.settings.model} runs on llama.cpp, which is not installed: "
                                 f"{INSTALL}") from None
        p = xllamacpp.CommonParams()
        p.model.path = str(self.path)
        p.n_parallel = self.slots
        p.n_ctx = self.context * self.slots
        p.port = 0  # the system picks a free port
        p.hostnames = ["127.0.0.1"]
        p.api_keys = [self._token]
        p.verbosity = -1
        p.ui = False
        p.cpuparams.n_threads = p.cpuparams_batch.n_threads = self.threads
        device = self.settings.device or "cpu"
        p.n_gpu_layers = 999 if device.startswith("cuda") else 0
        try:
            server = xllamacpp.Server(p)
        except Exception as exc:  # noqa: BLE001 - llama.cpp reports a bad file or too little memory this way
            raise LLMConfigError(f"model {self.settings.model}: llama.cpp could not load {self.path}: "
                                 f"{type(exc).__name__}: {exc}") from None
        address = str(getattr(server, "listening_address", "") or "").rstrip("/")
        if not address:
            del server
            raise LLMConfigError(f"model {self.settings.model}: the llama.cpp server did not start listening")
        with _LOCK:
            _RUNNING[id(self)] = server
        self.server, self.address = server, address
        base = f"{address}/v1"
        self._by_api = {"chat": Endpoint(base, _endpoint_url(base, "/chat/completions")),
                        "completions": Endpoint(base, _endpoint_url(base, "/completions"))}
        self.endpoints = [self._by_api[self.settings.api]]

    def api_for(self, request: Request) -> str:
        """A raw prompt (``client.complete``: a completion-style prompt) goes to the completions endpoint,
        chat messages to the chat endpoint, and everything to completions for a model without a chat
        template."""
        return "completions" if request.prompt is not None or self.settings.api == "completions" else "chat"

    def endpoint_for(self, request: Request) -> Endpoint:
        if not self._by_api:
            self.start()
        return self._by_api[self.api_for(request)]

    def close(self) -> None:
        """Stop the server (its thread ends and the port closes)."""
        with _LOCK:
            _RUNNING.pop(id(self), None)
        self.server = None  # the last reference: llama.cpp's server stops in its destructor


@atexit.register
def _stop_all() -> None:
    """Stop the servers still running when the interpreter exits (a run stopped by Ctrl-C or an error)."""
    with _LOCK:
        _RUNNING.clear()


__all__ = ["DEFAULT_CONTEXT", "LlamaCppBackend", "MAX_SLOTS", "default_threads", "model_hash"]
