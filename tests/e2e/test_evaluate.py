"""The evaluation harness: metrics against a hand-computed case, both dataset layouts, the CLI."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cli, cli_json, write

from ragbag.apps.eval import datasets as evaluate
from ragbag.core.errors import RagbagError


def test_metrics_match_a_hand_computed_case():
    ds = evaluate.Dataset("t", {}, {"q1": "x", "q2": "y"}, {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}})
    ranking = {"q1": {"b": 3.0, "x": 2.0, "a": 1.0}, "q2": {"x": 2.0, "y": 1.0}}
    m = evaluate.score(ds, ranking)
    # q1: DCG = 1/log2(2) + 2/log2(4) = 2; IDCG = 2/log2(2) + 1/log2(3) = 2.6309 (trec_eval gains)
    assert m["nDCG@10"] == pytest.approx((2 / (2 + 1 / 1.5849625)) / 2, abs=1e-4)
    assert m["RR@10"] == pytest.approx(0.5)
    assert m["R@10"] == pytest.approx(0.5) and m["R@100"] == pytest.approx(0.5)


def test_beir_with_and_without_header_and_squad(tmp_path):
    corpus = "\n".join(json.dumps({"_id": i, "title": "", "text": t}) for i, t in [("1", "a"), ("2", "b")])
    write(
        tmp_path / "b",
        {
            "corpus.jsonl": corpus,
            "queries.jsonl": json.dumps({"_id": "q", "text": "a"}),
            "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq\t1\t2\nq\t2\t0\n",
        },
    )
    ds = evaluate.load(tmp_path / "b")
    assert ds.qrels == {"q": {"1": 2, "2": 0}} and ds.queries == {"q": "a"}
    (tmp_path / "b" / "qrels" / "test.tsv").write_text("q\t1\t1\n")
    assert evaluate.load(tmp_path / "b").qrels == {"q": {"1": 1}}
    squad = {
        "data": [{"title": "T", "paragraphs": [{"id": "P1", "context": "ctx", "qas": [{"id": "Q1", "question": "?"}]}]}]
    }
    (tmp_path / "s.json").write_text(json.dumps(squad))
    ds = evaluate.load(tmp_path / "s.json")
    assert ds.corpus == {"P1": ("T", "ctx")} and ds.qrels == {"Q1": {"P1": 1}}


def test_the_personas_without_their_distribution_say_how_to_install_it(tmp_path, monkeypatch):
    """The evaluation personas are not part of an installed ragbag (evalsets/ is a distribution
    of its own): asking for one without it is a one-line error naming the install, before any build."""
    monkeypatch.setitem(sys.modules, "ragbag_evalsets", None)  # as if never installed
    for name in ("personal", "persona-b", "persona-c"):
        with pytest.raises(RagbagError, match=r"pip install \./evalsets"):
            evaluate.evaluate(name, ["hybrid"], home=tmp_path / "home")
    assert not (tmp_path / "home-personal").exists()


@pytest.mark.slow
def test_eval_cli_scores_a_small_dataset_through_the_pipeline(home, tmp_path):
    docs = {
        "d1": "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
        "d2": "Photosynthesis converts sunlight, water and carbon dioxide into glucose in plant leaves.",
        "d3": "The Great Barrier Reef off Australia is the largest coral reef system on Earth.",
        "d4": "Mount Kilimanjaro in Tanzania is the highest mountain in Africa.",
    }
    queries = {
        "q1": "when was the eiffel tower finished",
        "q2": "how do plants make sugar from light",
        "q3": "biggest coral reef",
        "q4": "tallest peak on the African continent",
    }
    write(
        tmp_path / "ds",
        {
            "corpus.jsonl": "\n".join(json.dumps({"_id": k, "title": "", "text": v}) for k, v in docs.items()),
            "queries.jsonl": "\n".join(json.dumps({"_id": k, "text": v}) for k, v in queries.items()),
            "qrels/test.tsv": "".join(f"q{i}\td{i}\t1\n" for i in range(1, 5)),
        },
    )
    result = cli_json("eval", str(tmp_path / "ds"), "--home", str(tmp_path / "evalhome"))
    assert result["documents"] == 4 and result["queries"] == 4
    assert result["modes"]["vector"]["nDCG@10"] == 1.0 and result["modes"]["hybrid"]["R@10"] == 1.0
    assert 0 < result["modes"]["keyword"]["RR@10"] <= 1.0
    again = cli_json("eval", str(tmp_path / "ds"), "--home", str(tmp_path / "evalhome"), "--mode", "hybrid")
    assert again["chunks_embedded"] == 0 and list(again["modes"]) == ["hybrid"]


def test_eval_cli_scores_a_home_set_per_query_kind(home, tmp_path):
    """A home set: sources of two connectors, judged by content, filters, a negative."""
    mail = (
        "From: Ingrid Baumann <i.baumann@hv.example>\nTo: jan@example.org\nSubject: Wartung\n"
        "Date: Mon, 6 Oct 2025 09:12:00 +0200\nMessage-ID: <w1@hv.example>\n\n"
        "Der Techniker kommt am Dienstag. Rechnung RE-2025-08817 liegt bei.\n"
    )
    write(
        tmp_path / "set" / "data",
        {
            "notes/lisbon.md": "# Lisbon\n\nThe street door code is 4411#.\n",
            "notes/garden.md": "# Garden\n\nThe tomatoes went into the pots on 12 April.\n",
            "mail/Inbox.mbox": "From MAILER-DAEMON Thu Jan  1 00:00:00 2025\n" + mail + "\n",
        },
    )
    (tmp_path / "set" / "home.json").write_text(
        json.dumps(
            {
                "name": "tiny",
                "sources": [
                    {"name": "notes", "connector": "files", "path": "data/notes"},
                    {"name": "mail", "connector": "mail", "path": "data/mail"},
                ],
            }
        )
    )
    queries = [
        {
            "_id": "i1",
            "kind": "identifier",
            "text": "RE-2025-08817",
            "relevant": [{"source": "mail", "contains": "RE-2025-08817"}],
        },
        {
            "_id": "p1",
            "kind": "paraphrase",
            "text": "how do I get in the front door in Lisbon",
            "relevant": [{"source": "notes", "contains": "4411#"}],
        },
        {
            "_id": "f1",
            "kind": "filtered",
            "text": "tomatoes",
            "where": {"ext": "md"},
            "connectors": ["files"],
            "relevant": [{"source": "notes", "contains": "12 April"}],
        },
        {"_id": "n1", "kind": "negative", "text": "quantum chromodynamics lecture notes", "relevant": []},
    ]
    (tmp_path / "set" / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    result = cli_json("eval", str(tmp_path / "set"), "--home", str(tmp_path / "evalhome"), "--mode", "hybrid")
    kinds = result["modes"]["hybrid"]["kinds"]
    assert result["sources"] == 2 and result["queries"] == 4
    assert kinds["identifier"]["hit@10"] == kinds["paraphrase"]["hit@10"] == kinds["filtered"]["hit@10"] == 1.0
    assert kinds["identifier"]["MRR@10"] == 1.0 and kinds["negative"]["quiet"] == 1.0
    from ragbag.apps.eval.homes import half_of

    halves = result["modes"]["hybrid"]["halves"]  # each query scored again in its half, tune or test
    for q in queries:
        assert halves[half_of(q["_id"])][q["kind"]]["queries"] >= 1
    assert sum(k["queries"] for h in halves.values() for k in h.values()) == 4
    bad = cli("eval", str(tmp_path / "nope"), check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


# The shared evaluation data sits beside the repository (../shared/eval, see its README).
EVAL_DATA = Path(os.environ.get("RAGBAG_EVAL_DIR", ROOT.parent / "shared" / "eval"))
# The guard's own figure: default hybrid nDCG@10 on MSMARCO_SUBSET (recorded in
# benchmarks/README.md, "Search on personal data", beside the whole set's 0.807).
MSMARCO_HYBRID = 0.863
MSMARCO_SUBSET = 400
SUBSET_QUERIES = 12


def msmarco_subset(data: Path, out: Path, queries: int = SUBSET_QUERIES, size: int = MSMARCO_SUBSET) -> Path:
    """msmarco-5k cut down, deterministically: the ``queries`` queries with the fewest judged
    passages (ties by id) with every passage judged for them, then the other passages in file
    order (judged for other queries: hard distractors) up to ``size``. The whole set takes the
    multilingual default ~7 min to embed on two cores; queries with few judgements give the guard
    more queries for the passages embedded."""
    qrels = [line.split("\t") for line in (data / "qrels" / "test.tsv").read_text().splitlines() if line.strip()]
    judged_for: dict[str, int] = {}
    for q, _, _ in qrels:
        judged_for[q] = judged_for.get(q, 0) + 1
    chosen = sorted(judged_for, key=lambda q: (judged_for[q], q))[:queries]
    judged = {d for q, d, _ in qrels if q in chosen}
    # split("\n"), not splitlines(): a passage may hold U+2028 inside its JSON string
    lines = [line for line in (data / "corpus.jsonl").read_text(encoding="utf-8").split("\n") if line.strip()]
    keep = [line for line in lines if json.loads(line)["_id"] in judged]
    keep += [line for line in lines if json.loads(line)["_id"] not in judged][: size - len(keep)]
    qs = [
        line
        for line in (data / "queries.jsonl").read_text(encoding="utf-8").split("\n")
        if line.strip() and json.loads(line)["_id"] in chosen
    ]
    write(
        out,
        {
            "corpus.jsonl": "\n".join(keep) + "\n",
            "queries.jsonl": "\n".join(qs) + "\n",
            "qrels/test.tsv": "".join("\t".join(r) + "\n" for r in qrels if r[0] in chosen),
        },
    )
    return out


@pytest.mark.slow(seconds=40)
def test_msmarco_hybrid_ndcg_does_not_regress(tmp_path):
    """The default configuration (what `ragbag add` + `ragbag build` give) on 400 msmarco-5k
    passages and 12 of its queries, through the real pipeline: a chunker, model, tokeniser or
    fusion change that costs more than 0.01 nDCG@10 fails here."""
    data = EVAL_DATA / "msmarco-5k"
    if not (data / "corpus.jsonl").exists():
        pytest.skip(f"{data} is missing (set RAGBAG_EVAL_DIR to the shared eval folder)")
    result = evaluate.evaluate(msmarco_subset(data, tmp_path / "msmarco-2k"), ["hybrid"], home=tmp_path / "home")
    assert result["documents"] == MSMARCO_SUBSET and result["queries"] == SUBSET_QUERIES
    assert result["modes"]["hybrid"]["nDCG@10"] >= MSMARCO_HYBRID - 0.01, result["modes"]
