"""``cfaug prompts``: list the prompt templates, or show one."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("prompts", help="list LLM prompt templates",
                       description="List the built-in prompt templates (versioned names, parser, description), "
                                   "or print one template. Pass a template to a method with -p prompt=NAME_OR_PATH.")
    p.add_argument("name", nargs="?", help="a template name or .j2 path to print")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.llm.errors import LLMConfigError
    from cfaug.llm.templates import PROMPTS, load_prompt

    if args.name:
        try:
            prompt = load_prompt(args.name)
        except LLMConfigError as exc:
            raise CliError(str(exc)) from exc
        print(f"# {prompt.name}  ({prompt.path})")
        print(f"# parser: {prompt.parser}; variables: {', '.join(prompt.variables)}")
        if prompt.description:
            print(f"# {prompt.description}")
        print(prompt.source.rstrip())
        return 0
    entries = PROMPTS.entries()
    # columns as wide as their longest entry, so that every parser and description starts in one column
    name_w = max((len(e.name) for e in entries), default=0)
    parser_w = max((len(e.obj.parser) for e in entries), default=0)
    for entry in entries:
        print(f"{entry.name:<{name_w}}  parser={entry.obj.parser:<{parser_w}}  {entry.description}")
    return 0
