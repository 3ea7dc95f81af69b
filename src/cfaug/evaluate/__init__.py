"""How good counterfactuals are and what they do for a model: the metric suite (:mod:`cfaug.evaluate.suite`),
the downstream harness (:mod:`cfaug.evaluate.downstream`), the HTML report and the human judgements of
``cfaug review``."""
