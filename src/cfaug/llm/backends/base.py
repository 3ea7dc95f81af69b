"""The backend protocol: one async call, ``send(request) -> Completion``; backends are registered by name."""

from __future__ import annotations

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


#: Registered backends: ``openai.v1``, ``transformers.v1``, ``vllm.v1``.
BACKENDS: Registry[type[Backend]] = Registry("llm backend")
