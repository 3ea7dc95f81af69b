"""auto-CAD as a method: fit on the 40-row fixture, load the artifacts, generate, and check every
candidate's provenance.

Two fitted and loaded instances are shared by the module (each takes seconds): the default recipe (TF-IDF
classifier trained on the input, lexicon proposer, packaged sentence encoder) and one with a tiny HF
classifier and a tiny masked LM given by local path."""

from __future__ import annotations

import re

import dataclasses

import pytest

from cfaug.data.io import read_dataset
from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import make_task
from cfaug.local_models import ModelPathError
from cfaug.nlp.tokens import levenshtein, token_edit_rate
from cfaug.nlp.tokens import tokenize as tokenize_words
from cfaug.methods.auto_cad import AutoCAD, AutoCADConfig
from cfaug.methods.auto_cad.causal_terms import CausalTerm
from cfaug.methods.auto_cad.planner import removal
from cfaug.editing.lexicon import NEGATORS, load_lexicon
from cfaug.editing.text import apply_edits, tokenize
from cfaug.config import ConfigError
from cfaug.methods import build_method
from cfaug.training.context import FitContext, StageContext

LEX = load_lexicon()


@pytest.fixture(scope="module")
def task():
    return make_task("sentiment")


@pytest.fixture(scope="module")
def records(sentiment_tsv, task):
    return read_dataset(sentiment_tsv, task).records


@pytest.fixture(scope="module")
def items(records, task):
    return [WorkItem(r, t) for r in records for t in task.targets(r)]


def fitted(config, records, task, artifacts, seed=0):
    """An auto-CAD fitted on ``records`` into ``artifacts`` and loaded from there (as a run does)."""
    m = AutoCAD(config, seed=seed)
    fit_facts = m.fit(records, task, FitContext(artifact_dir=artifacts, progress=False))
    return m, fit_facts, m.load(artifacts, task, StageContext(progress=False))


@pytest.fixture(scope="module")
def default_artifacts(tmp_path_factory):
    return tmp_path_factory.mktemp("auto-cad-default")


@pytest.fixture(scope="module")
def default_fit(records, task, encoder_path, default_artifacts):
    # C reads the 40 fixture rows alone (no shipped background), so the tests below see a weak, unsure C;
    # RM-CT and REP-CT edit until it gives 0.7, and the flip filter passes it at flip_min_prob (0.5)
    m, fit_facts, facts = fitted(AutoCADConfig(encoder=str(encoder_path), min_similarity=0.5, variants="rm,rep",
                                               require_flip=True, classifier_background="none",
                                               min_target_prob=0.7),
                                 records, task, default_artifacts)
    yield m, fit_facts, facts
    m.close()


@pytest.fixture(scope="module")
def default_method(default_fit):
    m, _, facts = default_fit
    return m, facts


@pytest.fixture(scope="module")
def default_results(default_method, items, task):
    return default_method[0].generate(items, task)


def candidates(results):
    return [cf for cfs in results for cf in cfs]


def with_config(method, artifacts, task, **changes):
    """Another instance with some filter settings changed, loaded from the same artifacts (filter settings
    are not fit parameters; filters are built when the method is loaded)."""
    other = AutoCAD(dataclasses.replace(method.config, **changes), seed=method.seed)
    other.load(artifacts, task, StageContext(progress=False))
    return other


# ------------------------------------------------------------------------------------------ provenance


def test_fit_and_load_report_the_classifier_and_the_proposer(default_fit, default_artifacts):
    _, fit_facts, facts = default_fit
    assert fit_facts["classifier_folds"] == 5 and fit_facts["training_texts"] == 40 and fit_facts["mined_pairs"] == 0
    assert sorted(p.name for p in default_artifacts.glob("classifier-fold*.pkl")) == [
        f"classifier-fold{f}.pkl" for f in range(5)]
    assert facts["classifier"]["judge"] == "tfidf-logreg" and facts["classifier_folds"] == 5
    assert facts["proposer"] == "lexicon" and facts["mined_pairs"] == 0


def test_edits_rebuild_the_text_and_name_what_they_changed(default_results, items):
    assert len(default_results) == len(items)
    for item, cfs in zip(items, default_results):
        orig = item.record.text()
        for cf in cfs:
            assert cf.source is item.record and cf.target == item.target and cf.method == "auto-cad.v1"
            edits = cf.meta["edits"]
            assert edits and all(orig[e["start"]:e["end"]] == e["old"] for e in edits)
            from cfaug.editing.text import Edit

            rebuilt = apply_edits(orig, [Edit(e["start"], e["end"], e["new"], e["old"], e["kind"]) for e in edits])
            assert rebuilt == cf.fields["text"] != orig
            assert cf.meta["edit_rate"] == round(token_edit_rate(orig, cf.fields["text"]), 4)
            assert cf.meta["causal_terms"] and all("importance" in t for t in cf.meta["causal_terms"])


def without_article(span):
    """An edit that also rewrote the article before its word ("A boring" -> "An entertaining"): the word."""
    parts = span.split()
    return parts[-1] if len(parts) == 2 and parts[0].lower() in ("a", "an") else span


def test_each_variant_makes_its_kind_of_edit(default_results, items):
    variants = set()
    for item, cfs in zip(items, default_results):
        for cf in cfs:
            variants.add(cf.meta["variant"])
            for e in cf.meta["edits"]:
                if e["kind"] == "remove":
                    assert cf.meta["variant"] == "rm-ct" and e["new"] in ("", "a", "an", "A", "An")
                    # a lexicon word of the label, or a word the classifier's sensitivity found
                    found = {t["term"] for t in cf.meta["causal_terms"] if t.get("source") == "classifier"}
                    word = without_article(e["old"])
                    assert LEX.polarity(word) == item.record.label or word in found
                elif e["kind"] == "negation":
                    # the negator, or a span that starts with it ("didn't enjoy" -> "enjoyed")
                    words = e["old"].lower().replace("n't", " n't").split()
                    assert any(w in NEGATORS or w == "n't" for w in words[:3])
                else:
                    assert e["kind"] == "replace" and cf.meta["variant"] == "rep-ct"
                    assert LEX.polarity(without_article(e["new"])) == item.target  # a word of the target's polarity
    assert variants == {"rm-ct", "rep-ct"}


def edit_rate_allowed(config, original, rewrite):
    """The edit-rate filter's verdict: a rate of at most max_edit_rate (max_edit_rate_short for a text of at most
    20 tokens), or at most min_edits token edits."""
    old, new = tokenize_words(original), tokenize_words(rewrite)
    bound = config.max_edit_rate
    if config.max_edit_rate_short is not None and len(old) <= 20:
        bound = config.max_edit_rate_short
    return token_edit_rate(original, rewrite) <= bound or levenshtein(old, new) <= config.min_edits


def test_filters_are_recorded_and_decide_passed(default_method, default_results):
    config = default_method[0].config
    assert (config.max_edit_rate, config.max_edit_rate_short, config.min_edits) == (0.3, 0.5, 3)
    cands = candidates(default_results)
    for cf in cands:
        f = cf.meta["filters"]
        # in the order they run; the completeness check reads the candidates that passed them all
        assert list(f) == ["flip", "edit_rate", "similarity"] + (["complete"] if "complete" in f else [])
        assert ("complete" in f) == (all(f[k] for k in ("flip", "edit_rate", "similarity")))
        assert f["flip"] == cf.meta["own_judge"]["flipped"]
        if f["flip"]:
            assert f["edit_rate"] == edit_rate_allowed(config, cf.source.text(), cf.fields["text"])
        else:
            assert f["edit_rate"] is None  # not computed: an earlier filter already failed
        if f["flip"] and f["edit_rate"]:
            assert f["similarity"] == (cf.meta["similarity"] >= 0.5)
        else:
            assert f["similarity"] is None and "similarity" not in cf.meta  # not computed
        assert cf.meta["passed"] == cf.passed == all(v is not False for v in f.values())
    passing_items = sum(any(cf.passed for cf in cfs) for cfs in default_results)
    assert passing_items >= len(default_results) // 2


def assert_no_repeated_text(results):
    for cfs in results:
        texts = [cf.fields["text"] for cf in cfs]
        assert len(texts) == len(set(texts)), texts


def test_no_item_gets_the_same_text_twice(default_results):
    assert_no_repeated_text(default_results)


def test_a_negation_only_text_gives_one_candidate(default_method, task):
    m, _ = default_method
    item = WorkItem(Record(id="neg-only", fields={"text": "The film is not bad."}, label="positive"), "negative")
    (cfs,) = m.generate([item], task)
    assert [cf.fields["text"] for cf in cfs] == ["The film is bad."]
    assert cfs[0].meta["edits"] == [{"start": 12, "end": 15, "old": "not", "new": "", "kind": "negation"}]


# ------------------------------------------------------------------------------------ minimality filter


def test_edit_rate_filter_marks_candidates_failed(default_method, default_artifacts, items, task):
    m, _ = default_method
    # max_edit_rate_short=None: the short fixture texts are held to max_edit_rate too
    results = with_config(m, default_artifacts, task, max_edit_rate=0.05, max_edit_rate_short=None,
                          min_edits=0).generate(items[:8], task)
    cands = candidates(results)
    assert cands
    for cf in cands:
        f = cf.meta["filters"]
        assert cf.meta["edit_rate"] > 0.05
        # the edit-rate filter runs after the flip filter: it fails every candidate that got that far
        assert f["edit_rate"] is (False if f["flip"] else None) and f["similarity"] is None
        assert cf.meta["passed"] is False
    assert any(cf.meta["filters"]["edit_rate"] is False for cf in cands)


def test_similarity_filter_marks_candidates_failed(default_method, default_artifacts, items, task):
    m, _ = default_method
    results = with_config(m, default_artifacts, task, min_similarity=0.999).generate(items[:8], task)
    judged = [cf for cf in candidates(results) if cf.meta["filters"]["flip"] and cf.meta["filters"]["edit_rate"]]
    assert judged
    for cf in judged:
        assert cf.meta["similarity"] < 0.999 and cf.meta["filters"]["similarity"] is False and not cf.passed


def test_similarity_off_skips_the_encoder(default_method, default_artifacts, items, task):
    m, _ = default_method
    off = with_config(m, default_artifacts, task, min_similarity=0.0)
    results = off.generate(items[:4], task)
    assert candidates(results)
    for cf in candidates(results):
        assert "similarity" not in cf.meta["filters"] and "similarity" not in cf.meta
    assert off._encoder is None  # the lexicon proposer reads its word vectors from the artifacts


# ----------------------------------------------------------------------------------------- determinism


def test_generation_depends_only_on_the_seed_and_the_item(default_method, items, task, default_results):
    m, _ = default_method
    again = m.generate(list(reversed(items[:6])), task)[::-1]  # other batch, other order
    assert [[cf.fields["text"] for cf in cfs] for cfs in again] == \
        [[cf.fields["text"] for cf in cfs] for cfs in default_results[:6]]
    assert [[cf.meta for cf in cfs] for cfs in again] == [[cf.meta for cf in cfs] for cfs in default_results[:6]]


def test_the_seed_drives_context_sampling(default_method, items, task, default_results):
    m, _ = default_method
    m.seed = 1
    try:
        other = m.generate(items[:6], task)
    finally:
        m.seed = 0
    imp = lambda res: [t["importance"] for cfs in res for cf in cfs for t in cf.meta["causal_terms"]]  # noqa: E731
    assert imp(other) != imp(default_results[:6])


# ------------------------------------------------------------------------------------- negation removal


@pytest.mark.parametrize("text,expected", [
    ("I won't forget it.", "I will forget it."),
    ("It isn't boring.", "It is boring."),
    ("You can't miss it.", "You can miss it."),
    ("I cannot recommend it.", "I can recommend it."),
    ("It is not good.", "It is good."),
    ("Never a dull moment.", "A dull moment."),
    ("A film without charm.", "A film with charm."),
])
def test_removing_a_negator(text, expected):
    toks = tokenize(text)
    head = next(i for i, t in enumerate(toks) if t.lower in NEGATORS)
    edit = removal(toks, CausalTerm(head=head, phrase=(head,), kind="negation"))
    assert edit.kind == "negation" and apply_edits(text, [edit]) == expected


def test_removing_a_word():
    toks = tokenize("A great film.")
    edit = removal(toks, CausalTerm(head=1, phrase=(1,), kind="word"))
    assert (edit.old, edit.new, edit.kind) == ("great", "", "remove")


# ---------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("params,message", [
    ({"replace": "sometimes"}, r"parameter replace of auto-cad.v1: 'sometimes' is not one of all, until-flip, weighed$"),
    ({"variants": "rm,swap"}, r"parameter variants of auto-cad.v1: 'rm,swap'; use a comma-separated choice of rm, rep, syn$"),
    ({"variants": ""}, r"parameter variants of auto-cad.v1: ''; use a comma-separated choice of rm, rep, syn$"),
    ({"variants": "rep,syn"}, r"variants=syn needs a masked LM to propose synonyms"),
    ({"max_edit_rate": "-1.0"}, r"parameter max_edit_rate of auto-cad.v1: -1.0 is below the minimum 0$"),
    ({"classifier": "gpt"}, r"classifier must be one of tfidf, hf, llm or a judge spec, got 'gpt'"),
    ({"classifier": "hf"}, r"classifier=hf needs classifier_model=PATH"),
])
def test_bad_parameters(params, message):
    with pytest.raises(ConfigError, match=message):
        build_method("auto-cad", params)


def test_unsupported_task_and_single_label_input(records, tmp_path, sentiment_tsv, tiny_mlm_dir):
    with pytest.raises(ConfigError, match="supports tasks sentiment, rating, not 'nli'"):
        AutoCAD().prepare(records, make_task("nli"), StageContext())
    positives = [r for r in records if r.label == "positive"]
    with pytest.raises(ConfigError, match=r"only the label\(s\) \['positive'\].*-p classifier_data=FILE") as err:
        AutoCAD(AutoCADConfig(classifier_background="none")).fit(
            positives, make_task("sentiment"), FitContext(artifact_dir=tmp_path / "a", progress=False))
    assert 'params={"classifier_data": FILE}' in str(err.value)  # the Python spelling too
    assert "classifier_background=general" in str(err.value)
    # by default C also reads the shipped sentiment sample, so a one-label file runs as it is
    m = AutoCAD(AutoCADConfig(mlm=str(tiny_mlm_dir)))
    (tmp_path / "c").mkdir()
    facts = m.fit(positives, make_task("sentiment"), FitContext(artifact_dir=tmp_path / "c", progress=False))
    assert facts["background"] == "general" and facts["background_rows"] == 20000
    assert facts["warnings"] == [] and facts["classifier_folds"] == 5
    m.load(tmp_path / "c", make_task("sentiment"), StageContext(progress=False))
    probs = m.classifier.predict_proba(["a dreadful, tedious and lifeless mess"])[0]  # words no fixture row has
    assert m.classifier.labels[int(probs.argmax())] == "negative"
    results = m.generate([WorkItem(r, "negative") for r in positives], make_task("sentiment"))
    assert sum(bool(cfs) for cfs in results) >= len(positives) // 2
    # what the message suggests: a classifier trained on other labelled data
    m = AutoCAD(AutoCADConfig(classifier_data=str(sentiment_tsv), mlm=str(tiny_mlm_dir)))
    (tmp_path / "b").mkdir()
    facts = m.fit(positives, make_task("sentiment"), FitContext(artifact_dir=tmp_path / "b", progress=False))
    assert facts["classifier_folds"] == 1
    m.load(tmp_path / "b", make_task("sentiment"), StageContext(progress=False))
    results = m.generate([WorkItem(r, "negative") for r in positives], make_task("sentiment"))
    assert sum(bool(cfs) for cfs in results) >= len(positives) // 2  # one-label input is rewritten


@pytest.mark.parametrize("params,name", [({"classifier": "hf", "classifier_model": "bert-base-uncased"}, "bert-base-uncased"),
                                         ({"mlm": "distilroberta-base"}, "distilroberta-base")])
def test_hub_names_are_refused_before_anything_is_fetched(records, task, params, name, monkeypatch):
    import huggingface_hub

    def no_network(*a, **k):
        raise AssertionError("a download was attempted")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_network)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_network)
    with pytest.raises(ModelPathError, match=f"'{name}' is not a local folder.*does not download models"):
        build_method("auto-cad", {**params, "min_similarity": 0}).prepare(records, task, StageContext())


# ------------------------------------------------------------------------------ HF classifier and MLM


@pytest.fixture(scope="module")
def hf_method(records, task, tiny_classifier_dir, tiny_mlm_dir, tmp_path_factory):
    # alternatives=1: one REP-CT rewrite per row, each word's best proposal (the tests read the MLM's ranking)
    m, _, facts = fitted(AutoCADConfig(classifier="hf", classifier_model=str(tiny_classifier_dir),
                                       mlm=str(tiny_mlm_dir), min_similarity=0, tagger="none", alternatives=1),
                         records, task, tmp_path_factory.mktemp("auto-cad-hf"))
    yield m, facts
    m.close()


@pytest.fixture(scope="module")
def hf_results(hf_method, items, task):
    return hf_method[0].generate(items, task)


def test_local_hf_classifier_and_masked_lm(hf_method, hf_results, items, tiny_classifier_dir, tiny_mlm_dir):
    m, facts = hf_method
    assert facts["classifier"]["path"] == str(tiny_classifier_dir) and facts["classifier_folds"] == 1
    assert facts["proposer"] == f"mlm:{tiny_mlm_dir.name}"
    replaced = []
    for item, cfs in zip(items, hf_results):
        for cf in cfs:
            assert cf.meta["own_judge"]["name"] == f"hf:{tiny_classifier_dir.name}"
            assert cf.meta["proposer"] == f"mlm:{tiny_mlm_dir.name}"
            news = [without_article(e["new"]).lower() for e in cf.meta["edits"] if e["kind"] == "replace"]
            if news:
                replaced.append((item.target, news))
    # the tiny MLM ranks great > awful > terrible above every other word: each rewrite uses the top word of
    # its target, and a second opinion word of the same sentence takes the next one ("awful" then "terrible")
    assert replaced and all({"negative": "awful", "positive": "great"}[t] in news for t, news in replaced)
    assert ("negative", ["awful", "terrible", "stupid"]) in replaced
    assert m._encoder is None  # no similarity filter, no lexicon proposer: the encoder is never loaded


def test_removal_and_replacement_giving_the_same_text_count_once(hf_results):
    # with this classifier, RM-CT and REP-CT both just drop "not" in "It is not boring at all."
    assert_no_repeated_text(hf_results)


def test_classifier_labels_must_be_task_labels(records, task, tiny_classifier_dir, tiny_mlm_dir, tmp_path):
    cfg = AutoCADConfig(classifier="hf", classifier_model=str(tiny_classifier_dir), classifier_labels="joy,anger",
                        mlm=str(tiny_mlm_dir), min_similarity=0)
    m = AutoCAD(cfg)
    with pytest.raises(ConfigError, match=r"output 'joy' is not a label of the task \(negative, positive\); "
                                          "pass -p classifier_labels="):
        m.prepare(records, task, StageContext(progress=False))  # before any work
    m.fit(records, task, FitContext(artifact_dir=tmp_path, progress=False))
    with pytest.raises(ConfigError, match=r"output 'joy' is not a label of the task"):
        m.load(tmp_path, task, StageContext(progress=False))
    # spellings of the task's labels are mapped onto them
    m = AutoCAD(AutoCADConfig(classifier="hf", classifier_model=str(tiny_classifier_dir), classifier_labels="pos,neg",
                              mlm=str(tiny_mlm_dir), min_similarity=0))
    m.load(tmp_path, task, StageContext(progress=False))
    assert m.classifier.labels == ("positive", "negative")


def test_replacements_keep_the_word_class_of_the_replaced_word(default_method, default_results, items):
    from cfaug.nlp.inflect import lemmas, upos_of_tag

    m = default_method[0]
    assert m.tagger is not None and default_method[1]["tagger"]["name"] == "en_ewt"
    checked = 0
    for item, cfs in zip(items, default_results):
        tags = {t.idx: t.tag_ for t in m.tagger(item.record.text())}
        for cf in cfs:
            for e in cf.meta["edits"]:
                if e["kind"] != "replace" or " " in e["old"]:
                    continue
                upos = upos_of_tag(tags.get(e["start"], ""))
                if upos:
                    assert upos in lemmas(e["new"]), (e, upos)
                    checked += 1
    assert checked >= 10


def test_an_item_without_anything_to_flip_says_why(default_method, default_artifacts, task):
    from cfaug.data.records import NoCounterfactual

    m = default_method[0]
    item = WorkItem(Record("plain", {"text": "The film runs two hours and was shot in Ohio."}, "positive"), "negative")
    [res] = m.generate([item], task)
    assert isinstance(res, NoCounterfactual) and res == []
    # the words C weighs were searched too: the reason says so, with C's reading of the whole text
    assert re.fullmatch(r"no opinion word, negation, promise or rating of the source polarity, nor an adjective or "
                        r"adverb the classifier weighs toward it \(the classifier gives the source label "
                        r"(only )?[01]\.\d\d for the whole text[:,] .*\)", res.reason), res.reason
    prob = float(re.search(r"source label (?:only )?([01]\.\d\d)", res.reason).group(1))
    assert ("rests on facts or context" in res.reason) == (prob >= 0.5), res.reason
    lexicon_only = with_config(m, default_artifacts, task, causal_terms="lexicon")
    [res] = lexicon_only.generate([item], task)
    assert res.reason == "no opinion word, negation or rating of the source polarity"


def test_candidates_carry_a_graded_confidence(default_results):
    for cf in candidates(default_results):
        assert cf.meta["confidence"] == cf.meta["own_judge"]["target_prob"]


def test_several_diverse_counterfactuals_per_row(records, task, items, tmp_path):
    m, _, _ = fitted(AutoCADConfig(alternatives=3, keep=3, require_flip=False, folds=2), records, task, tmp_path)
    results = m.generate(items, task)
    counts = [len([cf for cf in cfs if cf.meta["variant"] == "rep-ct"]) for cfs in results]
    assert max(counts) == 3 and sum(c >= 2 for c in counts) >= len(items) // 2
    for cfs in results:
        texts = [cf.fields["text"] for cf in cfs]
        assert len(texts) == len(set(texts))  # no two alike


# ------------------------------------------------------------------------ small or one-sided training data

SPELLINGS = ("-p classifier_data=FILE", 'params={"classifier_data": FILE}', "--train-data FILE", "train_data=FILE")


def test_a_fold_without_both_labels_is_a_warning_that_suggests_other_data(records, task, tmp_path):
    """A sorted file cut short (or a rare label) leaves a cross-fitting fold with one label: C is cross-fitted
    in fewer folds, down to one model that judges its own training texts, and the run says so (both
    spellings of each remedy, other labelled data first) and keeps it in the facts."""
    lopsided = [r for r in records if r.label == "positive"] + [next(r for r in records if r.label == "negative")]
    logged = []
    facts = AutoCAD(AutoCADConfig(classifier_background="none")).fit(
        lopsided, task, FitContext(artifact_dir=tmp_path, progress=False, log=logged.append))
    assert facts["classifier_folds"] == 1
    assert "one model trained on every row judges those same rows" in facts["classifier_folds_note"]
    warning = next(line for line in logged if "cross-fitted in 1 folds" in line)
    assert warning.startswith("warning: auto-cad's classifier is cross-fitted")
    for spelling in (*SPELLINGS, "-p folds=1", 'params={"folds": 1}'):
        assert spelling in warning, spelling
    assert warning.index("classifier_data") < warning.index("folds=1")
    # it also said that the data is one-sided and what to do
    warnings = [line for line in logged if line.startswith("warning: ")]
    assert any("'negative'" in w and "5%" in w and "-p classifier_data=FILE" in w for w in warnings), logged


def test_small_training_data_is_reported_in_the_facts(default_fit):
    _, fit_facts, _ = default_fit
    assert len(fit_facts["warnings"]) == 1  # 40 balanced rows: small, not one-sided
    assert "40 training rows" in fit_facts["warnings"][0]
    assert all(s in fit_facts["warnings"][0] for s in SPELLINGS)


@pytest.mark.parametrize("counts, expected", [
    ({"positive": 100, "negative": 100}, []),
    ({"positive": 1000, "negative": 120}, []),
    ({"positive": 20, "negative": 20}, ["40 training rows"]),
    ({"positive": 285, "negative": 15}, ["label 'negative' is 5% of the 300 training rows"]),
    ({"positive": 150, "negative": 10}, ["160 training rows", "label 'negative' is 6%"]),
])
def test_training_data_warnings(counts, expected):
    from cfaug.methods.auto_cad.training import training_data_warnings

    labels = [lab for lab, n in counts.items() for _ in range(n)]
    warnings = training_data_warnings(labels, ("negative", "positive"))
    assert len(warnings) == len(expected)
    for w, e in zip(warnings, expected):
        assert e in w


def test_the_warning_is_logged_during_a_run(records, task, tmp_path):
    """What a command-line user sees: a "warning:" line on the run's log (stderr). C reads the 40 rows alone
    (no shipped background, which would make the training data large enough for no warning)."""
    logged = []
    m = AutoCAD(AutoCADConfig(tagger="none", classifier_background="none"))
    facts = m.fit(records, task, FitContext(artifact_dir=tmp_path, progress=False, log=logged.append))
    assert facts["warnings"] and "40 training rows" in facts["warnings"][0]
    assert [f"warning: {w}" for w in facts["warnings"]] == [line for line in logged if line.startswith("warning")]


def test_without_require_flip_every_rewrite_is_kept_with_a_graded_confidence(default_method, default_artifacts,
                                                                             default_results, items, task):
    m, _ = default_method
    # keep=10: the choice step writes every candidate that passed, so the two settings can be compared
    graded = with_config(m, default_artifacts, task, require_flip=False, keep=10)
    results = graded.generate(items, task)
    kept = candidates(results)
    assert all(cf.passed and "flip" not in cf.meta["filters"] for cf in kept if cf.meta["filters"]["edit_rate"])
    assert all("complete" not in cf.meta["filters"] for cf in kept)  # no completeness check without require_flip
    assert any(not cf.meta["own_judge"]["flipped"] for cf in kept)  # C is not sure of every rewrite: kept anyway
    assert all(0.0 <= cf.meta["confidence"] <= 1.0 for cf in kept)
    # the filter is an option: it drops exactly the rewrites C does not give the target with flip_min_prob (here
    # the level meta.own_judge.flipped reports without require_flip, min_target_prob)
    strict = candidates(with_config(m, default_artifacts, task, require_flip=True, completeness=False, keep=10,
                                    flip_min_prob=m.config.min_target_prob).generate(items, task))
    assert {str(cf.fields) for cf in strict if cf.passed} == {
        str(cf.fields) for cf in kept if cf.passed and cf.meta["confidence"] >= m.config.min_target_prob
        and cf.meta["own_judge"]["flipped"]}
    # the defaults put precision first: only flipped, complete rewrites are written, the best one per variant
    c = AutoCADConfig()
    assert (c.require_flip, c.flip_min_prob, c.completeness, c.keep, c.alternatives) == (True, 0.5, True, 1, 3)
    assert c.min_target_prob == 0.9
    for cfs in default_results:
        written = [cf for cf in cfs if cf.passed]
        assert len(written) == len({cf.meta["variant"] for cf in written})
        for cf in written:
            assert cf.meta["filters"]["flip"] and cf.meta["filters"]["complete"] and cf.meta["choice"]["rank"] == 1
            assert cf.meta["confidence"] >= m.config.flip_min_prob


def test_names_are_never_edited(default_method, task):
    m, _ = default_method
    text = "We saw Great Expectations by Charles Dickens. The cast is wonderful."
    item = WorkItem(Record("title", {"text": text}, "positive"), "negative")
    assert "great" in LEX.positive  # an opinion word, here part of a title
    edited = [e["old"] for cf in m.generate([item], task)[0] for e in cf.meta["edits"]]
    assert edited and "Great" not in edited  # the opinion word after it is edited, the title is not


def test_a_lower_case_word_is_no_name_whatever_the_tagger_says(default_method, task):
    m, _ = default_method
    text = "A slight, charming little movie, and a funny one."
    assert m.tagger(text)[3].tag_ == "NNP"  # the tagger's reading this guards against
    item = WorkItem(Record("lower", {"text": text}, "positive"), "negative")
    assert "charming" in [e["old"] for cf in m.generate([item], task)[0] for e in cf.meta["edits"]]


def test_topical_nouns_and_verbs_without_the_classifiers_support_are_left(default_method, default_artifacts, task):
    m, _ = default_method
    text = "The murder in the first act is awful."
    item = WorkItem(Record("topical", {"text": text}, "negative"), "positive")
    assert LEX.polarity("murder") == "negative" and "murder" not in LEX.antonyms  # listed, but a fact here
    edited = {}
    for choice in ("important", "all"):
        # C cannot reach 0.999 for the target, so REP-CT goes through all its terms
        other = with_config(m, default_artifacts, task, content_words=choice, min_target_prob=0.999,
                            require_flip=False)
        edited[choice] = [e["old"] for cf in other.generate([item], task)[0] for e in cf.meta["edits"]]
    assert "awful" in edited["important"] and "murder" not in edited["important"]
    assert "murder" in edited["all"]


def test_a_text_whose_only_opinion_words_are_topical_says_so(default_method, task):
    from cfaug.data.records import NoCounterfactual

    m, _ = default_method
    item = WorkItem(Record("facts", {"text": "The film is about a murder."}, "negative"), "positive")
    [res] = m.generate([item], task)
    assert isinstance(res, NoCounterfactual) and "content_words=all" in res.reason


def test_a_plot_noun_that_weighs_little_next_to_the_top_term_stays_with_content_min_share():
    from cfaug.methods.auto_cad.term_selection import weighed_terms

    tokens = tokenize("The killer was awful and the plan was a waste.")
    at = {t.lower: i for i, t in enumerate(tokens)}
    tags = {tokens[at["killer"]].start: "NN", tokens[at["awful"]].start: "JJ", tokens[at["waste"]].start: "NN"}
    killer, awful, waste = (CausalTerm(at[w], (at[w],), "word", imp)
                            for w, imp in (("killer", 0.02), ("awful", 0.4), ("waste", 0.2)))
    kept = weighed_terms(tokens, [killer, awful, waste], tags, LEX.antonyms)
    assert kept == [killer, awful, waste]  # every noun C weighs above 0 (the default)
    assert weighed_terms(tokens, [killer, awful, waste], tags, LEX.antonyms, 0.25) == [awful, waste]
    killer.importance = 0.0
    assert weighed_terms(tokens, [killer, awful], tags, LEX.antonyms) == [awful]  # C does not weigh it
    # an adjective is kept however little it weighs
    awful.importance = 0.0
    assert weighed_terms(tokens, [awful, waste], tags, LEX.antonyms, 0.9) == [awful, waste]


def test_an_edit_that_changes_only_case_or_spacing_makes_no_candidate(default_method, items):
    """Only an edit of the text itself may put the target label on it: a rewrite that equals the original up
    to case and spacing is no candidate (the item then says why it has none)."""
    from cfaug.editing.text import Edit
    from cfaug.methods.auto_cad.filters import judge_rewrites

    m, _ = default_method
    item = items[0]
    text = item.record.text()
    tokens = tokenize(text)
    word = next(t for t in tokens if t.is_word and t.text.lower() != t.text.upper())
    same = [Edit(word.start, word.end, word.text.upper(), word.text, "replace")]
    real = [Edit(word.start, word.end, "zzz", word.text, "replace")]
    docs = [(tokens, [], 0)]
    term = CausalTerm(head=0, phrase=(), kind="word", importance=1.0)
    for edits, made in ((same, 0), (real, 1)):
        results = judge_rewrites(m.classifier, [item], docs, [(0, "rep-ct", edits, [term], {})], m.config,
                                 m.filters, m.proposer.name)
        assert len(results[0]) == made


def test_the_reason_for_no_term_agrees_with_the_classifiers_reading():
    """The label "rests on facts or context" only where the classifier reads the source label in the text;
    where it gives that label a low probability, the reason says it does not read it."""
    from cfaug.methods.auto_cad.method import unweighed_reason

    low, high = unweighed_reason(0.07), unweighed_reason(0.81)
    assert "rests on facts or context" not in low and "only 0.07" in low and "does not read that label" in low
    assert "0.81" in high and "rests on facts or context" in high
    assert unweighed_reason(0.5).endswith("rests on facts or context)")
