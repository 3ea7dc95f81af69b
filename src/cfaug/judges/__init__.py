"""Judges score candidates: label classifiers and similarity to the original. The same judge serves as a
generation objective, a filter and an evaluation metric (with a different, independent instance)."""

from cfaug.judges.classifier import HFClassifierJudge, LabelJudge, predict_labels
from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
from cfaug.local_models import ModelPathError, resolve_local_model
from cfaug.judges.similarity import SentenceEncoder
from cfaug.nlp.tokens import levenshtein, token_edit_rate, tokenize

__all__ = ["HFClassifierJudge", "LabelJudge", "ModelPathError", "SentenceEncoder", "TfidfLinearJudge",
           "levenshtein", "predict_labels", "resolve_local_model", "token_edit_rate", "tokenize"]
