"""Small sequence-to-sequence parts trained from scratch: a word vocabulary (:mod:`.vocab`) and a
latent-conditioned LSTM decoder with batched greedy and beam search (:mod:`.decoding`). LASS's Dis-AE and
the opinion summarizer of the downstream harness are built from them."""
