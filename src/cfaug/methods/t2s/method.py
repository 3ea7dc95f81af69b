"""The ``t2s`` method: target-to-source augmentation for aspect sentiment triplet extraction (task ``aste``).

Instead of editing a sentence it learns to *write* one from a label (triplets) and a syntactic template, then
mixes the labels and templates of different samples to make new, aligned training sentences.

Training stage (``cfaug train t2s --task aste --train-data train.txt -p unlabeled=FILE``), one resumable
pipeline; each step is written into the model folder as it finishes and skipped when found there made
from the same data with the same values of the parameters it depends on (:data:`STEP_PARAMS`):

1. ``extractor/``: an ASTE model (:class:`cfaug.aste.GridTagger`) trained on the labelled data.
2. ``pool.jsonl``: the extractor's confident predictions on unlabelled in-domain sentences
   (``unlabeled``, ``min_confidence``) plus the labelled data, each with its dependency template.
3. ``generator_sl/``: the generator (:mod:`cfaug.methods.t2s.generator`) trained on the pool; trained from
   scratch, it writes placeholders for the label's terms (``delexicalise``, :mod:`cfaug.methods.t2s.delex`).
4. ``fluency/`` and ``alignment/``: the two discriminators (:mod:`cfaug.judges.aste_discriminators`), trained
   on data built from the pool and the generator's own mixed-pair sentences
   (:mod:`cfaug.methods.t2s.discriminator_data`).
5. ``generator/``: the generator after PPO (:mod:`cfaug.methods.t2s.tuning`), ``ppo_steps`` steps, the reward
   reading the discriminators on ``reward_scale`` (probabilities, or log-odds as the paper).

Generation: every input record is a slot that draws ``candidates`` (label, template) pairs, the label from
the pool (``label_source=pool``, the paper), from its training part (``train``) or the record itself
(``record``), the template from a pool (or training, ``template_source``) entry with the same number of
triplets. Each sentence is scored by both discriminators;
its label's terms must occur in it (their spans become the output label); the ``keep`` best by alignment +
fluency that reach ``min_alignment`` and ``min_fluency`` pass. Everything is in ``meta``.

This module wires the parts: the parameters and presets (:mod:`cfaug.methods.t2s.config`), the training steps
(:mod:`cfaug.methods.t2s.pipeline`, resumable through :mod:`cfaug.training.steps`) and generation
(:mod:`cfaug.methods.t2s.generation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.aste import example_from_record
from cfaug.data.records import Counterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Method, Resources
from cfaug.methods.t2s import generation, pipeline
from cfaug.methods.t2s.config import PRESETS, T2SConfig
from cfaug.methods.t2s.pipeline import (FACTS_FILE, POOL_FILE, STEP_FACTS, STEP_FILES, STEP_PARAM_BEFORE, STEP_PARAMS,
                                        STEPS, STEPS_KEY)
from cfaug.training.context import FitContext, StageContext
from cfaug.training.steps import StepRecord

__all__ = ["FACTS_FILE", "NAME", "POOL_FILE", "STEPS", "STEPS_KEY", "STEP_FACTS", "STEP_FILES", "STEP_PARAMS",
           "STEP_PARAM_BEFORE", "T2S", "T2SConfig"]

NAME = "t2s.v1"


@METHODS.register(NAME, "target-to-source augmentation for ASTE: a generator writes new sentences from a label and "
                  "a dependency template, tuned by PPO against fluency and alignment discriminators")
class T2S(Method):
    name = NAME
    Config = T2SConfig
    supported_tasks = ("aste",)
    trains = True
    resources = Resources(cpus=1.0, gpus=0.25, memory_mb=2000)
    default_batch_size = 64
    presets = PRESETS

    def __init__(self, config: T2SConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.generator: Any = None
        self.fluency: Any = None
        self.alignment: Any = None
        self.pool: list[dict[str, Any]] = []
        self.pairings: dict[tuple[str, str], Any] = {}
        self.device = "cpu"

    def prepare(self, records: Sequence[Record], task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        return {"requests_per_item": 0, "candidates_per_item": self.config.candidates}

    # ------------------------------------------------------------------------------------------ training
    def fit(self, records: Sequence[Record], task: Task, ctx: FitContext) -> dict[str, Any]:
        """The five steps of the module docstring (:mod:`cfaug.methods.t2s.pipeline`); finished steps are
        skipped when fit runs again."""
        self.check_task(task)
        examples = [example_from_record(r) for r in records]
        if not any(ex.triplets for ex in examples):
            raise ConfigError("t2s learns from sentences with triplets; the training data has none")
        steps = self.step_record(records, ctx)
        c = self.config
        extractor = pipeline.fit_extractor(c, examples, ctx, steps)
        pool = pipeline.fit_pool(c, examples, extractor, ctx, steps)
        generator = pipeline.fit_generator(c, pool, ctx, steps)
        fluency, alignment = pipeline.fit_discriminators(c, pool, generator, extractor, ctx, steps)
        pipeline.fit_ppo(c, pool, generator, fluency, alignment, ctx, steps)
        return steps.facts

    def step_record(self, records: Sequence[Record], ctx: FitContext) -> StepRecord:
        """The model folder's record of its training steps, those made from other data or other values of
        their parameters (:data:`STEPS`) forgotten, files and all, with every step after them."""
        return pipeline.open_steps(self.fit_params(), records, ctx)

    # ----------------------------------------------------------------------------------------- generation
    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        from cfaug.judges.aste_discriminators import AlignmentDiscriminator, FluencyDiscriminator
        from cfaug.methods.t2s.generator import Generator
        from cfaug.methods.t2s.pool import read_pool

        self.check_task(task)
        self.device = ctx.device
        self.generator = Generator.load(artifact_dir / "generator", device=ctx.device,
                                        max_target=self.config.max_new_tokens)
        self.fluency = FluencyDiscriminator.load(artifact_dir / "fluency")
        self.alignment = AlignmentDiscriminator.load(artifact_dir / "alignment")
        self.pool = read_pool(artifact_dir / POOL_FILE)
        self.pairings = {}
        return {"pool": len(self.pool), "generator_parameters": self.generator.parameters()}

    def _pairing(self) -> Any:
        key = (self.config.label_source, self.config.template_source)
        if key not in self.pairings:
            self.pairings[key] = generation.pairing_for(self.pool, *key)
        return self.pairings[key]

    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        """Candidates written from drawn (label, template) pairs, scored and filtered
        (:mod:`cfaug.methods.t2s.generation`)."""
        return generation.generate(items, self.config, self.generator, self.fluency, self.alignment,
                                   self._pairing(), self.item_seed, self.name)

    def close(self) -> None:
        self.generator = None
