"""Text classifiers trained on labelled data: TF-IDF + SVM / logistic regression, a BiLSTM and a Kim CNN
trained from scratch, and a fine-tuned local transformer. One protocol (:class:`TextClassifier`: ``fit``,
``predict_proba``, ``predict``, ``save``; :func:`load_classifier`), one registry (:data:`CLASSIFIERS`).
Used by ``cfaug downstream`` (:mod:`cfaug.evaluate.downstream`) and by generation methods that train
their own classifier. Importing the package registers the built-in classifiers (torch and transformers
are imported only when a model is trained or loaded)."""

from cfaug.classifiers.base import (CLASSIFIERS, HELD_OUT, TextClassifier, TorchTextClassifier, WordTorchClassifier,
                                    accuracy, build_classifier, load_classifier, split_dev)
from cfaug.classifiers.bilstm import BiLSTMClassifier
from cfaug.classifiers.cnn import CNNClassifier
from cfaug.classifiers.tfidf import TfidfClassifier, TfidfLogRegClassifier, TfidfSVMClassifier
from cfaug.classifiers.transformer import TransformerClassifier

__all__ = ["CLASSIFIERS", "HELD_OUT", "BiLSTMClassifier", "CNNClassifier", "TextClassifier", "TfidfClassifier",
           "TfidfLogRegClassifier", "TfidfSVMClassifier", "TorchTextClassifier", "TransformerClassifier",
           "WordTorchClassifier", "accuracy", "build_classifier", "load_classifier", "split_dev"]
