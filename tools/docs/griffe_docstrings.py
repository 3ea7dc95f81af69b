"""A Griffe extension for the API reference: cfaug's docstrings are written for ``help()`` and Sphinx
(``:func:`name```, ``>>>`` examples); this turns them into the markdown the site renders.

- ``:func:`~cfaug.api.augment``` (any role) becomes ```augment``` (the last part when written with ``~``);
- a run of ``>>>`` / ``...`` lines becomes a fenced ``pycon`` block, ``# doctest:`` directives dropped.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj|ref):`(~?)([^`]+)`")
DOCTEST_DIRECTIVE = re.compile(r"\s*# doctest:.*$")


def plain_roles(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(2)
        return f"`{name.rsplit('.', 1)[-1] if m.group(1) else name}`"

    return ROLE.sub(one, text)


def fenced_examples(text: str) -> str:
    out: list[str] = []
    block: list[str] = []
    indent = ""

    def close() -> None:
        if block:
            out.extend([f"{indent}```pycon", *block, f"{indent}```"])
            block.clear()

    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith((">>>", "... ")) or (block and stripped == "..."):
            if not block:
                indent = line[: len(line) - len(stripped)]
            block.append(DOCTEST_DIRECTIVE.sub("", line))
        else:
            close()
            out.append(line)
    close()
    return "\n".join(out)


def markdown_docstring(text: str) -> str:
    return fenced_examples(plain_roles(text))


class SphinxToMarkdown(Extension):
    """Rewrites every loaded object's docstring with :func:`markdown_docstring`."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
