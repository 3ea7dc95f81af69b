"""The ``cfaug`` command. Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds its parser and sets ``func`` to the handler (``handler(args) -> int`` exit code).

Every parser is a :class:`CommandParser`: no option may be abbreviated (``--llm-api-key`` is never taken
for ``--llm-api-key-env``), an API key is never accepted as an option, and a value that looks like a key
is never echoed in an error message."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from cfaug import __version__

#: Modules that provide subcommands, in the order ``cfaug --help`` lists them.
COMMAND_MODULES = (
    "cfaug.cli.augment",
    "cfaug.cli.train",
    "cfaug.cli.demo",
    "cfaug.cli.methods",
    "cfaug.cli.parts",
    "cfaug.cli.prompts",
    "cfaug.cli.llm",
    "cfaug.cli.prompt_search",
    "cfaug.cli.evaluate",
    "cfaug.cli.downstream",
    "cfaug.cli.compare",
    "cfaug.cli.report",
    "cfaug.cli.review",
)


#: An error message printed by :func:`main` is cut to this many characters (its quotations of user data are
#: already short, see :func:`cfaug.quoting.quote`; this bounds the message as a whole).
MESSAGE_CHARS = 4000

#: Options that would hand cfaug an API key on the command line (``--llm-api-key``, ``--api-key``,
#: ``--openai-api-key``...): refused, whatever the command. ``--llm-api-key-env`` names a variable instead.
_KEY_OPTION = re.compile(r"^--(?:[\w-]*[-_])?(?:api[-_]?key|key|token|secret)(?:=|$)", re.IGNORECASE)


class CommandParser(argparse.ArgumentParser):
    """The parser of ``cfaug`` and of each of its commands (subparsers inherit the class).

    - Options are never abbreviated (``allow_abbrev=False``): a prefix such as ``--llm-api-key`` is an
      unknown option, not ``--llm-api-key-env``.
    - An option that would carry an API key (``--llm-api-key``, ``--api-key``...) is refused with a message
      naming it and saying that the key goes in an environment variable named by ``--llm-api-key-env``;
      the value given is not shown.
    - Every other error message has key-shaped words masked (:func:`cfaug.llm.redact.mask_keys`)."""

    def __init__(self, *args: Any, allow_abbrev: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        args = list(sys.argv[1:] if args is None else args)
        for arg in args:
            if arg == "--":
                break
            if _KEY_OPTION.match(arg):
                flag = arg.split("=", 1)[0]
                self.error(f"{flag} is not an option: cfaug never takes an API key on the command line. Put "
                           "the key in an environment variable and pass the variable's name with "
                           "--llm-api-key-env VAR (default OPENAI_API_KEY); the value given is not shown")
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        from cfaug.llm.redact import mask_keys
        from cfaug.quoting import shorten

        super().error(shorten(mask_keys(message), MESSAGE_CHARS))


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
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
        from cfaug.quoting import shorten

        print(f"cfaug: error: {shorten(str(exc), MESSAGE_CHARS)}", file=sys.stderr)
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
