"""ASTE labels (cfaug.data.aste): triplet parsing and spelling, ASTE-Data-V2 lines, label sequences, term
alignment and file reading."""

from __future__ import annotations

import pytest

from cfaug.data.aste import (
    AsteExample,
    AsteFormatError,
    Triplet,
    align_terms,
    check_triplets,
    example_from_record,
    find_term,
    format_line,
    format_triplets,
    label_sequence,
    parse_label_sequence,
    parse_line,
    parse_triplets,
    read_aste,
    read_aste_lines,
    write_aste,
)
from cfaug.data.records import Record

# real-looking ASTE-Data-V2 lines (canonical spelling, triplets sorted)
LINES = [
    "The food was great but the service slow .####[([1], [3], 'POS'), ([6], [7], 'NEG')]",
    "The battery life is very long and the screen is bright .####[([1, 2], [4, 5], 'POS'), ([8], [10], 'POS')]",
    "I could n't believe how bad the customer service was .####[([7, 8], [5], 'NEG')]",
    "Prices are OK , nothing special .####[([0], [2], 'NEU'), ([0], [4, 5], 'NEU')]",
    "Our waiter was friendly and the fish tacos were fresh and tasty !####"
    "[([1], [3], 'POS'), ([6, 7], [9], 'POS'), ([6, 7], [11], 'POS')]",
    "We went there on a Sunday .####[]",
]


# ------------------------------------------------------------------------------------------------ triplets


def test_parse_triplets_v2_literal():
    got = parse_triplets("[([1], [3], 'POS'), ([6], [7], 'NEG')]")
    assert got == (Triplet((1,), (3,), "POS"), Triplet((6,), (7,), "NEG"))


def test_parse_triplets_json_spelling_equals_literal():
    lit = parse_triplets("[([1, 2], [4, 5], 'POS'), ([8], [10], 'NEU')]")
    js = parse_triplets('[[[1, 2], [4, 5], "POS"], [[8], [10], "NEU"]]')
    assert js == lit
    assert lit[0].aspect == (1, 2) and lit[0].opinion == (4, 5)


def test_parse_triplets_accepts_parsed_list_and_bare_ints():
    assert parse_triplets([[[1], 3, "NEG"]]) == (Triplet((1,), (3,), "NEG"),)
    assert parse_triplets([((2, 3), (0,), "POS")]) == (Triplet((2, 3), (0,), "POS"),)


@pytest.mark.parametrize("word,code", [("positive", "POS"), ("Negative", "NEG"), ("NEUTRAL", "NEU"),
                                       ("pos", "POS"), (" neg ", "NEG")])
def test_polarity_words_normalised_to_codes(word, code):
    assert parse_triplets([[[0], [1], word]])[0].polarity == code


def test_json_with_polarity_word():
    assert parse_triplets('[[[0], [2], "positive"]]') == (Triplet((0,), (2,), "POS"),)


def test_sorted_and_deduplicated():
    got = parse_triplets("[([6], [7], 'NEG'), ([1], [3], 'POS'), ([1], [3], 'positive'), ([1], [2], 'POS')]")
    assert got == (Triplet((1,), (2,), "POS"), Triplet((1,), (3,), "POS"), Triplet((6,), (7,), "NEG"))


def test_empty_list_is_a_valid_label():
    assert parse_triplets("[]") == ()
    assert format_triplets(()) == "[]"


def test_format_triplets_canonical_spelling():
    trips = [Triplet((6,), (7,), "NEG"), Triplet((1, 2), (3,), "POS"), Triplet((6,), (7,), "NEG")]
    assert format_triplets(trips) == "[([1, 2], [3], 'POS'), ([6], [7], 'NEG')]"
    # the JSON spelling comes out canonical
    assert format_triplets(parse_triplets('[[[6], [7], "negative"], [[1, 2], [3], "POS"]]')) == \
        "[([1, 2], [3], 'POS'), ([6], [7], 'NEG')]"


@pytest.mark.parametrize("raw,fragment", [
    ("[([1, 3], [4], 'POS')]", "aspect span [1, 3] is not a run of consecutive token indices"),
    ("[([1], [5, 4], 'POS')]", "opinion span [5, 4] is not a run of consecutive token indices"),
    ("[([1], [3], 'GOOD')]", "polarity 'GOOD' is not one of POS, NEU, NEG"),
    ("[([], [3], 'POS')]", "empty aspect span"),
    ("[([-1], [3], 'POS')]", "holds something other than token indices"),
    ("[([1], [3])]", "triplet 1 must be (aspect indices, opinion indices, polarity)"),
    ("[([1], [3], 'POS'", "cannot parse the triplet list"),
    ("{'a': 1}", "a triplet list must be a list"),
    ("   ", "empty triplet list"),
    ("[(['x'], [3], 'POS')]", "holds something other than token indices"),
    ("[('food', [3], 'POS')]", "aspect must be a list of token indices"),
])
def test_parse_triplets_errors(raw, fragment):
    with pytest.raises(AsteFormatError) as exc:
        parse_triplets(raw)
    assert fragment in str(exc.value)


def test_error_names_the_triplet_number():
    with pytest.raises(AsteFormatError, match=r"^triplet 2: polarity 'BAD'"):
        parse_triplets("[([1], [3], 'POS'), ([4], [5], 'BAD')]")


def test_triplet_bounds_and_terms():
    t = Triplet.from_bounds((1, 2), (4, 5), "POS")
    assert t.aspect == (1, 2) and t.opinion == (4, 5)
    assert t.aspect_bounds == (1, 2) and t.opinion_bounds == (4, 5)
    tokens = "The battery life is very long".split()
    assert t.terms(tokens) == ("battery life", "very long")
    assert t.max_index() == 5
    assert t.to_json() == [[1, 2], [4, 5], "POS"]


def test_check_triplets():
    tokens = "good food".split()
    assert check_triplets(tokens, [Triplet((1,), (0,), "POS")]) is None
    msg = check_triplets(tokens, [Triplet((1,), (0,), "POS"), Triplet((1,), (2,), "POS")])
    assert msg is not None and msg.startswith("triplet 2 points at token 2 but the sentence has 2 tokens")


# ------------------------------------------------------------------------------------------------ lines


@pytest.mark.parametrize("line", LINES)
def test_line_round_trip(line):
    ex = parse_line(line + "\n", id="7")
    assert ex.id == "7"
    assert format_line(ex) == line
    assert parse_line(format_line(ex)) == parse_line(line)


def test_parse_line_fields():
    ex = parse_line(LINES[1])
    assert ex.tokens[:3] == ("The", "battery", "life")
    assert ex.sentence == LINES[1].split("####")[0]
    assert [t.terms(ex.tokens) for t in ex.triplets] == [("battery life", "very long"), ("screen", "bright")]
    assert ex.label() == "[([1, 2], [4, 5], 'POS'), ([8], [10], 'POS')]"


def test_parse_line_normalises_label_spelling():
    ex = parse_line('Great pizza .####[[[1], [0], "positive"], [[1], [0], "POS"]]')
    assert format_line(ex) == "Great pizza .####[([1], [0], 'POS')]"


def test_parse_line_uses_last_separator_and_collapses_spaces():
    ex = parse_line("a  ####  b c####[([1], [0], 'POS')]")
    assert ex.tokens == ("a", "####", "b", "c")


@pytest.mark.parametrize("line,fragment", [
    ("The food was great .", "no '####' between the sentence and its triplets"),
    ("   ####[([0], [0], 'POS')]", "empty sentence"),
    ("Nice view .####[([1], [3], 'POS')]", "triplet 1 points at token 3 but the sentence has 3 tokens"),
    ("Nice view .####[([1], [0], 'happy')]", "polarity 'HAPPY' is not one of"),
    ("Nice view .####[([0, 2], [1], 'POS')]", "not a run of consecutive token indices"),
])
def test_parse_line_errors(line, fragment):
    with pytest.raises(AsteFormatError) as exc:
        parse_line(line)
    assert fragment in str(exc.value)


# ------------------------------------------------------------------------------------------------ sequences


def test_label_sequence():
    ex = parse_line(LINES[0])
    assert label_sequence(ex.tokens, ex.triplets) == "food | great | positive ; service | slow | negative"
    assert ex.label_sequence() == "food | great | positive ; service | slow | negative"
    assert label_sequence(ex.tokens, ()) == ""


@pytest.mark.parametrize("line", LINES[:5])
def test_label_sequence_round_trip(line):
    ex = parse_line(line)
    seq = label_sequence(ex.tokens, ex.triplets)
    terms = parse_label_sequence(seq)
    assert terms == [(*t.terms(ex.tokens), t.polarity) for t in ex.triplets]
    assert align_terms(ex.tokens, terms) == ex.triplets


def test_parse_label_sequence_normalises_and_skips_empty_parts():
    assert parse_label_sequence(" food | great | Positive ;  ; staff | rude | NEGATIVE ") == [
        ("food", "great", "POS"), ("staff", "rude", "NEG")]
    assert parse_label_sequence("") == []


@pytest.mark.parametrize("seq,fragment", [
    ("food | great", "part 1 of the label sequence is not 'aspect | opinion | polarity'"),
    ("food | great | positive ; service | | negative", "part 2 of the label sequence"),
    ("food | great | happy", "part 1: unknown polarity 'happy'"),
    ("food | great | POS", "unknown polarity 'POS'"),
])
def test_parse_label_sequence_errors(seq, fragment):
    with pytest.raises(AsteFormatError) as exc:
        parse_label_sequence(seq)
    assert fragment in str(exc.value)


# ------------------------------------------------------------------------------------------------ alignment


def test_find_term():
    tokens = "The Food was good , the food was great".split()
    assert find_term(tokens, "food") == (1,)
    assert find_term(tokens, "food", near=8) == (6,)
    assert find_term(tokens, "food was great") == (6, 7, 8)
    assert find_term(tokens, "pizza") is None
    assert find_term(tokens, "foo") is None          # token-exact, not a substring
    assert find_term(tokens, "") is None


def test_align_terms_picks_opinion_nearest_its_aspect():
    tokens = "the pasta was good but the wine was not good at all".split()
    got = align_terms(tokens, [("pasta", "good", "POS"), ("wine", "not good", "NEG")])
    assert got == (Triplet((1,), (3,), "POS"), Triplet((6,), (8, 9), "NEG"))
    # "great" occurs at 1 and 6; the aspect at 8 takes the later one, the aspect at 2 the earlier one
    tokens = "a great view and a very great service".split()
    assert align_terms(tokens, [("service", "great", "POS")]) == (Triplet((7,), (6,), "POS"),)
    assert align_terms(tokens, [("view", "great", "POS")]) == (Triplet((2,), (1,), "POS"),)


def test_align_terms_case_insensitive_sorted_deduplicated():
    tokens = "Service slow , Food GREAT".split()
    got = align_terms(tokens, [("food", "great", "POS"), ("service", "slow", "NEG"), ("food", "great", "POS")])
    assert got == (Triplet((0,), (1,), "NEG"), Triplet((3,), (4,), "POS"))


def test_align_terms_none_when_a_term_is_absent():
    tokens = "the pasta was good".split()
    assert align_terms(tokens, [("pasta", "good", "POS"), ("wine", "good", "POS")]) is None
    assert align_terms(tokens, [("pasta", "bad", "NEG")]) is None
    assert align_terms(tokens, [("pasta", "good", "POS")]) == (Triplet((1,), (3,), "POS"),)


# ------------------------------------------------------------------------------------------------ files


def test_read_aste_lines_ids_and_rejects():
    lines = [LINES[0] + "\n", "\n", "no separator\n", LINES[1] + "\r\n", "x .####[([4], [0], 'POS')]\n"]
    examples, rejects = read_aste_lines(lines)
    assert [e.id for e in examples] == ["1", "4"]
    assert [(n, line) for n, _, line in rejects] == [(3, "no separator"), (5, "x .####[([4], [0], 'POS')]")]
    assert "no '####'" in rejects[0][1] and "points at token 4" in rejects[1][1]


def test_read_write_aste_round_trip(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    examples = read_aste(path)
    assert [format_line(e) for e in examples] == LINES
    assert [e.id for e in examples] == [str(i) for i in range(1, len(LINES) + 1)]
    out = tmp_path / "copy.txt"
    write_aste(examples, out)
    assert out.read_text(encoding="utf-8") == "\n".join(LINES) + "\n"


def test_read_aste_raises_naming_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(LINES[0] + "\n\nNice view .####[([1], [9], 'POS')]\nno separator\n", encoding="utf-8")
    with pytest.raises(AsteFormatError) as exc:
        read_aste(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}, line 3: ")
    assert "points at token 9" in msg


def test_example_from_record():
    rec = Record(id="r1", fields={"text": "The food was great ."}, label="[([1], [3], 'POS')]")
    ex = example_from_record(rec)
    assert ex == AsteExample(("The", "food", "was", "great", "."), (Triplet((1,), (3,), "POS"),), id="r1")
    other = example_from_record(rec, label="[([1], [2], 'NEU')]")
    assert other.triplets == (Triplet((1,), (2,), "NEU"),)
    assert example_from_record(Record(id="r2", fields={"text": "hi"}, label=None)).triplets == ()
