"""Does augmented data make classifiers more robust? Train on original data and on original +
counterfactuals, test on in-domain, challenge and out-of-domain sets, and tabulate accuracy over seeds.
The classifiers themselves live in :mod:`cfaug.classifiers`."""

from cfaug.classifiers import CLASSIFIERS, TextClassifier, build_classifier
from cfaug.evaluate.downstream.harness import (DownstreamResult, LabelledSet, TrainCondition, load_labelled,
                                               run_downstream)
from cfaug.evaluate.downstream.table import markdown_table

__all__ = ["CLASSIFIERS", "DownstreamResult", "LabelledSet", "TextClassifier", "TrainCondition",
           "build_classifier", "load_labelled", "markdown_table", "run_downstream"]
