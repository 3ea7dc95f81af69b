"""CoBA: counterbias augmentation from semantic triples (Choi et al.).

A counterbias rewrite keeps the original's spurious words and meaning but carries another label, and may
change the structure. Recipe:

1. **Triples**: the text becomes (subject, predicate, object) triples, sentence by sentence: offline from
   the bundled dependency parser (:mod:`cfaug.nlp.triples`), or with an LLM (prompt ``coba-extract-*``).
2. **Principal and spurious words**: an ensemble of classifiers M (trained on the input in the training
   stage: TF-IDF logistic regression, a BiLSTM and a CNN by default), each explained by LIME, Integrated
   Gradients and Shapley value sampling, votes with its top-k words (:mod:`cfaug.importance.ensemble`).
   Words with a majority of votes are principal (``tau_rule=more-than``, the ``paper`` preset: more than
   (V + 1) / 2 of the V voters), the other named words spurious; a user list (e.g. the WinoBias gender
   words) can be added to the spurious ones.
3. **Triple manipulation** (:mod:`.categories`): spurious triples are kept, principal triples are edited
   toward the target (offline: opinion-lexicon replacements in the same word class and negation, see
   :mod:`.offline`; LLM: prompt ``coba-modify-<task>``), normal triples are permuted and each deleted with
   ``delete_prob``; gendered words are swapped. A text with no principal triple, or whose principal
   triples the modification left unchanged, gets no rewrite (the reason is counted in the run summary):
   only an edit of what carries the label may put the target label on it.
4. **Reconstruction**: offline, the edited original sentences in the new order; LLM, prompt
   ``coba-reconstruct-*`` (``candidates`` answers, each from its own triple order).
5. **Label check**: an independent judge scores every rewrite (``meta.judge``, ``meta.confidence``);
   ``require_flip`` drops those it does not give the target.
"""

from cfaug.methods.coba.method import CoBA, CoBAConfig

__all__ = ["CoBA", "CoBAConfig"]
