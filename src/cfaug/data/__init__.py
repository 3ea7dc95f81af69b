"""Data model, tasks, column mapping, readers/writers and the output contract."""

from cfaug.data.contract import counterfactual_row, output_columns, record_from_row
from cfaug.data.io import DataError, Dataset, Reject, read_dataset, write_rows
from cfaug.data.labels import LabelError, LabelSpace
from cfaug.data.records import Counterfactual, Record, WorkItem
from cfaug.data.schema import Schema, SchemaError
from cfaug.data.tasks import NLITask, RatingTask, SentimentTask, Task, TaskError, make_task

__all__ = [
    "Counterfactual", "DataError", "Dataset", "LabelError", "LabelSpace", "NLITask", "RatingTask", "Record",
    "Reject", "Schema", "SchemaError", "SentimentTask", "Task", "TaskError", "WorkItem", "counterfactual_row",
    "make_task", "output_columns", "read_dataset", "record_from_row", "write_rows",
]
