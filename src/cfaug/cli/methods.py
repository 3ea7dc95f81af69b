"""``cfaug methods``: list the registered generation methods."""

from __future__ import annotations

import argparse

from cfaug.config import describe_params


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("methods", help="list generation methods", description="List registered methods "
                       "with their versioned names, tasks and a one-line description; -v adds parameters and "
                       "presets (--preset NAME of 'cfaug augment').")
    p.add_argument("-v", "--verbose", action="store_true", help="also list each method's parameters and their documentation")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cfaug.methods import METHODS

    for entry in METHODS.entries():
        cls = entry.obj
        flags = [{"batch": "batches", "item": "items"}[cls.work_unit]] + (["trains"] if cls.trains else [])
        print(f"{entry.name:<22} [{', '.join(cls.supported_tasks)}] ({', '.join(flags)})  {entry.description}")
        if args.verbose:
            for info in describe_params(cls.Config):
                print(f"    {info.line()}")
            for name, preset in cls.presets.items():
                values = ", ".join(f"{k}={v}" for k, v in preset.params.items())
                needs = "".join(f"; needs {k}" for k in preset.needs)
                print(f"    preset {name}: {preset.description} ({values}{needs})")
    return 0
