"""The generator vocabulary: ids, special tokens, readable text back."""

from cfaug.seq2seq.vocab import BOS, EOS, PAD, UNK, WordVocab, detokenize


def test_build_keeps_frequent_words_most_frequent_first(tmp_path):
    v = WordVocab.build(["the food was good .", "the food was bad .", "the room ."], min_count=2)
    assert v.words[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert v.words[4:] == [".", "the", "food", "was"]  # equal counts: alphabetical
    assert v.encode("The food was great.") == [5, 6, 7, UNK, 4, EOS]
    v.save(tmp_path / "vocab.json")
    assert WordVocab.load(tmp_path / "vocab.json").words == v.words


def test_decode_stops_at_the_end_and_reads_as_text():
    v = WordVocab(["i", "don't", "like", "it", ".", ",", "(", ")", "really"])
    ids = [BOS] + [v.index[w] for w in ["i", "don't", "like", "it", ",", "really", "."]] + [EOS, v.index["i"], PAD]
    assert v.decode(ids) == "i don't like it, really."
    assert v.decode([999]) == "<unk>"


def test_detokenize_brackets_and_punctuation():
    assert detokenize(["the", "fries", "(", "cold", ")", "were", "bad", "!"]) == "the fries (cold) were bad!"


def test_detokenize_joins_clitics_split_by_the_tokenizer():
    from cfaug.nlp.tokens import tokenize

    assert tokenize("it 's great") == ["it", "'", "s", "great"]
    assert detokenize(tokenize("it 's great and i 'm back , they 've won")) == "it's great and i'm back, they've won"
    assert detokenize(tokenize("do n't go")) == "don't go"
