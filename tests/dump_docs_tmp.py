"""Temporary (not collected): runs the doc examples like test_examples_run, dumping every block's output."""
import doctest, json, os
from pathlib import Path
import pytest
from test_docs_examples import ROOT, runnable, run_shell_block, check_shown_output, workdir, shared_caches, fake_rewrite  # noqa

OUT = Path(os.environ.get("DUMP_DIR", "/tmp/docsdump"))

@pytest.mark.parametrize("doc", os.environ.get("DUMP_DOCS", "README.md").split(","))
def test_dump(doc, workdir, fake_llm, capsys):
    namespace = {"__name__": "__docs__"}
    printed = ""
    log = []
    with fake_llm.FakeLLM(default_reply=fake_rewrite) as server:
        for block in runnable(ROOT / doc):
            if block.output:
                try:
                    check_shown_output(block, printed)
                    log.append(f"=== OUTPUT BLOCK line {block.line}: OK")
                except AssertionError as e:
                    log.append(f"=== OUTPUT BLOCK line {block.line}: MISMATCH {e}")
                continue
            capsys.readouterr()
            err = ""
            try:
                if block.lang == "python":
                    if ">>>" in block.code:
                        test = doctest.DocTestParser().get_doctest(block.code, namespace, f"{block.doc}:{block.line}", block.doc, block.line)
                        said = []
                        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                        runner.run(test, out=said.append, clear_globs=False)
                        namespace.update(test.globs)
                        if runner.failures:
                            err = "DOCTEST FAIL\n" + "".join(said)
                    else:
                        exec(compile(block.code, f"{block.doc}:{block.line}", "exec"), namespace)
                else:
                    run_shell_block(block, server.base_url)
            except BaseException as e:  # noqa
                err = f"EXCEPTION {type(e).__name__}: {e}"
            captured = capsys.readouterr()
            printed = captured.out + captured.err
            log.append(f"=== BLOCK line {block.line} ({block.lang}) {err}\n--- code:\n{block.code}\n--- printed:\n{printed}")
    (OUT / (doc.replace('/', '__') + ".log")).write_text("\n".join(log))
