"""``cfaug report``: one self-contained HTML page describing a run."""

from cfaug.evaluate.report.html_report import build_report, write_report
from cfaug.nlp.word_diff import Segment, word_diff

__all__ = ["Segment", "build_report", "word_diff", "write_report"]
