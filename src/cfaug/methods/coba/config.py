"""The parameters of ``coba`` (:class:`CoBAConfig`, ``-p key=value``), its preset (``--preset paper``) and
the constants both generation paths share: the method's name, the flag that names the labels of classifiers
given by folder, the sizes of the torch classifiers the training stage builds, and the reasons an item gets
no rewrite (counted in the run summary)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.methods.base import Preset
from cfaug.methods.llm_method import PAPER_NO_FLIP_CHECK, LLMConfig

NAME = "coba.v1"

#: how the labels of classifiers given by folder are named (see CoBAConfig.model_labels)
MODEL_LABELS_FLAG = "-p model_labels="

#: why an item gets no rewrite (the reasons counted in the run summary); the last one serves both paths
NO_PRINCIPAL_TRIPLE = "no principal triple: nothing in the text's triples carries the label"
PRINCIPAL_UNCHANGED = "the modify step changed no principal triple"
REBUILT_ORIGINAL = "the rebuilt text is the original text"
NO_TRIPLE_FROM_TEXT = "the extract step returned no triple whose words come from the text"
REBUILT_WITHOUT_EDIT = "the rebuilt text leaves out the words the modify step changed"

#: small from-scratch settings of the ensemble's torch classifiers (CPU minutes, not hours)
TORCH_DEFAULTS = {"bilstm": {"embedding_dim": 64, "hidden_size": 64, "max_tokens": 256},
                  "cnn": {"max_tokens": 256}}


@dataclass
class CoBAConfig(LLMConfig):
    """Parameters of CoBA (``-p key=value``); the LLM settings (``llm``, ``temperature``...) serve
    ``mode=llm``."""

    mode: str = param("offline", "offline: triples from the bundled dependency parser, edits from the opinion lexicon "
                      "and negation, text realised from the original sentences (CPU); llm: the paper's extract, modify "
                      "and reconstruct prompts", choices=("offline", "llm"))
    models: str = param("tfidf-logreg,bilstm,cnn", "the classifiers M that vote on principal and spurious words: "
                        "registered classifier names (trained here on the input), or local folders (a classifier "
                        "saved by cfaug, or a Hugging Face sequence classifier, its labels from its config's "
                        "id2label, see model_labels); models load by local path only, never by hub name", fit=True)
    model_labels: str | None = param(None, "labels of the classifiers in models given by folder, in output order: "
                                     "one comma-separated list (negative,positive) for every folder whose config "
                                     "names its outputs LABEL_0, LABEL_1...; or one list per entry of models, "
                                     "separated by ';' (an empty entry keeps that model's own names; entries of "
                                     "classifiers trained here stay empty). Names that spell the task's labels "
                                     "(POSITIVE, neg, Entailment) map onto them without it")
    importance: str = param("lime,integrated-gradients,shapley", "attribution methods applied to every model "
                            "(each model x method pair votes)")
    k: int = param(5, "top words per voter", min=1, max=100)
    tau: int = param(0, "the vote threshold tau (0 = (V + 1) / 2, V the number of voters: models x attribution "
                     "methods); see tau_rule", min=0)
    tau_rule: str = param("at-least", "how a word's votes are compared with tau: at-least (principal with at least "
                          "tau votes; with tau=0 a majority of the voters) or more-than (more than tau votes, the "
                          "paper's text: 4 of 5 voters, 3 of 3)", choices=("at-least", "more-than"))
    lime_samples: int = param(200, "LIME: perturbed texts per explanation", min=10)
    shapley_samples: int = param(3, "Shapley value sampling: permutations per explanation", min=1)
    ig_steps: int = param(20, "Integrated Gradients: steps of the path integral", min=2)
    classifier_epochs: int = param(4, "epochs of the torch classifiers of M (best epoch on held-out data kept)",
                                   min=1, fit=True)
    spurious_words: str | None = param("gender", "extra spurious words: a file with one word per line, 'gender' for "
                                       "the WinoBias gender words, or none")
    gender_swap: bool = param(False, "swap gendered words (he/she, his/her, actor/actress...) in every triple (the "
                              "paper's step; off by default: swapping genders while flipping the label widens a "
                              "classifier's gender gap)")
    swap_names: bool = param(False, "gender swap also first names")
    delete_prob: float = param(0.1, "probability that a normal triple (offline: a sentence of normal triples) is "
                               "deleted", min=0.0, max=1.0)
    shuffle: bool = param(True, "permute the normal triples (offline: sentences of normal triples) among their "
                          "positions")
    candidates: int = param(1, "rewrites per row (each with its own permutation and deletions; offline, the n-th "
                            "also takes each word's n-th best replacement)", min=1, max=10)
    lexicon_principal: bool = param(True, "sentiment: opinion words of the source label (opinion lexicon) are "
                                    "principal, never spurious, and a triple holding one is a principal triple")
    edit_mixed: bool = param(True, "triples holding both spurious and principal words are edited too, keeping the "
                             "spurious words (off: the paper's rule, spurious triples are never edited)")
    judge: Any = param("tfidf", "the independent label judge that checks every rewrite: tfidf (trained on judge_data, "
                       "else on the input), hf (judge_model), or a judge spec", fit=True)
    judge_data: str | None = param(None, "judge=tfidf: labelled data to train the judge on", fit=True)
    judge_model: str | None = param(None, "judge=hf: local sequence classifier folder", fit=True)
    judge_labels: str | None = param(None, "judge=hf: its labels in output order", fit=True)
    judge_folds: int = param(5, "judge=tfidf trained on the input: cross-fitted, each row judged by a model not "
                             "trained on it (1 = one model on everything, which has seen the originals)", min=1, max=100,
                             fit=True)
    negate_neutral: bool = param(False, "offline: a principal word without opinion polarity negates its predicate "
                                 "('I mean' -> 'I do not mean'; off: only opinion words and negators are edited)")
    negate_prob: float = param(0.0, "offline: share of the clauses with opinion words of the source label that "
                               "are negated instead of having those words replaced ('was great' -> 'was not great')",
                               min=0.0, max=1.0)
    content_words: str = param("all", "offline: lexicon nouns and verbs of the source label ('waste', 'death', "
                               "'warned'): all are edited, or important: only those the ensemble ranks among a "
                               "text's top words or the antonym table pairs, since the others often state a fact "
                               "('the death of a friend')", choices=("all", "important"))
    contrast_repair: bool = param(False, "offline: a 'but' joining two parts of an edited sentence that both lean "
                                  "to the target label after the edits becomes 'and' (reads better; no measured "
                                  "change out of domain, see bench/coba.contrast_repair.results.md)")
    domain_margin: float = param(-1.0, "offline: lexicon words whose weight in the ensemble's TF-IDF model leans "
                                 "to the other label by more than this are no opinion words in this data (funny, "
                                 "twists, crime in film reviews); negative: the lexicon as shipped", min=-1.0)
    guide_weight: float = param(1.0, "offline: weight of the ensemble's TF-IDF model when choosing a replacement "
                                "(its word weight toward the target, next to the proposer's prior; 0 = prior only)",
                                min=0.0)
    require_flip: bool = param(False, "drop rewrites the judge does not give the target label (with at least "
                               "min_target_prob); off: every rewrite is kept with meta.confidence")
    min_target_prob: float = param(0.5, "the judge's probability of the target that counts as flipped", min=0.0, max=1.0)
    parser: str = param("en_ewt", "dependency parser for the offline triples: en_ewt (bundled), or a spaCy pipeline "
                        "folder or package")
    encoder: str | None = param(None, "local sentence-transformers path for the lexicon proposer (default: packaged "
                                "all-MiniLM-L6-v2)", fit=True)
    vote_cache: str = param("auto", "where the ensemble's top words per text are kept, so a rerun with other "
                            "rewrite settings does not explain the texts again: auto ($CFAUG_IMPORTANCE_CACHE or "
                            "~/.cache/cfaug/importance), a folder, or none", identity=False)


#: the paper's setup (``--preset paper``)
PRESETS = {"paper": Preset(
    "Choi et al.'s setup: an LLM extracts, edits and rebuilds the triples; only the ensemble's votes of the "
    "fine-tuned models decide principal and spurious words (more than (V + 1) / 2 of the V voters); mixed "
    "triples kept; no label check",
    params={"mode": "llm", "models": "", "k": 5, "tau": 0, "tau_rule": "more-than", "lexicon_principal": False,
            "edit_mixed": False, "require_flip": False, "gender_swap": True, "spurious_words": None,
            "candidates": 1, "completeness": False, **PAPER_NO_FLIP_CHECK},
    needs={"models": "the fine-tuned classifiers M by local path, comma-separated (-p models=DIR1,...); the "
                     "paper used five BERT-family models (BERT-base/large, RoBERTa-large, DistilBERT, BART-base)"})}

__all__ = ["CoBAConfig", "MODEL_LABELS_FLAG", "NAME", "NO_PRINCIPAL_TRIPLE", "NO_TRIPLE_FROM_TEXT", "PRESETS",
           "PRINCIPAL_UNCHANGED", "REBUILT_ORIGINAL", "REBUILT_WITHOUT_EDIT", "TORCH_DEFAULTS"]
