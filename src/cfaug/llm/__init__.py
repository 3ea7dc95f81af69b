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

from __future__ import annotations

from cfaug.lazy import lazy_exports


# The names below are imported on first use: a method module that needs only the error types or the settings
# does not load the HTTP client (aiohttp) and the prompt templates (Jinja2) with them.
_HOMES = {
    "BACKENDS": "backends", "Backend": "backends",
    "ResponseCache": "cache", "default_cache_dir": "cache", "fingerprint": "cache",
    "LLMClient": "client", "create_client": "client",
    "BudgetExceeded": "errors", "LLMConfigError": "errors", "LLMError": "errors", "LLMRequestError": "errors",
    "LLMUnavailable": "errors", "ParseError": "errors", "UnparsedAnswer": "errors",
    "PriceTable": "ledger", "UsageLedger": "ledger",
    "PARSERS": "parsers", "Parser": "parsers", "get_parser": "parsers",
    "LLMSettings": "settings",
    "PROMPTS": "templates", "Prompt": "templates", "load_prompt": "templates",
    "Completion": "types", "Message": "types", "Request": "types",
}

__all__ = [
    "BACKENDS", "Backend", "BudgetExceeded", "Completion", "LLMClient", "LLMConfigError",
    "LLMError", "LLMRequestError", "LLMSettings", "LLMUnavailable", "Message", "PARSERS", "PROMPTS",
    "ParseError", "Parser", "PriceTable", "Prompt", "Request", "ResponseCache", "UnparsedAnswer", "UsageLedger",
    "create_client", "default_cache_dir", "fingerprint", "get_parser", "load_prompt",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
