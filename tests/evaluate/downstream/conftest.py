import random

import pytest

FILLER = "the a film movie plot acting story it this was is and very".split()


def toy(n: int, seed: int) -> tuple[list[str], list[str]]:
    """Sentences whose label is decided by one word ("good" / "bad") among random filler words."""
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        label = "positive" if i % 2 == 0 else "negative"
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 8))]
        words.insert(rng.randrange(len(words) + 1), "good" if label == "positive" else "bad")
        texts.append(" ".join(words))
        labels.append(label)
    return texts, labels


@pytest.fixture
def toy_data():
    return toy(60, 1), toy(20, 2), toy(30, 3)
