"""auto-CAD's settings: its parameters (:class:`AutoCADConfig`, ``-p key=value`` on the command line), the
``paper`` preset (Yang et al.'s setup), and what the training stage's warnings about weak training data
quote: the thresholds they apply and both spellings (command line / Python API) of each remedy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.methods.base import Preset

NAME = "auto-cad.v1"

#: both spellings of each remedy for weak training data (command line / Python API)
OTHER_DATA = ('-p classifier_data=FILE / params={"classifier_data": FILE} (or --train-data FILE / '
              'train_data=FILE)')
TRAINED_CLASSIFIER = ('-p classifier=hf -p classifier_model=DIR / params={"classifier": "hf", '
                      '"classifier_model": DIR}')
MIN_TRAINING_ROWS = 200  #: below this, C trained on the input learns few opinion words
MIN_LABEL_SHARE = 0.2  #: a label under this fraction of its even share (10% of two labels) is too rare for C


@dataclass
class AutoCADConfig:
    """Parameters of auto-CAD (``-p key=value`` on the command line)."""

    classifier: Any = param("tfidf", "classifier C: tfidf (trained by cfaug), hf (classifier_model), or a judge spec "
                            "such as {'@judges': 'tfidf.v1', ...}", fit=True)
    classifier_model: str | None = param(None, "classifier=hf: local folder of a Hugging Face sequence classifier", fit=True)
    classifier_labels: str | None = param(None, "classifier=hf: its output labels in order, comma-separated", fit=True)
    classifier_data: str | None = param(None, "classifier=tfidf: a labelled dataset to train C on instead of the "
                                        "training data (no cross-fitting then)", fit=True)
    classifier_background: str = param(
        "general", "classifier=tfidf: labelled texts added to C's training data (every fold, and classifier_data): "
        "general (shipped: 10,000 Yelp review sentences and 10,000 SST-2 movie-review phrases, half of each label; "
        "sentiment tasks with the labels negative/positive), a labelled file, or none (C reads only the training "
        "data). C trained on a few hundred reviews knows few opinion words; the sample makes its importance "
        "scores and confidence steadier and lets a one-label file run", fit=True)
    bigram_background: bool = param(False, "the bigram model that judges how a replacement fits its neighbours, "
                                    "and whose words the lexicon proposer offers, also reads the "
                                    "classifier_background texts: more proposals for a small input, but from "
                                    "other domains ('cruel stereotypes' -> 'delicious stereotypes' in a film "
                                    "review; see docs/methods/auto-cad.md)", fit=True)
    folds: int = param(5, "C trained on the training data is cross-fitted: each text is judged by a model not "
                       "trained on it", min=1, max=100, fit=True)
    mlm: str | None = param(None, "local path of a masked LM proposing replacements (default: lexicon ranker)", fit=True)
    pairs: str | None = param(None, "paired counterfactual file to mine substitutions from: rows sharing a pair id "
                              "(batch_id, as in CAD) or a cfaug output with original_ columns", fit=True)
    encoder: str | None = param(None, "local sentence-transformers path (default: packaged all-MiniLM-L6-v2)", fit=True)
    variants: str = param("rep", "counterfactuals to emit, comma-separated: rep (REP-CT), rm (RM-CT), syn (REP-CT "
                          "followed by synonym substitution of the words still supporting the source label until C "
                          "flips; needs mlm), e.g. rm,rep")
    context_samples: int = param(4, "sampled contexts per term for Eq. 1 (plus the full sentence)", min=0, max=100)
    contexts: str = param("drop", "how Eq. 1's contexts are sampled: drop (random sub-sequences of the sentence) or "
                          "lm (the words around the term redrawn from a bigram model of the training texts, as in "
                          "sampling-and-occlusion)", choices=("drop", "lm"))
    context_keep: float = param(0.8, "contexts=drop: probability that a context token is kept in a sample",
                                min=0.0, max=1.0)
    context_window: int = param(10, "contexts=lm: words redrawn on each side of the term", min=1, max=100)
    rm_terms: str = param("until-flip", "RM-CT: until-flip (each sentence's most important term, then the others, "
                          "until C flips) or top-per-sentence (each sentence's most important term, once)",
                          choices=("until-flip", "top-per-sentence"))
    rep_selection: str = param("score", "REP-CT's choice of replacement: score (proposer's fit + classifier_weight x "
                               "C's movement, proposals against the original sentence) or eq1 (terms edited one after "
                               "another, each proposal made on the sentence as edited so far and chosen by its Eq. 1 "
                               "importance for the target label)", choices=("score", "eq1"))
    max_synonyms: int = param(5, "variants with syn: words substituted by synonyms at most", min=0, max=100)
    synonym_min_similarity: float = param(0.5, "variants with syn: embedding cosine a synonym must have with the "
                                          "word it replaces", min=-1.0, max=1.0)
    top_candidates: int = param(20, "replacement candidates scored in context per term", min=1, max=1000)
    replace: str = param("all", "REP-CT: all causal terms, until-flip (stop at the first flip) or weighed (the terms "
                         "whose Eq. 1 importance says they support the source label, and no other: a word C does not "
                         "weigh stays as written even when C has not flipped)",
                         choices=("all", "until-flip", "weighed"))
    classifier_weight: float = param(2.0, "weight of the classifier's movement when choosing a replacement", min=0.0)
    lm_weight: float = param(0.15, "weight of the bigram/MLM context fit", min=0.0)
    antonym_weight: float = param(3.0, "bonus for a word from the built-in antonym table", min=0.0)
    pairs_weight: float = param(2.0, "bonus for substitutions mined from --pairs", min=0.0)
    min_target_prob: float = param(0.9, "C's probability of the target RM-CT/REP-CT edit toward: they keep editing "
                                   "until it is reached (with require_flip=false it is also the level "
                                   "meta.own_judge.flipped reports)", min=0.0, max=1.0)
    require_flip: bool = param(True, "precision first: a rewrite is written only when C gives it the target with "
                               "at least flip_min_prob and the completeness check passes (no opinion of the "
                               "source's polarity left); false: every rewrite is written with its graded "
                               "confidence (meta.confidence, C's probability of the target), as before")
    flip_min_prob: float = param(0.5, "require_flip: C's probability of the target a written rewrite needs (chosen "
                                 "on dev data so that an independent judge agrees with 90% of written rows; see "
                                 "docs/concepts.md)", min=0.0, max=1.0)
    flip_max_words: int | None = param(60, "require_flip: a text of more words than this (a review) is written "
                                       "whatever C says, with its graded confidence: an independent judge agrees "
                                       "with 94.7% of CAD-IMDB dev rewrites unfiltered "
                                       "(bench/auto_cad_dev.results.md), and the filter drops whole reviews from "
                                       "the training data; none: every text is filtered", min=1)
    completeness: bool = param(True, "require_flip: also drop a rewrite that leaves an opinion of the source's "
                               "polarity standing, read clause by clause with the opinion lexicon and a judge "
                               "(\"always friendly ... and always have shitty service !\")")
    keep: int = param(1, "rewrites written per row and variant: the best of the candidates (alternatives) by the "
                      "shared choice step (an independent judge's P(target), n-gram fluency, closeness)", min=1,
                      max=10)
    max_edit_rate: float | None = param(0.3, "filter: token edit rate at most this (none = no limit); the "
                                        "95th percentile of human CAD-IMDB dev rewrites is 0.32", min=0.0)
    max_edit_rate_short: float | None = param(0.5, "filter: token edit rate of a text of at most 20 tokens (a "
                                              "sentence with three opinion words needs three edits; human rewrites "
                                              "of such sentences change 0.24 of the tokens on average, 0.50 at the "
                                              "90th percentile)", min=0.0)
    min_edits: int = param(3, "filter: token edits a rewrite may always make, whatever max_edit_rate says (a short "
                           "sentence needs them: 'bad service .' -> 'good service .' is 1 edit of 3 tokens, 'fridge "
                           "does n't work .' -> 'fridge works .' 3 of 5)", min=0)
    min_similarity: float = param(0.0, "filter: edited-sentence embedding similarity at least this (0 = off; e.g. 0.7)",
                                  min=0.0, max=1.0)
    min_moverscore: float = param(0.0, "filter: MoverScore against the original above this (0 = off; the paper "
                                  "keeps > 0.55)", min=0.0, max=1.0)
    moverscore_model: str | None = param(None, "min_moverscore: local encoder folder for the MoverScore (default: "
                                         "the packaged MiniLM's token vectors)")
    negator_removal: str = param("idiomatic", "how a negator is removed: idiomatic (do-support collapses, 'didn't "
                                 "like' -> 'liked', and the clause's any-word turns positive, 'never saw anything' -> "
                                 "'saw something') or minimal (the negator alone goes: 'did like', 'saw anything')",
                                 choices=("idiomatic", "minimal"))
    negations: str = param("all", "negators RM-CT and REP-CT may remove: all (also bare ones the classifier finds "
                           "important, which can change a fact: 'I have not read the book'), or opinion (only "
                           "those negating an opinion word: 'not good'; fewer flips on CAD-IMDB)",
                           choices=("all", "opinion"))
    phrase_min_count: int = param(3, "--pairs: a mined phrase substitution ('a must see' -> 'a must miss') is "
                                  "applied when the pairs show it at least this often", min=1)
    alternatives: int = param(3, "REP-CT candidates per row: the k-th uses each word's k-th best option "
                              "(replacement or negation); the choice step writes the best keep of them", min=1,
                              max=10)
    negation_weight: float = param(0.0, "REP-CT may negate the opinion word's predicate instead of replacing the "
                                   "word ('is worth' -> 'is not worth', 'loved' -> 'did not love'): the prior of that "
                                   "choice, weighed against the replacement's prior, bigram fluency and classifier "
                                   "movement (0 = never; e.g. 3)", min=0.0)
    content_words: str = param("important", "opinion words the tagger reads as nouns or verbs are as often topical "
                               "('murder', 'knife', 'warned') as evaluative ('waste', 'recommend'): important edits "
                               "one only when C's Eq. 1 importance says it supports the source label (> 0); all edits "
                               "every one. Adjectives, adverbs and adjectival participles are always edited; needs "
                               "the tagger", choices=("important", "all"))
    content_min_share: float = param(0.0, "content_words=important: a noun or verb C weighs is edited only when its "
                                     "Eq. 1 importance is also at least this share of the text's most important "
                                     "term's (e.g. 0.25: a plot noun such as 'killer' that weighs little next to "
                                     "'awful' stays; fewer facts changed, a little less label strength)",
                                     min=0.0, max=1.0)
    noun_min_prior: float = param(0.0, "lexicon proposals for a noun (by the tagger) need at least this prior "
                                  "(word-embedding similarity to the noun, or the antonym table or mined pairs): "
                                  "e.g. 0.45 keeps 'disappointment' -> 'delight' and drops 'the monster' -> 'the "
                                  "gem', 'the problem is' -> 'the classic is', at a cost downstream (see "
                                  "docs/methods/auto-cad.md); 0 = the general min_prior only", min=0.0)
    causal_terms: str = param(
        "lexicon+classifier", "where causal terms come from: lexicon (opinion words of the label's polarity and "
        "negation phrases, Algorithm 1's dictionaries) or lexicon+classifier (also the adjectives, adverbs and verbs "
        "outside the lexicon that C is sensitive to, as Eq. 1 measures any word: 'inconsiderate', 'rudest', "
        "'overcooked'; see classifier_term_min, classifier_term_prob; needs the tagger)",
        choices=("lexicon", "lexicon+classifier"))
    classifier_terms_max_words: int = param(40, "causal_terms=lexicon+classifier: the words C is sensitive to are "
                                            "terms in texts of at most this many words, and in any text the "
                                            "lexicon finds nothing in (a long review has opinion words enough; "
                                            "more edits there change its facts)", min=0)
    classifier_term_min: float = param(0.5, "causal_terms=lexicon+classifier: a word outside the lexicon is a "
                                       "term when removing it from its sentence lowers C's log-odds of the label "
                                       "by at least this much", min=0.0)
    classifier_term_prob: float = param(0.75, "causal_terms=lexicon+classifier: ... and C reads the word on its own "
                                        "as the label's with at least this probability (a topic word such as "
                                        "'food' reads as neither)", min=0.0, max=1.0)
    promises: bool = param(True, "REP-CT takes back a positive text's promise or plan when C weighs it: 'we will "
                           "definitely be back' -> 'we will never be back', 'I would recommend it' -> 'I would never "
                           "recommend it' (a negative text's 'never' is a negation term already)")
    fluency_lm: str | None = param(None, "a causal language model that reads REP-CT's best replacements in their "
                                   "sentence and ranks them by how likely the edited words read next to the "
                                   "original ones (its span score, nats per token): a packaged GGUF model "
                                   "(smollm2-135m-instruct, gemma-3-270m; converted once into the model store), "
                                   "a .gguf file or a local transformers folder; none = the bigram model alone. "
                                   "Costs about a CPU second per sentence on two cores (see "
                                   "docs/methods/auto-cad.md)")
    fluency_lm_candidates: int = param(6, "fluency_lm: replacements per term it reads (the best by prior, bigram fit "
                                       "and classifier movement)", min=1, max=100)
    fluency_lm_weight: float = param(1.0, "fluency_lm: weight of its span score next to the other scores", min=0.0)
    fluency_lm_floor: float = param(-2.0, "fluency_lm: a replacement whose span score is below this (nats per token "
                                    "less likely than the original's words) is dropped, unless every one is")
    choice_lm: str | None = param(None, "a causal language model that breaks near ties of the choice step (the "
                                  "candidates within 0.05 of the best score are read again by it): a packaged GGUF "
                                  "model (smollm2-135m-instruct), a .gguf file or a local transformers folder; auto "
                                  "= smollm2-135m-instruct when it is installed, else none (the n-gram fluency "
                                  "alone)")
    tagger: str = param("en_ewt", "part-of-speech tagger that makes replacements keep the word class and form "
                        "(loved -> hated; never an adjective for a verb): en_ewt (bundled), a spaCy pipeline folder or "
                        "package, or none")


THOROUGH = Preset(
    "more candidates, read more closely: five alternatives per row, a negation of the opinion word's predicate "
    "among each word's options, and the packaged local model (when installed) breaking near ties of the choice",
    params={"alternatives": 5, "negation_weight": 3.0, "choice_lm": "auto"})

PAPER = Preset(
    "Yang et al.'s setup: RM-CT, REP-CT and synonym sets; masked-LM proposals chosen by Eq. 1 on the sentence "
    "as edited so far; LM-resampled contexts; one classifier trained on all the data; only the MoverScore > 0.55 "
    "filter",
    params={"variants": "rm,rep,syn", "rm_terms": "top-per-sentence", "rep_selection": "eq1", "contexts": "lm",
            "context_samples": 20, "folds": 1, "replace": "all", "require_flip": False, "min_target_prob": 0.5,
            "max_edit_rate_short": None,
            "max_edit_rate": None,
            "min_similarity": 0.0, "min_moverscore": 0.55, "tagger": "none", "negation_weight": 0.0,
            "negator_removal": "minimal", "content_words": "all", "classifier_background": "none",
            "noun_min_prior": 0.0, "alternatives": 1, "causal_terms": "lexicon", "promises": False,
            "bigram_background": False},
    needs={"mlm": "a masked LM by local path (--mlm DIR or -p mlm=DIR); the paper used bert-base-uncased for the "
                  "SVM and BiLSTM classifiers and each transformer's own MLM otherwise"})
