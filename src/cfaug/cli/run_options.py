"""Command-line flags generated from the run options' single declaration
(:class:`cfaug.run.options.RunOptions`), and reading them back together with a ``--config`` file."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from cfaug.config import describe_params
from cfaug.run.options import RunOptions


def add_run_arguments(parser: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """One flag per declared run option (grouped as declared). Defaults are None so that a config file
    can fill what the command line leaves unset."""
    groups: dict[str, Any] = {}
    for f in dataclasses.fields(RunOptions):
        meta = f.metadata
        if f.name in skip or meta.get("flag") == "":
            continue
        group = meta.get("group") or "options"
        g = groups.get(group) or groups.setdefault(group, parser.add_argument_group(group))
        flag = meta.get("flag") or "--" + f.name.replace("_", "-")
        info = next(p for p in describe_params(RunOptions) if p.name == f.name)
        help_text = info.help + (f" (default {info.default})" if info.default not in (None, False, True) else "")
        if flag == "--no-progress":
            g.add_argument(flag, dest=f.name, action="store_const", const=False, default=None, help="no progress bars")
        elif isinstance(info.default, bool):
            g.add_argument(flag, dest=f.name, action="store_const", const=True, default=None, help=help_text)
        else:
            typ = int if info.type.startswith("int") else float if info.type.startswith("float") else str
            g.add_argument(flag, dest=f.name, type=typ, default=None, choices=meta.get("choices"),
                           metavar=meta.get("metavar"), help=help_text)


def run_options_from(args: argparse.Namespace, config: dict[str, Any]) -> dict[str, Any]:
    """Run option values: flags first, then the config file's keys of the same names."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(RunOptions):
        value = getattr(args, f.name, None)
        if value is None:
            value = config.get(f.name)
        if value is not None:
            out[f.name] = value
    return out
