"""The documentation site's generated parts (tools/docs): parameter tables and presets come from the method
registry, the CLI reference from the parser, included results sections from the bench files; every
directive in docs/ expands; the nav holds every page; docstrings become markdown for the API reference.
(`mkdocs build --strict` itself runs in .ci/run.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"cfaug_docs_{name}", ROOT / "tools" / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


render = load("render")
griffe_docstrings = load("griffe_docstrings")


def test_parameter_table_lists_every_parameter_of_the_registry():
    from cfaug.config import describe_params
    from cfaug.methods import METHODS

    for entry in METHODS.entries():
        table = render.parameters_table(entry.name)
        params = describe_params(entry.obj.Config)
        assert len(table.splitlines()) == len(params) + 2, entry.name
        for info in params:
            assert f"| `{info.name}` | " in table, (entry.name, info.name)
    table = render.parameters_table("auto-cad")
    assert "| `folds` | `5` | 1 … 100 |" in table
    assert "`drop`, `lm`" in table  # choices of contexts


def test_presets_name_their_values_and_needs():
    text = render.presets_list("auto-cad")
    assert "**`--preset paper`**" in text and "`folds=1`" in text and "Needs: `mlm`." in text
    with pytest.raises(render.DirectiveError, match="unknown method"):
        render.presets_list("no-such-method")


def test_methods_table_has_a_row_per_method():
    from cfaug.methods import METHODS

    table = render.methods_table()
    for entry in METHODS.entries():
        assert f"| `{entry.name}` |" in table


def test_cli_reference_covers_every_command_and_option():
    from cfaug.cli import build_parser, command_parsers
    from cfaug.cli.demo import registered_commands

    text = render.cli_reference()
    for path in registered_commands():
        assert f"## `cfaug {' '.join(path)}`" in text, path
    augment = dict(command_parsers(build_parser()))[("augment",)]
    for action in augment._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                assert flag in text, flag
    # a help text's placeholder shows instead of vanishing as an HTML tag
    assert "&lt;INPUT&gt;" in text or "<INPUT>" not in text


def test_cells_escape_html_and_pipes():
    assert render.cell("a <b>|c\n d") == "a &lt;b&gt;\\|c d"
    assert render.cell("a spec such as {'@judges': 'tfidf.v1'}") == "a spec such as &#123;'@judges': 'tfidf.v1'&#125;"
    assert render.code("x|y") == "`x|y`" and render.code("a`b") == "`` a`b ``"


def test_results_section_is_read_from_the_file(tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "x.results.md").write_text("# T\n\n## Speed\n\n| a | 1.5 |\n\n### Detail\n\nmore\n\n## Next\n\nother\n",
                                        encoding="utf-8")
    monkeypatch.setattr(render, "ROOT", tmp_path)
    text = render.results_section("bench/x.results.md", "Speed", page_src="methods/m.md")
    assert text.startswith("| a | 1.5 |") and "#### Detail" in text and "other" not in text
    assert "[bench/x.results.md](../bench/x.results.md)" in text
    with pytest.raises(render.DirectiveError, match="no section"):
        render.results_section("bench/x.results.md", "Gone")
    with pytest.raises(render.DirectiveError, match="no results file"):
        render.results_section("bench/none.md", "Speed")


def test_a_directive_keeps_the_blank_line_after_it():
    out = render.expand("<!-- cfaug:presets auto-cad -->\n\n## Next\n")
    assert out.endswith("\n\n## Next\n") and out.startswith("- **`--preset paper`**")


def test_unknown_directive_is_an_error():
    with pytest.raises(render.DirectiveError):
        render.expand("<!-- cfaug:nonsense x -->\n")
    assert render.expand("<!-- a comment -->\n") == "<!-- a comment -->\n"


def pages() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_directive_of_the_docs_expands(page):
    src = page.relative_to(ROOT / "docs").as_posix()
    text = page.read_text(encoding="utf-8")
    out = render.expand(text, src)
    assert not list(render.directives(out)), "a directive was left unexpanded"


def test_bench_links_point_at_the_sites_copies():
    text = "see [r](../../bench/auto_cad.results.md#x) and [s](../bench/t2s.results.md)"
    assert render.bench_links(text, "methods/auto-cad.md") == (
        "see [r](../bench/auto_cad.results.md#x) and [s](../bench/t2s.results.md)")
    assert render.bench_links("[s](../bench/t2s.results.md)", "evaluation.md") == "[s](bench/t2s.results.md)"


def nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_the_nav_holds_every_page_and_only_pages_that_exist():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in pages()}
    assert on_disk <= set(listed), f"pages missing from the nav: {sorted(on_disk - set(listed))}"
    for page in listed:
        assert page in on_disk or (page.startswith("bench/") and (ROOT / page).is_file()), page


def test_docstrings_become_markdown():
    doc = "Run :func:`run_augment` (see :class:`~cfaug.config.ConfigError`).\n\n" \
          "    >>> import cfaug  # doctest: +SKIP\n    >>> cfaug.augment(\n    ...     'x')\n\nAfter."
    out = griffe_docstrings.markdown_docstring(doc)
    assert "Run `run_augment` (see `ConfigError`)." in out
    assert "    ```pycon\n    >>> import cfaug\n    >>> cfaug.augment(\n    ...     'x')\n    ```" in out
    assert out.endswith("After.")
