"""Prompt templates kept as files: Jinja2, versioned by file name, listed by ``cfaug prompts``.

A template file is named ``<name>.v<N>.j2`` and starts with a YAML header in a Jinja comment::

    {#-
    description: one line saying what the prompt asks
    parser: revised_text          # how the answer is read (see cfaug.llm.parsers)
    -#}
    ### system
    You rewrite texts ...
    ### user
    Text: {{ text }}
    Target sentiment: {{ target }}

Lines ``### system``, ``### user`` and ``### assistant`` in the template start a chat message (without
any, the whole text is one user message); loops may emit several turns (few-shot demonstrations).
Only marker lines written in the template count: a ``### user`` line inside a rendered text does not
start a message. Undefined variables are errors. A published version is never edited: a changed
prompt gets a new version, so cached answers and old runs keep meaning what they meant.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import yaml

from cfaug.llm.errors import LLMConfigError
from cfaug.llm.types import Message
from cfaug.registry import Registry, RegistryError

ROLES = ("system", "user", "assistant")
_HEADER = re.compile(r"\A\{#-?[ \t]*\n(?P<yaml>.*?)\n[ \t]*-?#\}[ \t]*\n?", re.S)
_MARKER = re.compile(r"^###[ \t]+(system|user|assistant)[ \t]*$", re.M)
_SENTINEL = "\x00cfaug-role:{}\x00"
_SPLIT = re.compile("\x00cfaug-role:(system|user|assistant)\x00")
_NAME = re.compile(r"^(?P<name>[a-z0-9][a-z0-9_-]*\.v\d+)\.j2$")

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False,
    keep_trailing_newline=False,
    finalize=lambda v: str(v).replace("\x00", "") if v is not None else "",
)


@dataclass
class Prompt:
    """A loaded template. ``render(**variables)`` gives the chat messages."""

    name: str
    description: str
    parser: str
    source: str
    path: str
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        body = _MARKER.sub(lambda m: _SENTINEL.format(m.group(1)), self.source)
        try:
            self._template = _ENV.from_string(body)
        except jinja2.TemplateSyntaxError as exc:
            raise LLMConfigError(f"prompt {self.path}, line {exc.lineno}: {exc.message}") from None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    @property
    def variables(self) -> list[str]:
        """Names the template reads."""
        from jinja2 import meta

        return sorted(meta.find_undeclared_variables(_ENV.parse(_MARKER.sub("", self.source))))

    def render(self, **variables: Any) -> list[Message]:
        try:
            text = self._template.render(**variables)
        except jinja2.UndefinedError as exc:
            raise LLMConfigError(f"prompt {self.name} ({self.path}): {exc.message}; "
                                 f"available: {', '.join(sorted(variables))}") from None
        parts = _SPLIT.split(text)
        messages: list[Message] = []
        lead = parts[0].strip()
        if lead:
            messages.append({"role": "user", "content": lead})
        for role, content in zip(parts[1::2], parts[2::2]):
            content = content.strip()
            if content:
                messages.append({"role": role, "content": content})
        if not messages:
            raise LLMConfigError(f"prompt {self.name} ({self.path}) rendered to an empty prompt")
        return messages

    @classmethod
    def from_text(cls, text: str, path: str, name: str | None = None) -> Prompt:
        meta: dict[str, Any] = {}
        m = _HEADER.match(text)
        if m:
            try:
                loaded = yaml.safe_load(m.group("yaml"))
            except yaml.YAMLError as exc:
                raise LLMConfigError(f"prompt {path}: cannot read its header: {exc}") from None
            if loaded is not None and not isinstance(loaded, dict):
                raise LLMConfigError(f"prompt {path}: the header must be a YAML mapping")
            meta = loaded or {}
            text = text[m.end():]
        if name is None:
            fname = Path(path).name
            nm = _NAME.match(fname)
            name = nm.group("name") if nm else Path(fname).stem
        return cls(name=name, description=str(meta.get("description", "")).strip(),
                   parser=str(meta.get("parser", "text")), source=text, path=path, meta=meta)

    @classmethod
    def from_file(cls, path: str | Path) -> Prompt:
        p = Path(path).expanduser()
        if not p.is_file():
            raise LLMConfigError(f"prompt file {path}: not found")
        return cls.from_text(p.read_text(encoding="utf-8"), str(p))


#: Built-in templates (``src/cfaug/llm/prompts/*.j2``), by versioned name.
PROMPTS: Registry[Prompt] = Registry("prompt")


def _register_builtin() -> None:
    folder = resources.files("cfaug.llm") / "prompts"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        m = _NAME.match(entry.name)
        if not m:
            continue
        prompt = Prompt.from_text(entry.read_text(encoding="utf-8"), f"cfaug/llm/prompts/{entry.name}", m.group("name"))
        PROMPTS.register(prompt.name, prompt.description)(prompt)


def has_prompt(name: str) -> bool:
    """Whether a built-in prompt ``name`` exists in any version (``few-shot-sentiment-small``)."""
    return any(entry.name.rsplit(".v", 1)[0] == name for entry in PROMPTS.entries())


def load_prompt(name_or_path: str) -> Prompt:
    """A built-in prompt by name (``zero-shot-sentiment`` = newest version, or ``zero-shot-sentiment.v1``),
    or a template file by path (any name ending in ``.j2``)."""
    if name_or_path.endswith(".j2") or "/" in name_or_path or "\\" in name_or_path:
        return Prompt.from_file(name_or_path)
    try:
        return PROMPTS.get(name_or_path)
    except RegistryError as exc:
        raise LLMConfigError(f"{exc}; or give the path of a .j2 template file") from None


_register_builtin()
