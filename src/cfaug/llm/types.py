"""The request and the answer that travel through the LLM layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``.
Message = dict[str, str]


@dataclass(frozen=True)
class Request:
    """One generation request: chat ``messages`` or a raw completion ``prompt`` (exactly one of them).

    ``params`` are generation parameters sent as they are (``temperature``, ``max_tokens``, ``top_p``,
    ``stop``...). ``seed`` and ``sample`` (the index of a sample when several are drawn for the same
    prompt) are part of the request's identity in the cache, so sample 2 is never served sample 1's
    answer.
    """

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    sample: int = 0

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("a request has either messages or a prompt")

    @property
    def max_tokens(self) -> int | None:
        value = self.params.get("max_tokens")
        return int(value) if value is not None else None

    def text_bytes(self) -> int:
        """UTF-8 size of the prompt text: an upper bound of its token count for byte-level and
        SentencePiece tokenizers (every token covers at least one byte)."""
        if self.prompt is not None:
            return len(self.prompt.encode("utf-8"))
        return sum(len(m["content"].encode("utf-8")) for m in self.messages or ())

    def prompt_as_text(self) -> str:
        """The prompt, or the messages flattened (for backends without chat support)."""
        if self.prompt is not None:
            return self.prompt
        return "\n\n".join(m["content"] for m in self.messages or ())


@dataclass
class Completion:
    """An answer. ``tokens_in``/``tokens_out`` come from the backend; ``usage_estimated`` is True when
    the backend did not report them and they were estimated from the text (4 characters per token).
    ``cached`` is True when the answer came from the request cache (no request was made).
    ``attempts`` counts HTTP attempts (1 = no retry). ``cache_key`` is the request's fingerprint, set by
    the client (it is how an answer that proved unusable is dropped from the cache).

    ``finish_reason`` is the server's (``"stop"``, ``"length"`` when the answer was cut at ``max_tokens``...;
    None when it gave none). ``reasoning`` is what a reasoning model thought before answering, when the server
    returned it apart from the answer (``reasoning_content`` or ``reasoning`` beside ``content``): kept, never
    read as the answer. Reasoning written inline (``<think>...</think>`` in ``text``) stays in ``text``; the
    parsers strip it (:func:`cfaug.llm.parsers.split_reasoning`). ``refusal`` is the text of a refusal the
    server sent in the message's own ``refusal`` field (OpenAI's structured refusals), None when there is
    none; an answer that is a refusal has no ``text`` and is reported as refused, not as empty
    (:attr:`refused`).

    ``model`` is the model's name as the server reported it, or, for a model run on this machine, its
    public name (a packaged name, a file's or folder's base name; never a local path), and ``model_sha256``
    its file's sha256 (None for a model that is not one local file); the client sets both from the backend
    on every answer, fresh or cached (:meth:`cfaug.llm.backends.base.Backend.public_model`)."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    finish_reason: str | None = None
    model: str = ""
    cached: bool = False
    usage_estimated: bool = False
    attempts: int = 1
    reasoning: str | None = None
    refusal: str | None = None
    model_sha256: str | None = None
    cache_key: str | None = field(default=None, compare=False, repr=False)

    @property
    def truncated(self) -> bool:
        """Whether the answer was cut off at ``max_tokens`` (``finish_reason == "length"``)."""
        return self.finish_reason == "length"

    @property
    def refused(self) -> bool:
        """Whether the model refused instead of answering: a ``refusal`` and no answer text."""
        return bool(self.refusal and self.refusal.strip()) and not self.text.strip()

    def to_cache(self) -> dict[str, Any]:
        data = {"text": self.text, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "finish_reason": self.finish_reason, "model": self.model,
                "usage_estimated": self.usage_estimated}
        if self.reasoning is not None:
            data["reasoning"] = self.reasoning
        if self.refusal is not None:
            data["refusal"] = self.refusal
        return data

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> Completion:
        return cls(text=data["text"], tokens_in=int(data.get("tokens_in", 0)),
                   tokens_out=int(data.get("tokens_out", 0)), finish_reason=data.get("finish_reason"),
                   model=data.get("model", ""), cached=True,
                   usage_estimated=bool(data.get("usage_estimated", False)), attempts=0,
                   reasoning=data.get("reasoning"), refusal=data.get("refusal"))


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters per token) for backends that report no usage."""
    return max(1, (len(text) + 3) // 4) if text else 0
