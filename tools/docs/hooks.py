"""MkDocs hooks of cfaug's documentation site (``hooks:`` in mkdocs.yml).

- ``on_files``: the benchmark results files and ``bench/README.md`` become pages of the site under
  ``bench/``, so that the docs can link the file behind every figure they quote.
- ``on_page_markdown``: ``<!-- cfaug:... -->`` directives are expanded (parameter tables from the method
  registry, the CLI reference from the parser, sections of results files; see ``render.py``), and links to
  ``../bench/*.md`` point at those pages.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import render
from mkdocs.structure.files import File, Files, InclusionLevel


def on_files(files: Files, config, **kwargs) -> Files:
    bench = render.ROOT / "bench"
    for path in sorted(bench.glob("*.md")):
        # bench/README.md is in the nav; the results files are reached through its links and the docs' own
        inclusion = InclusionLevel.INCLUDED if path.name == "README.md" else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, f"bench/{path.name}", content=path.read_text(encoding="utf-8"),
                                    inclusion=inclusion))
    return files


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    src = page.file.src_uri
    if src.startswith("bench/"):
        return markdown
    return render.bench_links(render.expand(markdown, src), src)
