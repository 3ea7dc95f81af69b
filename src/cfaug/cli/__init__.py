"""The ``cfaug`` command. Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds its parser and sets ``func`` to the handler (``handler(args) -> int`` exit code)."""

from __future__ import annotations

import argparse
import importlib
import sys

from cfaug import __version__

#: Modules that provide subcommands, in the order ``cfaug --help`` lists them.
COMMAND_MODULES = (
    "cfaug.cli.augment",
    "cfaug.cli.train",
    "cfaug.cli.demo",
    "cfaug.cli.methods",
    "cfaug.cli.parts",
    "cfaug.cli.prompts",
    "cfaug.cli.prompt_search",
    "cfaug.cli.evaluate",
    "cfaug.cli.downstream",
    "cfaug.cli.compare",
    "cfaug.cli.report",
    "cfaug.cli.review",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cfaug",
        description="Counterfactual and counterbias training data: rewrite texts so their label flips "
                    "with minimal, fluent edits.")
    parser.add_argument("--version", action="version", version=f"cfaug {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in COMMAND_MODULES:
        importlib.import_module(mod).register(sub)
    return parser


def command_parsers(parser: argparse.ArgumentParser,
                    prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command under ``parser`` as ``(path, its parser)``, depth first in the order they were added:
    ``("augment",)``, ..., ``("review",)``, ``("review", "serve")``, ..."""
    out: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                out.append((prefix + (name,), child))
                out += command_parsers(child, prefix + (name,))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except (CliError, *user_errors()) as exc:
        print(f"cfaug: error: {exc}", file=sys.stderr)
        return 2


class CliError(Exception):
    """An error the user can fix; printed without a traceback."""


def user_errors() -> tuple[type[BaseException], ...]:
    """Errors caused by the input or the options: printed as one line, exit code 2."""
    from cfaug.config import ConfigError
    from cfaug.data.io import DataError
    from cfaug.data.labels import LabelError
    from cfaug.data.schema import SchemaError
    from cfaug.data.tasks import TaskError
    from cfaug.registry import RegistryError
    from cfaug.run.rundir import RunDirError

    return (DataError, SchemaError, LabelError, TaskError, ConfigError, RegistryError, RunDirError,
            FileNotFoundError)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
