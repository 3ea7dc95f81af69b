"""The shared quoting of user data in messages (:mod:`cfaug.quoting`)."""

from __future__ import annotations

from cfaug.quoting import QUOTE_CHARS, quote, quote_list, shorten


def test_short_values_are_quoted_as_repr_quotes_them():
    assert quote("it's") == repr("it's") and quote(5) == "5" and quote("a\nb") == "'a\\nb'"


def test_long_values_are_cut_and_their_length_said():
    text = "ab" * 500_000
    q = quote(text)
    assert q.startswith(repr(text[:QUOTE_CHARS])) and q.endswith("… (1,000,000 characters)")
    assert len(q) < QUOTE_CHARS + 40
    assert shorten(text, 10) == "ababababab… (1,000,000 characters)" and shorten("short") == "short"


def test_lists_of_names_are_bounded_in_count_and_length():
    assert quote_list([]) == "none" and quote_list(["a", "b"]) == "a, b"
    many = quote_list(f"c{i}" for i in range(50_000))
    assert many.startswith("c0, c1, c2") and many.endswith("more") and len(many) < QUOTE_CHARS + 40
    one_huge = quote_list(["y" * 10_000, "z"])
    assert one_huge.startswith("y" * QUOTE_CHARS + "… (10,000 characters)") and len(one_huge) < 2 * QUOTE_CHARS
