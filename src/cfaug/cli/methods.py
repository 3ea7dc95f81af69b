"""``cfaug methods``: list the registered generation methods."""

from __future__ import annotations

import argparse
import dataclasses


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("methods", help="list generation methods", description="List registered methods "
                       "with their versioned names, tasks and a one-line description.")
    p.add_argument("-v", "--verbose", action="store_true", help="also list each method's parameters")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cfaug.methods import METHODS

    for entry in METHODS.entries():
        cls = entry.obj
        print(f"{entry.name:<22} [{', '.join(cls.supported_tasks)}]  {entry.description}")
        if args.verbose:
            for f in dataclasses.fields(cls.Config):
                if f.default is not dataclasses.MISSING:
                    default = f.default
                elif f.default_factory is not dataclasses.MISSING:
                    default = f.default_factory()
                else:
                    default = "(required)"
                print(f"    {f.name} = {default!r}")
    return 0
