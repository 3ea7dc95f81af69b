"""The options of a run, declared once: they make the ``cfaug augment`` / ``cfaug train`` flags, the
keyword arguments of :func:`cfaug.augment`, the keys of a ``--config`` file and the saved run config."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from cfaug.config import build_config, param
from cfaug.data.io import DEFAULT_MAX_CHARS
from cfaug.llm.settings import DEFAULT_CONCURRENCY

TASKS = ("sentiment", "rating", "nli", "style", "aste")
#: the method of a run that names none (and has no ``--model``)
DEFAULT_METHOD = "auto-cad"
#: where batch methods run when ``--engine`` is not given
DEFAULT_ENGINE = "local"
#: the largest seed: the random generators a run seeds (NumPy's, scikit-learn's) take 0 to 2**32 - 1
MAX_SEED = 2**32 - 1


@dataclass
class RunOptions:
    """Every option of a run (see ``cfaug augment --help``)."""

    method: str | None = param(None, f"method name from 'cfaug methods' (default: {DEFAULT_METHOD}, or the --model's "
                               "method)", group="method", flag="")
    params: dict[str, Any] = param(default_factory=dict, help="method parameters (-p KEY=VALUE)", group="method", flag="")
    preset: str = param("default", "a named set of method parameters: default (cfaug's choices) or paper (the seed "
                        "paper's setup; see 'cfaug methods -v' and docs/fidelity.md); -p values override it",
                        group="method")
    # task and columns
    task: str = param("sentiment", "task", choices=TASKS, group="task and columns")
    target: str = param("opposite", "label to rewrite towards, or 'opposite'", group="task and columns")
    edit_side: str = param("premise", "NLI field to edit", choices=("premise", "hypothesis"), group="task and columns")
    levels: str | None = param(None, "rating levels (default 1,2,3,4,5) or style names (default informal,formal), "
                               "comma-separated", group="task and columns")
    text_col: str | None = param(None, "text column (default: found by common names)", group="task and columns")
    premise_col: str | None = param(None, "NLI premise column", group="task and columns")
    hypothesis_col: str | None = param(None, "NLI hypothesis column", group="task and columns")
    label_col: str | None = param(None, "label column (default: found by common names)", group="task and columns")
    id_col: str | None = param(None, "id column (default: 'id' if present, else row numbers)", group="task and columns")
    label_map: str | None = param(None, "what each value of the label column means, VALUE=LABEL pairs separated by "
                                  "commas (e.g. 1=negative,2=negative,4=positive,5=positive); rows with other "
                                  "values are rejected", group="task and columns")
    input_format: str | None = param(None, "input format (default: from the name)", group="task and columns",
                                     flag="--format")
    output_format: str | None = param(None, "output format (default: from the name)", group="task and columns")
    max_chars: int = param(DEFAULT_MAX_CHARS, "reject texts longer than this", min=1, group="task and columns")
    limit: int | None = param(None, "only N valid rows: a seeded sample balanced by label (--seed), the rows "
                                    "'cfaug compare --limit N' takes too (training data is not limited)", min=1,
                              group="task and columns")
    # training stage
    train_data: str | None = param(None, "data the method trains on (any supported format; default: the input)",
                                   group="training", metavar="FILE")
    model: str | None = param(None, "a trained model folder from 'cfaug train' (skips training)", group="training",
                              metavar="MODEL_DIR")
    model_store: str | None = param(None, "folder of fitted artifacts, reused by fingerprint (default: "
                                    "$CFAUG_MODEL_STORE or ~/.cache/cfaug/models)", identity=False, group="training")
    device: str = param("auto", "auto, cpu, cuda or cuda:N (auto: a GPU when torch sees one)", identity=False,
                        group="execution")
    # execution
    engine: str = param(DEFAULT_ENGINE, "where batch methods run: local (process pool) or ray",
                        choices=("local", "ray"), identity=False, group="execution")
    workers: int | None = param(None, "worker processes or Ray actors (default: cores / the method's CPUs)", min=1,
                                identity=False, group="execution")
    batch_size: int | None = param(None, "items per batch (default: the method's)", min=1, identity=False,
                                   group="execution")
    concurrency: int | None = param(None, f"LLM requests in flight at once (default {DEFAULT_CONCURRENCY})", min=1,
                                    identity=False, group="execution")
    ray_address: str | None = param(None, "Ray cluster address (auto, host:port; default: a local cluster)",
                                    identity=False, group="execution")
    # run directory
    run_dir: str | None = param(None, "run directory (default: <output>.run)", identity=False, group="run")
    seed: int = param(0, f"random seed, 0 to {MAX_SEED}", min=0, max=MAX_SEED, group="run")
    overwrite: bool = param(False, "discard an existing run directory's results", identity=False, group="run")
    retry_failed: bool = param(False, "when resuming, run again the items that failed, and draw again (new seeds) "
                               "the items whose LLM answers held nothing readable", identity=False, group="run")
    keep_failed: bool = param(False, "also write candidates a filter rejected", identity=False, group="run")
    progress: bool = param(True, "show progress bars", identity=False, group="run", flag="--no-progress")

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> RunOptions:
        """Options from a mapping (API keyword arguments or a config file), each value checked."""
        return build_config(cls, values, owner="the run")

    def levels_tuple(self) -> tuple[str, ...] | None:
        return tuple(x.strip() for x in self.levels.split(",")) if self.levels else None


def option_names() -> list[str]:
    return [f.name for f in fields(RunOptions)]
