"""The target-to-source generator: a T5 encoder-decoder that writes a sentence from a label sequence and a
syntactic template.

Its input is ``<label sequence> ; <template>`` (``food | great | positive ; root [ nsubj [ det ] cop punct ]``)
and its output the sentence. Without a checkpoint the model is a small T5 trained from scratch here, with a
word-level vocabulary (lower-cased words of the training sentences, label sequences and templates, built
with ``tokenizers`` and wrapped as a Hugging Face fast tokenizer); with ``checkpoint=DIR`` a local T5 (and
its tokenizer) is fine-tuned instead. Both save with ``save_pretrained``, so the PPO stage and generation
load either the same way.

With ``delexicalise`` (:mod:`cfaug.methods.t2s.delex`) the model sees placeholders instead of the label's
terms, in its input and in the sentences it learns from, and :meth:`Generator.generate` puts the terms back;
the setting is saved with the model (``cfaug_generator.json``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfaug.methods.t2s.delex import PLACEHOLDERS, delexicalise_condition, delexicalise_sentence, fill

SETTINGS_FILE = "cfaug_generator.json"
PAD, EOS, UNK = "<pad>", "</s>", "<unk>"


def condition_text(label_sequence: str, template: str) -> str:
    """The generator's input for one (label, template) pair."""
    return f"{label_sequence} ; {template}".lower()


@dataclass(frozen=True)
class GeneratorShape:
    """Size of a T5 trained from scratch."""

    d_model: int = 192
    d_ff: int = 512
    layers: int = 3
    heads: int = 4
    max_vocab: int = 12000

    def describe(self) -> dict[str, int]:
        return {"d_model": self.d_model, "d_ff": self.d_ff, "layers": self.layers, "heads": self.heads,
                "max_vocab": self.max_vocab}


def build_tokenizer(texts: Iterable[str], max_vocab: int, reserved: Sequence[str] = ()) -> Any:
    """A word-level fast tokenizer over the lower-cased, space-split words of ``texts`` (most frequent
    first, at most ``max_vocab`` entries with the specials and the ``reserved`` words, which are always in);
    it appends ``</s>`` to every encoded text."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    counts: Counter[str] = Counter()
    for t in texts:
        counts.update(t.lower().split())
    specials = [PAD, EOS, UNK] + [w for w in dict.fromkeys(reserved) if w not in (PAD, EOS, UNK)]
    words = [w for w, _ in counts.most_common(max(max_vocab - len(specials), 1)) if w not in specials]
    vocab = {w: i for i, w in enumerate(specials + words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single=f"$A {EOS}", special_tokens=[(EOS, vocab[EOS])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS, unk_token=UNK)


def new_model(tokenizer: Any, shape: GeneratorShape, seed: int) -> Any:
    """A randomly initialised T5 sized by ``shape`` over ``tokenizer``'s vocabulary."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    config = T5Config(vocab_size=len(tokenizer), d_model=shape.d_model, d_kv=shape.d_model // shape.heads,
                      d_ff=shape.d_ff, num_layers=shape.layers, num_decoder_layers=shape.layers,
                      num_heads=shape.heads, dropout_rate=0.1, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id,
                      tie_word_embeddings=True)
    return T5ForConditionalGeneration(config)


class Generator:
    """A T5 model and its tokenizer, with the few operations the method needs."""

    def __init__(self, model: Any, tokenizer: Any, device: str = "cpu", max_source: int = 160,
                 max_target: int = 64, delexicalise: bool = False) -> None:
        self.model = model.to(device)
        self.delexicalise = delexicalise
        self.tokenizer = tokenizer
        self.device = device
        self.max_source = max_source
        self.max_target = max_target

    @classmethod
    def from_scratch(cls, texts: Iterable[str], shape: GeneratorShape, seed: int, device: str = "cpu",
                     delexicalise: bool = False, **kw: Any) -> Generator:
        tokenizer = build_tokenizer(texts, shape.max_vocab, PLACEHOLDERS if delexicalise else ())
        return cls(new_model(tokenizer, shape, seed), tokenizer, device, delexicalise=delexicalise, **kw)

    @classmethod
    def load(cls, folder: str | Path, device: str = "cpu", **kw: Any) -> Generator:
        """A saved generator (or any local T5 checkpoint with its tokenizer); ``delexicalise`` overrides the
        saved setting (a checkpoint saved elsewhere has none: off)."""
        from transformers import AutoTokenizer, T5ForConditionalGeneration

        from cfaug.local_models import quiet_transformers, resolve_local_model

        path = resolve_local_model(folder, "generator checkpoint")
        quiet_transformers()
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        model = T5ForConditionalGeneration.from_pretrained(str(path))
        model.eval()
        settings = path / SETTINGS_FILE
        if "delexicalise" not in kw and settings.exists():
            kw["delexicalise"] = bool(json.loads(settings.read_text(encoding="utf-8")).get("delexicalise", False))
        return cls(model, tokenizer, device, **kw)

    def save(self, folder: str | Path) -> None:
        from cfaug.local_models import quiet_transformers

        quiet_transformers()
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(folder))
        self.tokenizer.save_pretrained(str(folder))
        (folder / SETTINGS_FILE).write_text(json.dumps({"delexicalise": self.delexicalise}) + "\n", encoding="utf-8")

    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def _inputs(self, conditions: Sequence[str]) -> tuple[list[str], list[dict[str, str]]]:
        """The model's input texts for ``conditions`` and each one's placeholder -> term map (delexicalised
        when the generator is; otherwise the conditions and empty maps)."""
        if not self.delexicalise:
            return list(conditions), [{} for _ in conditions]
        pairs = [delexicalise_condition(c) for c in conditions]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def _ids(self, inputs: Sequence[str]) -> tuple[Any, Any]:
        enc = self.tokenizer(list(inputs), padding=True, truncation=True, max_length=self.max_source,
                             return_tensors="pt")
        return enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)

    def encode(self, conditions: Sequence[str]) -> tuple[Any, Any]:
        """Input ids and attention mask of ``conditions`` (delexicalised when the generator is)."""
        return self._ids(self._inputs(conditions)[0])

    def loss(self, conditions: Sequence[str], sentences: Sequence[str]) -> Any:
        """Mean token cross-entropy of ``sentences`` given ``conditions`` (the supervised objective)."""
        inputs, terms = self._inputs(conditions)
        ids, mask = self._ids(inputs)
        if self.delexicalise:
            sentences = [delexicalise_sentence(s, t) for s, t in zip(sentences, terms)]
        lab = self.tokenizer([s.lower() for s in sentences], padding=True, truncation=True,
                             max_length=self.max_target, return_tensors="pt")["input_ids"].to(self.device)
        lab = lab.masked_fill(lab == self.tokenizer.pad_token_id, -100)
        return self.model(input_ids=ids, attention_mask=mask, labels=lab).loss

    def generate(self, conditions: Sequence[str], *, beams: int = 1, sample: bool = False,
                 max_new_tokens: int | None = None, batch_size: int = 64, no_repeat_ngram: int = 0) -> list[str]:
        """One sentence per condition (greedy, beam search, or sampling); with ``no_repeat_ngram`` no word
        n-gram of that size occurs twice in a sentence (placeholders count as words)."""
        import torch

        out: list[str] = []
        self.model.eval()
        for b in range(0, len(conditions), batch_size):
            inputs, terms = self._inputs(conditions[b: b + batch_size])
            ids, mask = self._ids(inputs)
            with torch.no_grad():
                gen = self.model.generate(input_ids=ids, attention_mask=mask, num_beams=beams, do_sample=sample,
                                          top_k=0 if sample else None, min_new_tokens=1,
                                          no_repeat_ngram_size=no_repeat_ngram or None,
                                          max_new_tokens=max_new_tokens or self.max_target)
            out += self._sentences(gen, terms)
        return out

    def decode(self, ids: Any, conditions: Sequence[str] | None = None) -> list[str]:
        """Sentences of generated ids; a delexicalising generator needs the ``conditions`` they were written
        for, to put the terms back."""
        if self.delexicalise and (conditions is None or len(conditions) != len(ids)):
            raise ValueError("a delexicalising generator decodes with the conditions of its sentences")
        return self._sentences(ids, self._inputs(conditions or [""] * len(ids))[1])

    def _sentences(self, ids: Any, terms: Sequence[dict[str, str]]) -> list[str]:
        """Decoded sentences, each with its placeholders replaced by its terms (none without delexicalising)."""
        texts = [" ".join(t.split()) for t in self.tokenizer.batch_decode(ids, skip_special_tokens=True)]
        return [fill(t, m) if self.delexicalise else t for t, m in zip(texts, terms)]
