"""cfaug: counterfactual and counterbias training data.

Quick use::

    import cfaug
    out = cfaug.augment("reviews.tsv", text_col="Text", label_col="Sentiment")   # a datasets.Dataset
"""

__version__ = "0.1.0"

from cfaug.api import augment  # noqa: E402

__all__ = ["__version__", "augment"]
