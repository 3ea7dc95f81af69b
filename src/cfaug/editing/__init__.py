"""The editing kit that rewrites a review in place, shared by auto-CAD and CoBA: the opinion lexicon
(:mod:`.lexicon`), tokens and byte-exact edits (:mod:`.text`), negation (:mod:`.negation`), manner adverbs
(:mod:`.manner`), the role a word plays in its sentence (:mod:`.word_roles`), mirrored ratings and scores
(:mod:`.scores`) and a bigram model of the training texts (:mod:`.ngram`). Replacement words come from the
proposers in :mod:`cfaug.proposers`."""
