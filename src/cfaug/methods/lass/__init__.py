"""LASS (large and small models for debiasing opinion summarization): a few counterfactual pairs from a
large model, and a small disentangling autoencoder (:mod:`cfaug.methods.lass.disae`) that learns from them
to write many opposite-sentiment reviews.

The network and its vocabulary are here; the method (pair stage, training stage, data reproduction and
filters) is not registered yet."""
