from cfaug.evaluate.result import MetricResult, mean_of


def test_signature_depends_on_settings_not_value():
    a = MetricResult("self_bleu", 10.0, 5, {"max_n": 4})
    b = MetricResult("self_bleu", 20.0, 7, {"max_n": 4})
    c = MetricResult("self_bleu", 10.0, 5, {"max_n": 3})
    assert a.signature == b.signature
    assert a.signature != c.signature
    assert a.signature.startswith("self_bleu|")


def test_to_json_cleans_nan_and_includes_items_on_request():
    r = MetricResult("x", float("nan"), 2, {}, per_item=[1.0, float("nan")])
    j = r.to_json(include_items=True)
    assert j["value"] is None and j["per_item"] == [1.0, None]
    assert "per_item" not in r.to_json()


def test_mean_of_skips_missing():
    assert mean_of([1.0, None, 3.0]) == 2.0
    assert mean_of([None]) is None
