"""The one rule the TF-IDF classifiers choose their settings by (cfaug.classifiers.selection)."""

import pytest

from cfaug.classifiers.selection import (
    MIN_SELECTION_ROWS,
    balanced_accuracy,
    best_setting,
    closeness,
    select_setting,
    stratified_folds,
)

GRID = [{"C": c, "ngram_max": n} for c in (0.01, 0.1, 1.0, 10.0) for n in (1, 2)]
DEFAULT = {"C": 1.0, "ngram_max": 2}


def test_balanced_accuracy_gives_a_one_label_model_one_over_the_labels():
    gold = ["a"] * 9 + ["b"]
    assert balanced_accuracy(["a"] * 10, gold) == 0.5  # plain accuracy would be 0.9
    assert balanced_accuracy(gold, gold) == 1.0
    assert balanced_accuracy(["a"] * 8 + ["b", "b"], gold) == pytest.approx((8 / 9 + 1) / 2)
    with pytest.raises(ValueError, match="differ in length"):
        balanced_accuracy(["a"], gold)


def test_ties_go_to_the_setting_nearest_the_default():
    assert closeness({"C": 1.0, "ngram_max": 2}, DEFAULT) == (0.0, 0.0)
    assert closeness({"C": 0.1, "ngram_max": 2}, DEFAULT) == closeness({"C": 10.0, "ngram_max": 2}, DEFAULT)
    assert closeness({"C": 0.01, "ngram_max": 2}, DEFAULT) > closeness({"C": 10.0, "ngram_max": 1}, DEFAULT)
    # equal scores: not the grid's first setting (C = 0.01), the default
    assert GRID[best_setting(GRID, [0.5] * 8, DEFAULT, rows=17)] == DEFAULT
    # within one standard error of the best (sqrt(.8 * .2 / 100) = 0.04): still a tie
    scores = [0.80, 0.80, 0.78, 0.77, 0.70, 0.70, 0.70, 0.70]
    assert GRID[best_setting(scores=scores, grid=GRID, default=DEFAULT, rows=100)] == {"C": 0.1, "ngram_max": 2}
    assert GRID[best_setting(GRID, [0.80, 0.80, 0.70, 0.70, 0.77, 0.78, 0.70, 0.70], DEFAULT, 100)] == DEFAULT
    # far more rows: the same gap is more than noise, and the best setting wins
    assert GRID[best_setting(GRID, scores, DEFAULT, rows=100000)] == {"C": 0.01, "ngram_max": 2}


def test_stratified_folds_are_seeded_and_keep_each_labels_share():
    labels = ["a"] * 30 + ["b"] * 10
    folds = stratified_folds(labels, 5, seed=3)
    assert sorted(i for f in folds for i in f) == list(range(40))
    assert all(sum(labels[i] == "b" for i in f) == 2 for f in folds)
    assert folds == stratified_folds(labels, 5, seed=3) != stratified_folds(labels, 5, seed=4)


def predict_by_grid(right_by_setting):
    """A fake trainer: the setting of index g gets a row right when ``right_by_setting[g](row)``."""
    def predict(train_x, train_y, dev_x):
        return [[row if ok(row) else "wrong" for row in dev_x] for ok in right_by_setting]
    return predict


def rows(n):
    """Rows whose input is their own label, half "a", half "b"."""
    labels = ["a", "b"] * (n // 2)
    return list(labels), labels


def test_the_dev_set_cross_validation_or_the_default_decides_by_the_number_of_rows():
    grid = [{"C": 0.01}, {"C": 1.0}]
    only_first = predict_by_grid([lambda r: True, lambda r: r == "a"])  # C = 0.01 clearly better
    x, y = rows(MIN_SELECTION_ROWS)
    dev_x, dev_y = rows(MIN_SELECTION_ROWS)
    on_dev = select_setting(grid, {"C": 1.0}, x, y, dev_x, dev_y, only_first)
    assert (on_dev.how, on_dev.setting, on_dev.score, on_dev.rows) == ("dev set", {"C": 0.01}, 1.0, 50)
    assert on_dev.scores == [1.0, 0.5] and on_dev.facts(grid)["grid_scores"] == [{"C": 0.01, "score": 1.0},
                                                                                  {"C": 1.0, "score": 0.5}]
    small_dev = select_setting(grid, {"C": 1.0}, x, y, dev_x[:20], dev_y[:20], only_first)
    assert small_dev.how == "5-fold cross-validation" and small_dev.rows == 50
    assert small_dev.note.startswith("the dev set's 20 rows are under 50")
    few = select_setting(grid, {"C": 1.0}, x[:48], y[:48], None, None, only_first)
    assert (few.how, few.setting, few.score) == ("default", {"C": 1.0}, None)
    assert "48 training rows, under 50" in few.facts(grid)["selection_note"] and "grid_scores" not in few.facts(grid)
    one_label_short = select_setting(grid, {"C": 1.0}, x + ["b"], y[:50] + ["c"], None, None, only_first)
    assert one_label_short.how == "default" and "a label has a single training row" in one_label_short.note
    only = select_setting([{"C": 3.0}], {"C": 1.0}, x, y, None, None, only_first)
    assert (only.how, only.setting) == ("only setting", {"C": 3.0})
    with pytest.raises(ValueError, match="differ in length"):
        select_setting(grid, {"C": 1.0}, x, y[:3], None, None, only_first)
