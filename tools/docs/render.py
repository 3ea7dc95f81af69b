"""Markdown the documentation site generates instead of retyping: parameter tables from the method
registry, the CLI reference from the parser definitions, and sections of benchmark results files.

A page asks for them with directives, each an HTML comment on a line of its own (on GitHub they are
invisible; the site replaces them):

``<!-- cfaug:parameters METHOD -->``
    every parameter of METHOD's config: name, default, range or choices, and its documentation.
``<!-- cfaug:presets METHOD -->``
    METHOD's presets (``--preset NAME``) with the values they set and what they need.
``<!-- cfaug:methods -->``
    one row per registered method: name, tasks, how it works (work unit, training) and its description.
``<!-- cfaug:cli -->``
    every command of ``cfaug`` with its usage, description and options.
``<!-- cfaug:results bench/FILE.md "Heading" -->``
    the section of a results file under that heading (without the heading; sub-headings shift down so they
    fit the page), followed by where it comes from.

:func:`expand` applies them to a page's markdown; an unknown directive, method or heading is an error, so
a page that asks for something gone fails the build. The functions import cfaug and read ``bench/``
relative to the repository root (``ROOT``).
"""

from __future__ import annotations

import argparse
import html
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

DIRECTIVE = re.compile(r"^<!--\s*cfaug:(?P<name>[\w-]+)(?P<args>[^>]*?)\s*-->[ \t]*$", re.MULTILINE)


class DirectiveError(ValueError):
    """A directive that cannot be expanded: unknown name, method, file or heading."""


# --------------------------------------------------------------------------------------------- cells


def cell(text: Any) -> str:
    """``text`` made safe inside a markdown table cell: HTML characters and pipes escaped, line breaks
    joined (a help text's ``<INPUT>`` must show, not vanish as a tag), braces as entities (the site's
    attribute lists would read a trailing ``{...}`` as attributes and drop it)."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    return text.replace("|", "\\|").replace("{", "&#123;").replace("}", "&#125;")


def code(text: Any) -> str:
    """``text`` as inline code (backticks inside are doubled around). The site's tables do not split a
    cell at a pipe inside code, so none is escaped there."""
    s = str(text)
    return f"`` {s} ``" if "`" in s else f"`{s}`"


# --------------------------------------------------------------------------------------------- methods


def method_class(name: str) -> Any:
    from cfaug.methods import METHODS
    from cfaug.registry import RegistryError

    try:
        return METHODS.get(name)
    except RegistryError as exc:
        raise DirectiveError(f"unknown method {name!r}: {exc}") from None


def value_range(info: Any) -> str:
    """The range of a parameter as written in ``cfaug methods -v``: ``{a, b}`` or ``[lo..hi]``."""
    if info.choices:
        return ", ".join(code(c) for c in info.choices)
    if info.min is not None or info.max is not None:
        lo = "" if info.min is None else f"{info.min:g}"
        hi = "" if info.max is None else f"{info.max:g}"
        return f"{lo} … {hi}".strip()
    return ""


def parameters_table(method: str) -> str:
    """A markdown table of every parameter of ``method`` (name, default, range, documentation)."""
    from cfaug.config import describe_params

    cls = method_class(method)
    rows = ["| parameter | default | range | what it does |", "|---|---|---|---|"]
    for info in describe_params(cls.Config):
        rows.append(f"| {code(info.name)} | {code(repr(info.default))} | {value_range(info)} | {cell(info.help)} |")
    return "\n".join(rows)


def presets_list(method: str) -> str:
    """``method``'s presets as a list: name, description, the values it sets, what it needs."""
    cls = method_class(method)
    if not cls.presets:
        return f"`{method}` has no preset but `default`."
    out = []
    for name, preset in cls.presets.items():
        values = ", ".join(code(f"{k}={v!r}") for k, v in preset.params.items())
        sets = f" Sets {values}." if values else " Sets no parameter: the defaults are already the paper's."
        needs = f" Needs: {', '.join(code(n) for n in preset.needs)}." if preset.needs else ""
        out.append(f"- **`--preset {name}`**: {cell(preset.description).rstrip('.')}.{sets}{needs}")
    return "\n".join(out)


def methods_table() -> str:
    """Every registered method: name, tasks, how it runs, and its one-line description."""
    from cfaug.methods import METHODS

    rows = ["| method | tasks | runs | what it does |", "|---|---|---|---|"]
    for entry in METHODS.entries():
        cls = entry.obj
        runs = [{"batch": "in batches", "item": "item by item"}[cls.work_unit]] + (["trains"] if cls.trains else [])
        rows.append(f"| `{entry.name}` | {', '.join(cls.supported_tasks)} | {', '.join(runs)} | {cell(entry.description)} |")
    return "\n".join(rows)


# --------------------------------------------------------------------------------------------- CLI


def option_rows(parser: argparse.ArgumentParser) -> list[str]:
    """One table row per argument of ``parser`` (positional first, then options; help itself left out)."""
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            names = ", ".join(action.option_strings)
            if action.nargs != 0:
                names += " " + (action.metavar or action.dest.upper()) if isinstance(action.metavar, (str, type(None))) else ""
        else:
            names = action.metavar or action.dest
        help_text = action.help or ""
        if "%(default)" in help_text:
            help_text = help_text % {"default": action.default}
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            help_text += " (one of: " + ", ".join(str(c) for c in action.choices) + ")"
        rows.append(f"| {code(names)} | {cell(help_text)} |")
    return rows


def usage(parser: argparse.ArgumentParser) -> str:
    text = parser.format_usage().strip()
    return re.sub(r"^usage:\s*", "", text)


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """Every command of ``cfaug`` (and of commands with subcommands, such as ``review``), each with its usage,
    description and a table of its arguments, read from the parser definitions."""
    from cfaug.cli import build_parser, command_parsers

    out: list[str] = []
    for path, child in command_parsers(parser or build_parser()):
        out.append(f"## `cfaug {' '.join(path)}`\n")
        if child.description:
            out.append(cell(child.description) + "\n")
        out.append("```text\n" + " ".join(usage(child).split()) + "\n```\n")
        rows = option_rows(child)
        if rows:
            out.append("| argument | what it does |\n|---|---|\n" + "\n".join(rows) + "\n")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------------------- results


def results_section(path: str, heading: str, *, page_src: str = "index.md", level: int = 3) -> str:
    """The body of the section titled ``heading`` in the results file ``path`` (relative to the repository
    root), its sub-headings moved to start at ``level + 1``, and a closing line linking the file (as the
    site holds it, relative to the page at ``page_src`` under docs/)."""
    file = ROOT / path
    if not file.is_file() or not path.startswith("bench/"):
        raise DirectiveError(f"no results file {path!r} under bench/")
    lines = file.read_text(encoding="utf-8").splitlines()
    start = depth = None
    for i, line in enumerate(lines):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if m and m.group(2) == heading:
            start, depth = i + 1, len(m.group(1))
            break
    if start is None or depth is None:
        raise DirectiveError(f"{path} has no section {heading!r}")
    end = len(lines)
    for j in range(start, len(lines)):
        m = re.match(r"^(#{1,6})\s", lines[j])
        if m and len(m.group(1)) <= depth:
            end = j
            break
    body = []
    in_code = False
    for line in lines[start:end]:
        if line.lstrip().startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^(#{1,6})(\s.*)$", line)
        body.append("#" * min(6, len(m.group(1)) - depth + level) + m.group(2) if m else line)
    text = "\n".join(body).strip("\n")
    link = "../" * page_src.count("/") + path
    return f"{text}\n\n*From [{path}]({link}), section “{heading}”.*"


# --------------------------------------------------------------------------------------------- pages


def expand(markdown: str, page_src: str = "index.md") -> str:
    """``markdown`` (the page at ``page_src`` under docs/) with every ``<!-- cfaug:... -->`` directive
    replaced by what it asks for."""

    def one(m: re.Match[str]) -> str:
        name, args = m.group("name"), shlex.split(m.group("args"))
        if name == "parameters" and len(args) == 1:
            return parameters_table(args[0])
        if name == "presets" and len(args) == 1:
            return presets_list(args[0])
        if name == "methods" and not args:
            return methods_table()
        if name == "cli" and not args:
            return cli_reference()
        if name == "results" and len(args) == 2:
            return results_section(args[0], args[1], page_src=page_src)
        raise DirectiveError(f"unknown directive or arguments: {m.group(0).strip()}")

    return DIRECTIVE.sub(one, markdown)


def directives(markdown: str) -> Iterable[str]:
    """The directives a page holds, as written."""
    return [m.group(0).strip() for m in DIRECTIVE.finditer(markdown)]


#: links from a page to a file under bench/ (``../bench/x.md``, ``../../bench/x.md``)
BENCH_LINK = re.compile(r"\]\((?:\.\./)+bench/([\w.\-]+\.md)(#[\w\-]*)?\)")


def bench_links(markdown: str, page_src: str) -> str:
    """Links to ``bench/*.md`` rewritten to the site's copies of those files (under ``bench/`` in the
    site), relative to the page at ``page_src`` (its path under docs/). In the repository the same links
    point at the files themselves."""
    depth = page_src.count("/")
    prefix = "../" * depth
    return BENCH_LINK.sub(lambda m: f"]({prefix}bench/{m.group(1)}{m.group(2) or ''})", markdown)
