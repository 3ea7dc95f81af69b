"""LLM backends. Importing this package registers the built-in ones in :data:`BACKENDS`."""

from cfaug.llm.backends.base import BACKENDS, Backend
from cfaug.llm.backends import llamacpp, openai_http, transformers_local, vllm_offline  # noqa: F401  (registration)

__all__ = ["BACKENDS", "Backend"]
