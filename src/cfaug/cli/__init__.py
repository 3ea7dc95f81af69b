"""The ``cfaug`` command. Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds its parser and sets ``func`` to the handler (``handler(args) -> int`` exit code).

Every parser is a :class:`CommandParser`: no option may be abbreviated (``--llm-api-key`` is never taken
for ``--llm-api-key-env``), an API key is never accepted as an option, and a value that looks like a key
is never echoed in an error message."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
from collections.abc import Iterator, Sequence
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

#: Words that make an unknown option key-like (``--llm-api-ke``, ``--hf-tokn``, ``--llm-passwd``,
#: ``--auth-header``...): the value given with it is never shown in a message, whatever it looks like. So is
#: the value of an unknown option that begins a known key-like one (``--llm-a`` of ``--llm-api-key-env``).
_KEYISH_WORDS = re.compile(r"key|tok|secret|pass|pwd|auth|cred|bearer|cookie|session|priv|api", re.IGNORECASE)


class CommandParser(argparse.ArgumentParser):
    """The parser of ``cfaug`` and of each of its commands (subparsers inherit the class).

    - Options are never abbreviated (``allow_abbrev=False``): a prefix such as ``--llm-api-key`` is an
      unknown option, not ``--llm-api-key-env``.
    - An option that would carry an API key (``--llm-api-key``, ``--api-key``...) is refused with a message
      naming it and saying that the key goes in an environment variable named by ``--llm-api-key-env``;
      the value given is not shown.
    - The value given with an unknown key-like option (its name holds ``key``, ``token``, ``secret``,
      ``pass``, ``auth``...: ``--llm-api-ke VALUE``, ``--llm-api-keyenv=VALUE``) is never shown, whatever
      it looks like: not in "unrecognized arguments", nor where argparse took it for something else (an
      input path, a command name).
    - Every other error message has key-shaped words masked (:func:`cfaug.llm.redact.mask_keys`)."""

    def __init__(self, *args: Any, allow_abbrev: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)
        #: values given with unknown key-like options, masked in every message of this parser
        self._hidden_values: set[str] = set()

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
        self._hidden_values |= self.key_like_values(args)
        namespace, extras = super().parse_known_args(args, namespace)
        return namespace, [self._hide(extra) for extra in extras]

    def known_options(self) -> set[str]:
        """The option strings of this parser and of every command under it."""
        known = set(self._option_string_actions)
        for _, child in command_parsers(self):
            known |= set(child._option_string_actions)
        return known

    def key_like_values(self, args: Sequence[str]) -> set[str]:
        """The values ``args`` give with options that no parser here knows and whose name is key-like
        (:data:`_KEYISH_WORDS`, or the start of a known key-like option): the part after ``=``, else the
        next argument (unless it is a known option)."""
        known = self.known_options()
        keyish = [k for k in known if _KEYISH_WORDS.search(k)]
        values: set[str] = set()
        for i, arg in enumerate(args):
            if arg == "--":
                break
            if not arg.startswith("-") or arg == "-":
                continue
            flag, eq, value = arg.partition("=")
            if flag in known or not (_KEYISH_WORDS.search(flag)
                                     or (flag.startswith("--") and any(k.startswith(flag) for k in keyish))):
                continue
            if eq:
                values.add(value)
            elif i + 1 < len(args) and args[i + 1] != "--" and args[i + 1] not in known:
                values.add(args[i + 1])
        values.discard("")
        return values

    def _hide(self, text: str) -> str:
        """``text`` with every value of :attr:`_hidden_values` that stands alone in it (between spaces,
        quotes, brackets or after ``=``) replaced by ``[redacted]``."""
        from cfaug.llm.redact import MASK

        for value in sorted(self._hidden_values, key=len, reverse=True):
            text = re.sub(r"(?<![^\s'\"=(\[,])" + re.escape(value) + r"(?![^\s'\"),\]])", MASK, text)
        return text

    def error(self, message: str) -> NoReturn:
        from cfaug.llm.redact import mask_keys
        from cfaug.quoting import shorten

        super().error(shorten(mask_keys(self._hide(message)), MESSAGE_CHARS))


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


#: The exit code of a command stopped by Ctrl-C (SIGINT), and by SIGTERM (what ``timeout``, ``docker stop``
#: and batch schedulers send): 128 + the signal's number, as a shell reports a process the signal ended.
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def main(argv: list[str] | None = None) -> int:
    """Run the ``cfaug`` command given by ``argv`` (default: the process's arguments); return its exit code.

    While the command runs, SIGTERM stops it as Ctrl-C does (see :func:`sigterm_as_interrupt`): it stops
    cleanly, says "interrupted" and returns :data:`EXIT_TERMINATED` (Ctrl-C: :data:`EXIT_INTERRUPTED`).
    An error the user can fix is printed as one line and returns 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    with sigterm_as_interrupt() as received:
        try:
            return int(args.func(args) or 0)
        except KeyboardInterrupt:
            print("interrupted; rerun the same command to resume", file=sys.stderr)
            return EXIT_TERMINATED if received else EXIT_INTERRUPTED
        except (CliError, *user_errors()) as exc:
            from cfaug.quoting import shorten

            print(f"cfaug: error: {shorten(str(exc), MESSAGE_CHARS)}", file=sys.stderr)
            return 2


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM under :func:`sigterm_as_interrupt`: a
    :class:`KeyboardInterrupt`, so every clean-up that Ctrl-C runs runs too."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[list[int]]:
    """Within the block, SIGTERM is handled as Ctrl-C: it goes where SIGINT goes when something has its own
    SIGINT handler (an asyncio event loop cancels its main task, then raises :class:`KeyboardInterrupt`),
    else :class:`Terminated` is raised. Yields a list that holds the signal's number once one arrived.
    The previous handler is put back when the block ends. Outside the main thread (where no handler can
    be set) the block runs unchanged."""
    import signal
    import threading

    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        received.append(signum)
        on_int = signal.getsignal(signal.SIGINT)
        if on_int in (signal.default_int_handler, signal.SIG_IGN, signal.SIG_DFL, None):
            raise Terminated()
        signal.raise_signal(signal.SIGINT)  # that handler stops the work exactly as Ctrl-C would

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield received
    finally:
        if previous is not None:  # (None: a handler not set from Python, which cannot be put back)
            signal.signal(signal.SIGTERM, previous)


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
