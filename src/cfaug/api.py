"""The Python API. It mirrors ``cfaug augment``: the same options (declared once in
:class:`cfaug.run.options.RunOptions`), the same output contract."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from cfaug.run.options import RunOptions
from cfaug.run.runner import RunSummary, run


def run_augment(data: Any, method: str | None = None, *, output: str | Path | None = None,
                **options: Any) -> tuple[RunSummary, list[dict[str, Any]]]:
    """Run ``method`` over ``data`` and return (summary, output rows). Keyword arguments are the run
    options (see :class:`~cfaug.run.options.RunOptions`: ``task``, ``target``, ``text_col``, ``params``,
    ``seed``, ``run_dir``, ``engine``, ``workers``, ``device``...); each is checked, and an unknown name or a
    value out of range raises :class:`~cfaug.config.ConfigError`.

    The summary says how the run went, where the command would use its exit code:

    - ``summary.complete`` is False for a run that stopped early (LLM server unreachable, budget spent):
      it returns what it has, ``summary.stop_reason`` says why and ``summary.items_not_done`` how many
      items are left; running it again with the same ``run_dir`` resumes;
    - ``summary.items_failed`` counts the items that raised (an unreadable LLM answer, a request the
      server refused...), ``summary.first_error`` holds the first one's error (each is in the run
      directory's ``results.jsonl``), and ``summary.counterfactuals_written`` is 0 when nothing was written;
      ``retry_failed=True`` runs the failed items again;
    - ``summary.without_reasons`` counts why items got no counterfactual, one reason per item (as the method
      said, or the filters that rejected every candidate), so it adds up to ``items_without_counterfactual``.

    A configuration error that would fail every item (a :class:`~cfaug.config.ConfigError`, e.g. an
    attribution method the given classifier cannot be explained with) is raised, before any item when the
    method can tell, else by the first item it affects. An output that cannot be written raises
    :class:`~cfaug.run.runner.OutputError`, before any work when the location is wrong."""
    if method is not None:
        options["method"] = method
    if "levels" in options and isinstance(options["levels"], (tuple, list)):
        options["levels"] = ",".join(map(str, options["levels"]))
    opts = RunOptions.from_mapping({k: v for k, v in options.items() if v is not None or k == "method"})
    if opts.run_dir is None:
        with tempfile.TemporaryDirectory(prefix="cfaug-run-") as tmp:
            opts.run_dir = tmp
            return run(data, opts, output=output, log=None if opts.progress else (lambda m: None))
    return run(data, opts, output=output)


def augment(data: Any, method: str | None = None, **options: Any) -> Any:
    """Make counterfactuals for ``data`` and return them as a ``datasets.Dataset``.

    ``data`` is a path (CSV, TSV, JSONL, Parquet, or a ``save_to_disk`` folder), a ``datasets.Dataset``,
    a pandas DataFrame or a list of dicts. Keyword arguments are the run options of :func:`run_augment`
    (``task``, ``target``, ``text_col``, ``label_col``, ``run_dir``, ``params``, ``seed``, ``engine``...).
    Rows follow the output contract of :mod:`cfaug.data.contract`; ``meta`` is a JSON string column.
    Failed items, and a run that stopped early, are reported with a :class:`RuntimeWarning` (the rows of
    the other items are returned); :func:`run_augment` returns the whole summary.

    auto-CAD (the default method) trains its classifier on ``data`` itself together with a shipped sample
    of 20,000 labelled review texts (``params={"classifier_background": "none"}`` leaves it out), so a few
    rows, or rows of one label, work; labelled data of your own can take the input's place
    (``params={"classifier_data": FILE}`` or ``train_data=FILE``).

    >>> import cfaug  # doctest: +SKIP
    >>> ds = cfaug.augment("reviews.tsv", text_col="Text", label_col="Sentiment")  # doctest: +SKIP
    >>> ds = cfaug.augment([{"text": "A great, moving film.", "label": "positive"}],
    ...                    params={"classifier_data": "reviews.tsv"})  # doctest: +SKIP
    """
    import json

    import datasets

    options.setdefault("progress", False)
    summary, rows = run_augment(data, method, **options)
    if summary.items_failed or not summary.complete:
        import warnings

        said = [f"{summary.items_failed} of {summary.items} items failed (first: {summary.first_error})"
                ] if summary.items_failed else []
        if not summary.complete:
            said.append(f"the run stopped early ({summary.stop_reason}); {summary.items_not_done} items not done")
        warnings.warn(f"cfaug.augment: {'; '.join(said)}; run_augment returns the whole summary",
                      RuntimeWarning, stacklevel=2)
    # column-wise, so that a run with nothing to write still has the contract's columns
    return datasets.Dataset.from_dict(
        {c: [json.dumps(r.get(c)) if c == "meta" else r.get(c) for r in rows] for c in summary.columns})


def train(method: str, train_data: Any, output: str | Path, **options: Any) -> Path:
    """Run a method's training stage on ``train_data`` and save the fitted model in ``output`` (a folder
    ``cfaug augment --model`` and ``run_augment(..., model=...)`` accept). Options as for :func:`run_augment`."""
    from cfaug.run.training_command import train_model

    return train_model(method, train_data, output, **options).path


def compare(data: Any, methods: Any = None, output: str | Path | None = None, **options: Any) -> Any:
    """Compare methods on ``data`` and return the summary as a pandas DataFrame, one row per method in
    ranked order (the references of ``reference=`` last); it mirrors ``cfaug compare`` and writes the same
    folder ``output`` (``summary.json``, ``summary.md``, ``report.html``, one run directory per method under
    ``runs/``). ``methods``: a list or a comma-separated string.

    Keyword arguments: the run options of :func:`run_augment` shared by every method (``task``,
    ``text_col``, ``label_col``, ``label_map``, ``preset``...), ``params`` (method parameters, given to every
    method that declares them), ``method_params`` (``{"auto-cad": {...}}``), ``limit``, ``seed``, the judge
    (``judge_train=FILE`` or ``judge=DIR``; neither: cross-fitted on the data), ``test``, ``challenge``,
    ``out_of_domain`` and ``reference`` (``{"name": FILE}``), ``dev``, ``classifier``, ``downstream_seeds``,
    ``budget`` (USD for the whole comparison), the LLM settings (``llm_base_url``, ``llm_model``, ... or
    ``llm={...}``), the evaluation settings (``embedding=False``, ``bertscore=False``, ``ngram_reference``...),
    ``progress`` and ``report`` (default True: write ``report.html``).

    A method that needs what was not given (an LLM endpoint, a model path) has status ``skipped`` and its
    reason; one that failed ``failed``: neither raises. ``frame.attrs`` holds ``out_dir``, ``exit_code``
    (as the command's), ``ranking_rule`` and ``judge``. A rerun with the same ``output`` reuses every
    finished method.

    >>> import cfaug  # doctest: +SKIP
    >>> df = cfaug.compare("reviews.tsv", methods="auto-cad,coba,zero-shot", output="cmp", limit=100)  # doctest: +SKIP
    """
    from cfaug.compare import compare as run_compare

    return run_compare(data, methods, output, **options)
