"""``cfaug llm models``: the language models this machine can run without a server."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("llm", help="local language models (cfaug llm models)",
                       description="Language models run by llama.cpp inside cfaug (no server): pass one to any LLM "
                                   "method with --llm-model NAME, or any GGUF file with --llm-model PATH.gguf.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    models = actions.add_parser("models", help="list the packaged models: installed or not, size, license",
                                description="List the packaged GGUF models: whether each is installed, its file, "
                                            "size and license, and how to install the ones that are not.")
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")
    models.set_defaults(func=run_models)


def run_models(args: argparse.Namespace) -> int:
    import json

    from cfaug.llm.gguf import GGUFError, read_metadata
    from cfaug.llm.gguf_models import PACKAGED, runtime_installed

    runtime = runtime_installed()
    rows = []
    for model in PACKAGED.values():
        path = model.find(False)  # listing assembles nothing
        row = {"name": model.name, "installed": path is not None, "path": str(path) if path else None,
               "size_mb": None, "license": model.license, "about": model.about, "install": model.install}
        if path is not None and not path.exists():
            row["note"] = f"assembled from its package's chunks into {path} on first use"
        elif path is not None:
            try:
                info = read_metadata(path)
                row.update(size_mb=round(info.size / 1e6, 1), chat_template=info.chat_template,
                           trained_context=info.context_length)
            except (GGUFError, OSError) as exc:
                row["problem"] = str(exc)
        rows.append(row)
    if args.json:
        print(json.dumps({"runtime_installed": runtime, "models": rows}, indent=2))
        return 0
    print("llama.cpp runtime (xllamacpp): " + ("installed" if runtime else "not installed: pip install 'cfaug[local-llm]'"))
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        state = f"{r['size_mb']:.0f} MB" if r["size_mb"] is not None else "installed" if r["installed"] \
            else "not installed"
        print(f"{r['name']:<{width}}  {state:<13}  {r['license']:<18}  {r['about']}")
        if not r["installed"]:
            print(f"{'':<{width}}  install: {r['install']}")
        for key in ("problem", "note"):
            if r.get(key):
                print(f"{'':<{width}}  {key}: {r[key]}")
    print("any GGUF file works too: --llm-model PATH.gguf")
    return 0
