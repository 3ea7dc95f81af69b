"""Aspect sentiment triplet extraction (the ``aste`` task): exact-match triplet scores
(:mod:`cfaug.aste.metrics`) and a Grid Tagging Scheme model, a small BiLSTM trained on CPU that by default
also reads fixed vectors of the packaged MiniLM encoder (:mod:`cfaug.aste.grid_tagger`). The data type is
:mod:`cfaug.data.aste`. Importing this package does not import torch; the model does when it trains or
loads."""

from cfaug.aste.grid_tagger import (
    TAGS,
    GridTagger,
    GridTaggerConfig,
    ScoredTriplet,
    decode_grid,
    tag_grid,
    triplet_confidence,
)
from cfaug.aste.metrics import prf, term_scores, triplet_scores

__all__ = ["TAGS", "GridTagger", "GridTaggerConfig", "ScoredTriplet", "decode_grid", "prf", "tag_grid",
           "term_scores", "triplet_confidence", "triplet_scores"]
