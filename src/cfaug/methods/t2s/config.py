"""The parameters of ``t2s`` (:class:`T2SConfig`, ``-p key=value``) and its presets (``--preset``)."""

from __future__ import annotations

from dataclasses import dataclass

from cfaug.config import param
from cfaug.methods.base import Preset


@dataclass
class T2SConfig:
    """Parameters of target-to-source augmentation (``-p key=value``)."""

    unlabeled: str | None = param(None, "in-domain unlabelled sentences to pseudo-label (.txt, one per line, or a "
                                  "table with a text column); without it the pool is the labelled data alone",
                                  fit=True)
    unlabeled_max: int = param(20000, "at most this many unlabelled sentences are read (a seeded sample)", min=1,
                               fit=True)
    max_words: int = param(40, "unlabelled sentences longer than this many tokens are skipped", min=3, fit=True)
    min_confidence: float = param(0.75, "pseudo-labels are kept when every triplet's confidence reaches this",
                                  min=0.0, max=1.0, fit=True)
    dev_data: str | None = param(None, "labelled ASTE dev data (ASTE-Data-V2 lines) to choose the extractor's epoch; "
                                 "default: a seeded tenth of the training data", fit=True)
    extractor_epochs: int = param(0, "epochs of the ASTE extractor (0 = its default)", min=0, fit=True)
    template_depth: int = param(0, "templates keep this many levels of the tree (0 = all)", min=0, fit=True)
    prune_terms: bool = param(False, "templates leave out their own sentence's aspect and opinion words", fit=True)
    generator_data: str = param("pool", "what the generator learns from: pool (pseudo-labelled + labelled) or "
                                "pseudo (the pseudo-labelled sentences only, as the paper)",
                                choices=("pool", "pseudo"), fit=True)
    checkpoint: str | None = param(None, "a local T5 checkpoint (with its tokenizer) to fine-tune as the generator; "
                                   "default: a small T5 trained from scratch", fit=True)
    delexicalise: str = param("auto", "the generator writes placeholders for the label's terms, which are put back "
                              "after decoding (cfaug.methods.t2s.delex): on, off, or auto (on for a generator "
                              "trained from scratch, which copies rare terms badly; off with a checkpoint)",
                              choices=("auto", "on", "off"), fit=True)
    d_model: int = param(192, "from-scratch generator: model width", min=16, fit=True)
    layers: int = param(3, "from-scratch generator: encoder and decoder layers", min=1, fit=True)
    generator_epochs: int = param(10, "epochs of supervised generator training", min=1, fit=True)
    generator_lr: float = param(1e-3, "Adam learning rate of the generator, decayed linearly", min=1e-7, fit=True)
    batch_size: int = param(32, "examples per optimiser step (generator and PPO)", min=1, fit=True)
    mixed_pairs: int = param(3000, "(label, template) pairs from different samples the supervised generator writes "
                             "for the discriminators' training data", min=0, fit=True)
    fluency_theta: float = param(0.1, "a mixed-pair sentence is non-fluent when its fluency is this far below the "
                                 "template's own sentence (equation 8)", min=0.0, max=1.0, fit=True)
    discriminator: str = param("bilstm", "classifier of both discriminators (a cfaug.classifiers name)", fit=True)
    discriminator_epochs: int = param(6, "epochs of each discriminator", min=1, fit=True)
    ppo_steps: int = param(150, "PPO steps (0 = no reinforcement learning)", min=0, fit=True)
    ppo_lr: float = param(2e-5, "PPO learning rate, decayed linearly to 0", min=1e-8, fit=True)
    kl_coef: float = param(0.01, "lambda_KL, per-token KL penalty to the supervised generator", min=0.0, fit=True)
    gae_lambda: float = param(0.95, "GAE lambda", min=0.0, max=1.0, fit=True)
    gamma: float = param(0.99, "discount", min=0.0, max=1.0, fit=True)
    reward_scale: str = param("prob", "how the PPO reward (equation 11) reads the two discriminators: prob (their "
                              "probabilities, in [0, 1]) or logit (their log-odds, the paper's scores); the length "
                              "penalty is added unchanged either way", choices=("prob", "logit"), fit=True)
    label_source: str = param("pool", "where generation draws labels: pool (pseudo-labelled + training, the paper), "
                              "train (the training data only) or record (each input record's own label)",
                              choices=("pool", "train", "record"))
    template_source: str = param("pool", "where generation draws templates: pool (the paper) or train (the training "
                                 "data only)", choices=("pool", "train"))
    candidates: int = param(8, "sentences generated per input record", min=1, max=1000)
    keep: int = param(2, "at most this many best sentences kept per input record", min=1, max=1000)
    decoding: str = param("greedy", "greedy, beam (4) or sample", choices=("greedy", "beam", "sample"))
    no_repeat_ngram: int = param(3, "generation never repeats a word n-gram of this size within a sentence (0 = "
                                 "off)", min=0, max=10)
    min_alignment: float = param(0.5, "keep sentences whose alignment score reaches this", min=0.0, max=1.0)
    min_fluency: float = param(0.5, "keep sentences whose fluency score reaches this", min=0.0, max=1.0)
    max_new_tokens: int = param(48, "tokens generated at most", min=4, max=512)


#: the method's presets; ``paper`` is Zhang et al.'s setup
PRESETS = {"paper": Preset(
    "Zhang et al.'s setup: generator from the pseudo-labelled data, PPO with lambda_KL 0.01, GAE 0.95/0.99, "
    "the discriminators' logits in the reward, labels and templates mixed from the pool, 100,000 candidates "
    "for the 1,266 sentences of 14res (80 per record, 4 kept: about 5,000)",
    params={"generator_data": "pseudo", "kl_coef": 0.01, "gae_lambda": 0.95, "gamma": 0.99,
            "min_confidence": 0.75, "label_source": "pool", "template_source": "pool", "candidates": 80,
            "keep": 4, "ppo_steps": 1000, "delexicalise": "off", "no_repeat_ngram": 0, "reward_scale": "logit"},
    needs={"unlabeled": "in-domain unlabelled sentences (-p unlabeled=FILE; the paper pseudo-labels 10,000 "
                        "Yelp or Amazon reviews)"})}
