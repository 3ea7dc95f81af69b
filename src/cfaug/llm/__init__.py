"""The LLM layer: one async protocol over registered backends, a persistent request cache, a usage
ledger with a budget, rate limits, prompt templates kept as files and robust output parsers.

Quick use (inside a coroutine)::

    from cfaug.llm import LLMSettings, create_client

    client = create_client(LLMSettings(base_url=["http://localhost:8000/v1"], model="my-model"))
    answer = await client.chat([{"role": "user", "content": "Say hi"}], max_tokens=20)
    await client.aclose(); client.close()

Methods build on :class:`cfaug.methods.llm_method.LLMMethod`. Inside this package, modules import from each
other's modules, never from the package root.
"""

from cfaug.llm.backends import BACKENDS, Backend
from cfaug.llm.cache import ResponseCache, default_cache_dir, fingerprint
from cfaug.llm.client import LLMClient, create_client
from cfaug.llm.errors import (BudgetExceeded, LLMConfigError, LLMError, LLMRequestError, LLMUnavailable,
                              ParseError, UnparsedAnswer)
from cfaug.llm.ledger import PriceTable, UsageLedger
from cfaug.llm.parsers import PARSERS, Parser, get_parser
from cfaug.llm.settings import LLMSettings
from cfaug.llm.templates import PROMPTS, Prompt, load_prompt
from cfaug.llm.types import Completion, Message, Request

__all__ = [
    "BACKENDS", "Backend", "BudgetExceeded", "Completion", "LLMClient", "LLMConfigError",
    "LLMError", "LLMRequestError", "LLMSettings", "LLMUnavailable", "Message", "PARSERS", "PROMPTS",
    "ParseError", "Parser", "PriceTable", "Prompt", "Request", "ResponseCache", "UnparsedAnswer", "UsageLedger",
    "create_client", "default_cache_dir", "fingerprint", "get_parser", "load_prompt",
]
