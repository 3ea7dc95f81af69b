"""The backend protocol: one async call, ``send(request) -> Completion``; backends are registered by name."""

from __future__ import annotations

import contextvars
from typing import ClassVar

from cfaug.llm.settings import LLMSettings
from cfaug.llm.types import Completion, Request
from cfaug.registry import Registry


class Backend:
    """Sends requests to one model. Subclasses set ``kind`` (used in cache fingerprints) and implement
    :meth:`send`; they may batch internally (local engines) or send each request on its own (HTTP).
    Retries of transient failures are the backend's job; the client above handles caching, limits,
    budget and accounting."""

    kind: ClassVar[str] = "backend"
    #: whether :meth:`send` reports every attempt it makes with :func:`note_attempt` (HTTP backends, which
    #: retry); for other backends a call counts as one request sent
    counts_attempts: ClassVar[bool] = False

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    @property
    def model(self) -> str:
        """The model name as used in cache fingerprints and the price table."""
        return self.settings.model

    @property
    def model_id(self) -> str:
        """What identifies the model's weights in cache fingerprints (a served name, a resolved path)."""
        return self.settings.model

    @property
    def public_model(self) -> str | None:
        """The model's name in what leaves this machine with the data (each answer's ``model``, so
        ``meta.llm.model`` in output rows): a packaged name or a base name, never a local path. None: the
        name the server reports (a remote model has no local path)."""
        return None

    @property
    def model_sha256(self) -> str | None:
        """sha256 of the model's file, recorded beside :attr:`public_model` (None: not one local file)."""
        return None

    @property
    def secrets(self) -> list[str]:
        """Credentials in use (API key, URL passwords): masked in every text the LLM layer keeps or shows."""
        return []

    async def send(self, request: Request) -> Completion:
        raise NotImplementedError

    def check(self) -> None:
        """Fail early (before any request) on settings this backend cannot use."""

    async def aclose(self) -> None:
        """Release resources bound to the event loop (HTTP sessions)."""

    def close(self) -> None:
        """Release other resources (models)."""


class AttemptTally:
    """How often the request being sent went out (retries included); set around one call of
    :meth:`Backend.send` by the client (:func:`tally_attempts`), so that a request that fails for good is
    counted as well as one that is answered."""

    def __init__(self) -> None:
        self.sent = 0


_TALLY: contextvars.ContextVar[AttemptTally | None] = contextvars.ContextVar("cfaug_llm_attempts", default=None)


def tally_attempts() -> tuple[AttemptTally, contextvars.Token[AttemptTally | None]]:
    """A fresh tally for the calls to :func:`note_attempt` made from here on in this task, and the token
    that ends it (``_TALLY.reset(token)``, see :func:`end_tally`)."""
    tally = AttemptTally()
    return tally, _TALLY.set(tally)


def end_tally(token: contextvars.Token[AttemptTally | None]) -> None:
    """Stop counting into the tally :func:`tally_attempts` started."""
    _TALLY.reset(token)


def note_attempt() -> None:
    """Count one attempt of the request being sent; a backend calls it right before each attempt goes out."""
    tally = _TALLY.get()
    if tally is not None:
        tally.sent += 1


#: Registered backends: ``openai.v1``, ``transformers.v1``, ``vllm.v1``.
BACKENDS: Registry[type[Backend]] = Registry("llm backend")
