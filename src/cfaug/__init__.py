"""cfaug: counterfactual and counterbias training data.

Quick use::

    import cfaug
    out = cfaug.augment("reviews.tsv", text_col="Text", label_col="Sentiment")   # a datasets.Dataset
"""

__version__ = "0.1.0"

__all__ = ["__version__", "augment", "compare"]


def __getattr__(name: str):
    # ``augment`` pulls in the runner, the methods and their libraries; importing it on first use keeps
    # ``import cfaug`` (and so ``cfaug --help``) light.
    if name == "augment":
        from cfaug.api import augment

        return augment
    if name == "compare":
        # the package cfaug.compare, callable as cfaug.compare(data, methods=..., output=...): see cfaug.api.compare
        import cfaug.compare

        return cfaug.compare
    raise AttributeError(f"module 'cfaug' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"augment", "compare"})
