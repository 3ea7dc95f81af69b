from cfaug.nlp.word_diff import Segment, side_by_side, word_diff


def test_replacement_is_delete_then_insert():
    assert word_diff("a good film", "a bad film") == [
        Segment("equal", "a "), Segment("delete", "good"), Segment("insert", "bad"), Segment("equal", " film")]


def test_pieces_join_back_to_both_texts():
    a, b = "I didn't like it.  Great!\nReally.", "I did like it, great!\nReally, truly."
    segs = word_diff(a, b)
    left, right = side_by_side(segs)
    assert "".join(s.text for s in left) == a
    assert "".join(s.text for s in right) == b
    assert Segment("delete", "didn't") in segs and Segment("insert", "did") in segs


def test_identical_and_pure_insertion():
    assert word_diff("same text", "same text") == [Segment("equal", "same text")]
    assert word_diff("good", "not good") == [Segment("insert", "not "), Segment("equal", "good")]


def test_an_html_line_break_is_one_piece():
    segs = word_diff("so great.<br />Really", "so bad. Really")
    assert Segment("delete", "<br />") in segs
    assert word_diff("a<BR/>b", "a<BR/>c")[0] == Segment("equal", "a<BR/>")
    left, right = side_by_side(word_diff("x<br>y <br />z", "x<br>w <br />z"))
    assert "".join(s.text for s in left) == "x<br>y <br />z" and "".join(s.text for s in right) == "x<br>w <br />z"
