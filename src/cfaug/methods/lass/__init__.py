"""LASS (large and small models for debiasing opinion summarization): a few counterfactual pairs from a
large model, and a small disentangling autoencoder that learns from them to write many opposite-sentiment
reviews.

Here so far: the Dis-AE network (:mod:`cfaug.methods.lass.disae`), its word vocabulary
(:mod:`cfaug.methods.lass.vocab`), and its resumable training, saving, loading and batched data reproduction
(:mod:`cfaug.methods.lass.training`). The method itself (pair stage, prompt optimisation, filters, the
``lass`` registration and ``cfaug train lass``) is not registered yet."""
