"""LASS (large and small models for debiasing opinion summarization): a few counterfactual pairs from a
large model, and a small disentangling autoencoder that learns from them to write many opposite-sentiment
reviews.

* :mod:`cfaug.methods.lass.pairs`: ``lass-pairs``, the LLM that writes the pairs (the paper's instruction,
  k demonstrations, temperature 0.2);
* :mod:`cfaug.methods.lass.disae`, :mod:`cfaug.methods.lass.training`: the Dis-AE network, its resumable
  training, saving, loading and batched reproduction, built on the shared :mod:`cfaug.seq2seq` parts (a
  word vocabulary; a latent-conditioned LSTM decoder with batched greedy and beam search);
* :mod:`cfaug.methods.lass.prompt_search`: the paper's prompt optimisation (Algorithm 1) with a human's marks
  or an automatic proxy (``cfaug prompt-search``);
* :mod:`cfaug.methods.lass.method`: ``lass``, training stage and mass reproduction with the perplexity and
  sentiment filters.
"""

from cfaug.methods.lass.method import LASS, LASSConfig
from cfaug.methods.lass.pairs import LassPairs, LassPairsConfig

__all__ = ["LASS", "LASSConfig", "LassPairs", "LassPairsConfig"]
