"""Syntactic templates (cfaug.nlp.templates) on sentences parsed by the bundled pipeline."""

from __future__ import annotations

import pytest

from cfaug.nlp.templates import (
    CLOSE,
    OPEN,
    check_template,
    dependency_template,
    parse_tokens,
    template_size,
    template_tokens,
)

SENTENCES = [
    "The food was great but the service slow .".split(),
    ["I", "could", "n't", "pay", "$80", "for", "this", "tiny", "pizza", "."],
    "Our waiter was friendly and the fish tacos were fresh and tasty !".split(),
]


@pytest.fixture(scope="module")
def docs():
    return list(parse_tokens(SENTENCES))


def roots(doc):
    return [t.i for t in doc if t.head.i == t.i or t.dep_ == "ROOT"]


def test_parse_tokens_keeps_the_tokenization(docs):
    assert len(docs) == len(SENTENCES)
    for doc, tokens in zip(docs, SENTENCES):
        assert len(doc) == len(tokens)
        assert [t.text for t in doc] == tokens
    # a second call with a given pipeline gives the same parse
    from cfaug.nlp.pipeline import load_pipeline

    again = list(parse_tokens(SENTENCES[1:2], load_pipeline(exclude=("lemmatizer",)), batch_size=1))
    assert [t.dep_ for t in again[0]] == [t.dep_ for t in docs[1]]


def test_template_is_well_formed_with_a_node_per_token(docs):
    for doc in docs:
        template = dependency_template(doc)
        assert check_template(template) is None
        assert template_size(template) == len(doc)
        assert template == " ".join(template_tokens(doc))
        # one root per tree, and every other node is a lower-case relation label
        nodes = [s for s in template.split() if s not in (OPEN, CLOSE)]
        assert nodes.count("root") == len(roots(doc))
        assert all(n == n.lower() and n for n in nodes)
        assert template.split()[0] == "root"


def test_template_follows_the_tree(docs):
    doc = docs[0]
    # prefix notation: each token's label is followed by its children's templates, in word order
    def expected(tok):
        label = "root" if tok.head.i == tok.i else tok.dep_.lower()
        kids = sorted(tok.children, key=lambda t: t.i)
        return [label] + ([OPEN] + [s for k in kids for s in expected(k)] + [CLOSE] if kids else [])

    want = [s for r in roots(doc) for s in expected(doc[r])]
    assert template_tokens(doc) == want


def test_exclude_removes_exactly_those_nodes(docs):
    doc = docs[2]
    root_set = set(roots(doc))
    full = dependency_template(doc)
    for exclude in ({1}, {6, 7}, {3, 9, 11}, set(range(len(doc))) - root_set):
        exclude = exclude - root_set
        pruned = dependency_template(doc, exclude)
        assert check_template(pruned) is None
        assert template_size(pruned) == len(doc) - len(exclude)
        assert pruned != full
    # every non-root token removed: only the roots remain
    only_roots = dependency_template(doc, set(range(len(doc))))
    assert only_roots.split() == ["root"] * len(root_set)


def test_exclude_lifts_children_to_the_parent(docs):
    doc = docs[0]
    # "service" (6) has child "the" (5); removing "service" puts "det" directly under the service's head
    service = doc[6]
    assert [c.i for c in service.children] == [5]
    pruned = template_tokens(doc, {6})
    assert template_size(" ".join(pruned)) == len(doc) - 1
    # the det of "the service" is now a sibling of the service's other siblings, not nested under it
    full = template_tokens(doc)
    assert full.count(OPEN) == pruned.count(OPEN) + 1
    assert pruned.count("det") == full.count("det")


def test_root_is_never_removed(docs):
    for doc in docs:
        r = roots(doc)
        assert dependency_template(doc, r) == dependency_template(doc)
        assert template_size(dependency_template(doc, r)) == len(doc)


def test_max_depth_cuts(docs):
    for doc in docs:
        r = roots(doc)
        assert dependency_template(doc, max_depth=1).split() == ["root"] * len(r)
        depth2 = dependency_template(doc, max_depth=2)
        assert check_template(depth2) is None
        assert template_size(depth2) == len(r) + sum(len(list(doc[i].children)) for i in r)
        sizes = [template_size(dependency_template(doc, max_depth=d)) for d in range(1, 8)]
        assert sizes == sorted(sizes)
        assert sizes[0] < len(doc)
        assert template_size(dependency_template(doc, max_depth=0)) == len(doc)
    # a deep tree loses nodes at depth 2
    assert template_size(dependency_template(docs[0], max_depth=2)) < len(docs[0])


def test_template_size():
    assert template_size("root [ nsubj [ det ] punct ]") == 4
    assert template_size("") == 0
    assert template_size("[ ]") == 0


@pytest.mark.parametrize("template,problem", [
    ("root [ nsubj [ det ] punct", "an opening bracket is never closed"),
    ("root [ nsubj ] ]", "a closing bracket without its opening one"),
    ("root ] [ nsubj", "a closing bracket without its opening one"),
    ("root [ ]", "empty brackets"),
    ("[ root ]", "an opening bracket must follow a relation label"),
    ("root [ [ det ] ]", "an opening bracket must follow a relation label"),
    ("root [ nsubj ] [ det ]", "an opening bracket must follow a relation label"),
    ("", "no relation labels"),
])
def test_check_template_problems(template, problem):
    assert check_template(template) == problem


@pytest.mark.parametrize("template", ["root", "root [ nsubj [ det ] cop punct ]", "root root [ punct ]"])
def test_check_template_accepts(template):
    assert check_template(template) is None
