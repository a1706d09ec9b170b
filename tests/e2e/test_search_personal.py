"""Search as a person uses it: exact identifiers, tied keyword scores, CJK, another language than
the query, and strict JSON from every command that prints it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import built_files_home, cli, materialize_source, platform_env, write
from conftest import strict_json as strict_loads

from ragbag.core import jsonout
from ragbag.index.published import home_model
from ragbag.search import fusion, query
from ragbag.text import exact

KNOWN = ("files", "code", "mail")


def test_a_keyword_list_of_one_hit_or_of_ties_keeps_its_best_evidence():
    vec = [(0, j, 1.0 - j / 200) for j in range(150)]
    one = fusion.fuse(vec, [(0, 140, 7.5)], "weighted", 0.8)
    row = dict(((i, j), s) for i, j, s in one)
    # The only keyword hit gets the keyword list's full weight (min-max over one score used to give 0).
    assert row[(0, 140)] == pytest.approx(0.2 + 0.8 * max(0.0, (vec[140][2] - vec[99][2]) / (vec[0][2] - vec[99][2])))
    tied = fusion.fuse(vec, [(0, 120, 3.0), (0, 130, 3.0), (0, 140, 3.0)], "weighted", 0.8)
    got = dict(((i, j), s) for i, j, s in tied)
    assert got[(0, 120)] == got[(0, 130)] == got[(0, 140)] == pytest.approx(0.2)
    # A long keyword list still spans best..100th.
    kw = [(0, j, 10.0 - j / 20) for j in range(120)]
    norm = fusion.normalised(kw, floor=0.0)
    assert norm[(0, 0)] == 1.0 and norm[(0, 99)] == 0.0 and norm[(0, 110)] == 0.0


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1Z999AA10123456784", ["1z999aa10123456784"]),
        ("where is parcel JJD0001234567890?", ["jjd0001234567890"]),
        ("invoice RE-2025-08817 from the plumber", ["re-2025-08817"]),
        ('the "gate code" for lisbon', ["gate code"]),
        ("error E0433 in parse_invoice", ["e0433", "parse_invoice"]),
        ("order 448812937", ["448812937"]),
        ("getUserId and os.path", ["getuserid", "os.path"]),
        ("what did we spend in 2024 on 3 bikes", []),
        ("how do I reset my password", []),
    ],
)
def test_exact_terms_of_a_query(text, expected):
    assert exact.terms(text) == expected


def test_promote_puts_hits_holding_the_exact_terms_first():
    texts = {1: "parcel delivered", 2: "tracking 1Z999AA10123456784 at the depot", 3: "nothing"}
    ranked = exact.promote([(0, 1, 0.9), (0, 3, 0.5), (0, 2, 0.1)], ["1z999aa10123456784"], lambda i, j: texts[j])
    assert [j for _, j, _ in ranked] == [2, 1, 3] and ranked[0][2] == pytest.approx(1.1)


PARCELS = {
    f"parcel-{n:02d}.txt": f"Parcel notice {n}: your delivery from the shop is on its way, "
    f"tracking at https://carrier.example/track?n=PKG{n:04d}XQ{n * 7919:06d}.\n"
    for n in range(40)
}


@pytest.fixture(scope="module")
def personal_home(tmp_path_factory, instance):
    """One build for the module: its tests only read it."""
    return built_files_home(
        tmp_path_factory,
        instance,
        "personal",
        {
            **PARCELS,
            "ups.txt": "Visited https://www.ups.com/track?loc=en_DE&tracknum=1Z999AA10123456784 on Monday.\n",
            # Look-alikes one digit away: a vector cannot tell them apart, only the exact id can.
            **{f"ups-{d}.txt": f"UPS 1Z999AA1012345678{d}\n" for d in (0, 1, 2, 3, 5, 6)},
            "tied-a.txt": "Quartalsbericht Oktober fertig.\n",
            "tied-b.txt": "Quartalsbericht November fertig.\n",
            "huangshan.txt": "我们坐缆车上了黄山，山顶的日出非常壮观，下山时又坐了一次缆车。\n",
            "xihu.txt": "周末去杭州西湖散步，晚上吃了东坡肉和龙井虾仁。\n",
            "beijing.txt": "下个月去北京出差，住在王府井附近的酒店。\n",
        },
    )


def test_a_unique_identifier_ranks_first_in_hybrid(personal_home):
    for q in ("1Z999AA10123456784", "where is my UPS parcel 1Z999AA10123456784"):
        hits = query.search(q, home=personal_home, k=10)
        assert hits.iloc[0]["uri"].endswith("ups.txt"), q
    # An id of one of the forty look-alike notices beats the other thirty-nine.
    hits = query.search(f"PKG0017XQ{17 * 7919:06d}", home=personal_home, k=10)
    assert hits.iloc[0]["uri"].endswith("parcel-17.txt")


def test_a_cjk_hybrid_query_ranks_its_match_first_with_real_scores(personal_home):
    hits = query.search("黄山 缆车", home=personal_home, k=5)
    assert hits.iloc[0]["uri"].endswith("huangshan.txt")
    assert hits.iloc[0]["score"] > 0 and hits.iloc[0]["keyword_score"] > 0
    rows = strict_loads(jsonout.dumps(jsonout.records(hits)))
    assert all(r["keyword_score"] is None or r["keyword_score"] > 0 for r in rows)


def test_a_cjk_hybrid_query_under_the_english_model_ranks_by_keywords(home, instance, tmp_path):
    """MiniLM cannot read Chinese: the query ranks by BM25, with real scores, matches first."""
    home.set_config("embedding.model", "all-MiniLM-L6-v2")
    docs = write(
        tmp_path / "zh",
        {
            "huangshan.txt": "我们坐缆车上了黄山，山顶的日出非常壮观。\n",
            "xihu.txt": "周末去杭州西湖散步，晚上吃了东坡肉。\n",
            "beijing.txt": "下个月去北京出差，住在王府井附近。\n",
        },
    )
    home.add_source("zh", "files", str(docs), known=KNOWN)
    materialize_source(home, instance, "zh")
    hits = query.search("黄山 缆车", home=home, k=3)
    assert hits.iloc[0]["uri"].endswith("huangshan.txt") and hits.iloc[0]["score"] > 0
    assert (hits.iloc[1:]["score"] < hits.iloc[0]["score"]).all()
    strict_loads(jsonout.dumps(jsonout.records(hits)))


def test_tied_keyword_hits_all_count(personal_home):
    hits = query.search("Quartalsbericht", home=personal_home, k=5)
    assert {u.split("/")[-1] for u in hits["uri"][:2]} == {"tied-a.txt", "tied-b.txt"}
    a, b = hits.iloc[0], hits.iloc[1]
    assert a["keyword_score"] == pytest.approx(b["keyword_score"]) and a["keyword_score"] > 0
    # Both carry the keyword list's evidence: above what their vectors alone would give.
    alone = query.search("Quartalsbericht", home=personal_home, k=5, alpha=1.0)
    by_uri = dict(zip(alone["uri"], alone["score"]))
    assert a["score"] > fusion.VECTOR_SHARE * by_uri[a["uri"]] + 0.05


def test_jsonout_never_writes_nan():
    import pandas as pd

    frame = pd.DataFrame(
        [
            {"score": 1.0, "keyword_score": None, "vector_score": float("nan")},
            {"score": float("inf"), "keyword_score": 2.0, "vector_score": np.float32(0.5)},
        ]
    )
    text = jsonout.dumps({"hits": jsonout.records(frame), "t": pd.Timestamp("2025-01-01", tz="UTC")})
    data = strict_loads(text)
    assert data["hits"][0]["keyword_score"] is None and data["hits"][0]["vector_score"] is None
    assert data["hits"][1]["score"] is None and data["hits"][1]["vector_score"] == 0.5


GERMAN_BILL = """From: Stadtwerke Berlin <rechnung@stadtwerke.example>
To: Alex Example <alex@example.org>
Subject: Ihre Jahresabrechnung Strom 2025
Date: Tue, 14 Jan 2025 09:12:00 +0100
Message-ID: <jahres-2025@stadtwerke.example>
Content-Type: text/plain; charset=utf-8

Sehr geehrte Kundin, sehr geehrter Kunde,

für das Abrechnungsjahr 2025 ergibt sich eine Nachzahlung von 182,40 Euro. Der Betrag wird
am 1. Februar von Ihrem Konto abgebucht. Ihr monatlicher Abschlag steigt ab März auf 74 Euro.

Mit freundlichen Grüßen
Ihre Stadtwerke
"""

OTHER_MAILS = [
    ("Garden party on Saturday", "Bring a salad or dessert, we start grilling at four."),
    ("Your library loan is due", "The book The Left Hand of Darkness is due back on Friday."),
    ("Flight confirmation", "Your flight to Lisbon departs at 07:15 from terminal 1."),
    ("Reunión del club de lectura", "Nos vemos el jueves en la biblioteca para hablar del libro."),
]


def _mbox(messages: list[str]) -> str:
    return "".join(f"From MAILER-DAEMON Thu Jan  1 00:00:00 2025\n{m.strip()}\n\n" for m in messages)


@pytest.mark.slow
def test_an_english_question_finds_the_german_bill(home, instance, tmp_path):
    others = [
        f"From: friend{n}@example.org\nTo: alex@example.org\nSubject: {s}\nDate: Mon, {n + 1} Dec 2024 10:00:00 +0000\n"
        f"Message-ID: <m{n}@example.org>\nContent-Type: text/plain; charset=utf-8\n\n{b}\n"
        for n, (s, b) in enumerate(OTHER_MAILS)
    ]
    box = write(tmp_path / "mail", {"Inbox.mbox": _mbox([GERMAN_BILL, *others])})
    home.add_source("mail", "mail", str(box), known=KNOWN)
    materialize_source(home, instance, "mail")
    assert home_model(home) == "multilingual-e5-small"  # the default serves mixed-language homes
    hits = query.search("how much extra do I have to pay for electricity this year", home=home, k=3)
    assert "Nachzahlung" in hits.iloc[0]["text"]


def test_every_json_output_is_strict_json(home, tmp_path):
    env = platform_env(home)
    docs = write(
        tmp_path / "docs", {"a.md": "# Lisbon\n\nThe gate code in Lisbon is 4711.\n", "b.txt": "黄山的缆车很快。\n"}
    )
    cli("add", "files", "notes", str(docs), env=env)
    outputs = {
        "build": cli("build", "--json", env=env).stdout,
        "search": cli("search", "gate code", "--json", env=env).stdout,
        "search cjk": cli("search", "黄山 缆车", "--json", env=env).stdout,
        "search keyword": cli("search", "gate", "--mode", "keyword", "--json", env=env).stdout,
        "list": cli("list", "--json", env=env).stdout,
        "status": cli("status", "--json", env=env).stdout,
        "ask": cli("ask", "what is the gate code in Lisbon?", "--json", env=env).stdout,
        "config": cli("config", "show", env=env).stdout,
    }
    for name, text in outputs.items():
        strict_loads(text)  # raises on NaN / Infinity
        assert "NaN" not in text and "Infinity" not in text, name
    hits = strict_loads(outputs["search cjk"])
    assert hits and all(h["vector_score"] is None or isinstance(h["vector_score"], float) for h in hits)


def test_a_code_hit_keeps_its_lines_and_numbers():
    from rich.console import Console

    from ragbag.apps.cli import render

    code = (
        "import time\n\n\nclass Client:\n    def fetch(self, url):\n        for attempt in range(3):\n"
        "            try:\n                return get(url)\n            except OSError:\n                time.sleep(2 ** attempt)\n"
    )
    lines = render.code_lines(code, 40, ["attempt"], limit=5)
    assert lines[0] == (43, "class Client:") and [n for n, _ in lines] == [43, 44, 45, 46, 47]
    assert lines[2][1] == "        for attempt in range(3):"  # indentation and line breaks kept
    hits = [
        {
            "text": code,
            "chunk_text": code,
            "score": 0.5,
            "source": "repo",
            "connector": "code",
            "uri": "/r/client.py",
            "title": "client.py",
            "citation": "abc123",
            "metadata": {"line_start": 40, "line_end": 49},
        }
    ]
    console = Console(record=True, width=100)
    render.print_hits(console, "retry attempt", hits)
    out = console.export_text()
    assert "   45 │         for attempt in range(3):" in out and "client.py:40-49" in out
