"""People review counterfactuals: check, fix and curate a run's rewrites, and their decisions flow back.

``cfaug review serve RUN_DIR`` opens a local web app on a run directory; every decision (accepted,
rejected, edited, not flipped, flipped to another label, skipped; undo) is committed to the run's review
store, ``RUN_DIR/review.sqlite`` (:mod:`cfaug.run.decisions`), before the page is told it is saved.
``cfaug review export`` writes the reviewed rows with ``meta.review``; ``cfaug review stats`` counts them
and measures agreement between annotators; Label Studio tasks go out and its annotations come back in.
``cfaug evaluate``, LASS's prompt search and the HTML report read the decisions through
:mod:`cfaug.run.decisions`.

Modules (each imported on its own; this package imports nothing, so ``cfaug --help`` stays fast):

- :mod:`cfaug.review.items`: the run directory's counterfactual rows as review items (ids ``<key>#<n>``),
  with both judges' verdicts, in review order (judges disagree first, then least sure);
- :mod:`cfaug.review.app` and :mod:`cfaug.review.server`: the web app and ``serve``;
  :mod:`cfaug.review.address`: the port (and address) a restarted server keeps;
- :mod:`cfaug.review.export`: reviewed rows in any output format, one decision per item when several
  annotators decided it (majority; ties left out);
- :mod:`cfaug.review.card`: the dataset card (README.md with YAML metadata) beside a Hugging Face or
  Parquet export;
- :mod:`cfaug.review.label_studio`: Label Studio's task import format out, its JSON export in;
- :mod:`cfaug.review.stats`: counts, time per decision and agreement (via :mod:`cfaug.evaluate.agreement`).
"""
