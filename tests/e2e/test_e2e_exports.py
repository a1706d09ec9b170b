"""wechat, chatgpt, claude and calendar end to end: `ragbag add`, one `ragbag build`, search and
filters on each connector's metadata, through the installed CLI."""

from __future__ import annotations

import json

import pytest
from conftest import cli, cli_json
from test_connector_calendar import write_calendars
from test_connector_chatgpt import export_zip as chatgpt_zip
from test_connector_chatgpt import regex_chat, sourdough
from test_connector_claude import eviction, legacy
from test_connector_claude import export_zip as claude_zip
from test_connector_wechat import write_export


def search(query: str, *args: str) -> list[dict]:
    return cli_json("search", query, *args)


@pytest.mark.slow(seconds=100)
def test_four_export_connectors_build_and_search(home, tmp_path):
    chats = write_export(tmp_path / "wechat")
    gpt = tmp_path / "chatgpt"
    gpt.mkdir()
    chatgpt_zip(gpt / "chatgpt-export.zip", [sourdough(), regex_chat()])
    anthropic = tmp_path / "claude"
    anthropic.mkdir()
    claude_zip(anthropic / "data-2024-06-01-batch-0000.zip", [eviction(), legacy()])
    cals = write_calendars(tmp_path / "calendars")
    for connector, name, path in (
        ("wechat", "chats", chats),
        ("chatgpt", "gpt", gpt),
        ("claude", "claude-ai", anthropic),
        ("calendar", "cal", cals),
    ):
        cli("add", connector, name, str(path))

    reports = {r["source"]: r for r in cli_json("build")}
    assert {s: r["status"] for s, r in reports.items()} == dict.fromkeys(
        ("chats", "gpt", "claude-ai", "cal"), "success"
    )
    assert (
        reports["chats"]["documents"] == 5 and len(reports["chats"]["errors"]) == 5
    )  # contacts.json: not a chat, said so
    assert reports["gpt"]["documents"] == 2 and reports["claude-ai"]["documents"] == 2
    assert reports["cal"]["documents"] == 8
    assert all(r["chunks_embedded"] == r["chunks"] > 0 for r in reports.values())

    # wechat: a paraphrase finds the group chat; Chinese is found by its words; --where on my lines.
    hit = search("who will carry the cooking burner to the campsite", "--source", "chats", "-k", "1")[0]
    assert hit["metadata"]["chat"] == "周末登山群" and "stove" in hit["text"]
    assert hit["metadata"]["is_group"] is True and "Me" in hit["metadata"]["sender"]
    hit = search("爬山", "--source", "chats", "--mode", "keyword", "-k", "1")[0]
    assert "周末去爬山吗" in hit["text"] and hit["metadata"]["chat"] == "Alice"
    hits = search("hiking", "--source", "chats", "--where", '{"is_from_me": {"is_true": true}}')
    assert hits and all(h["metadata"]["is_from_me"] and "Me" in h["metadata"]["sender"] for h in hits)

    # chatgpt: only the current branch is indexed; --where on the conversation id.
    hit = search("my bread culture smells of acetone, should I throw it out?", "--source", "gpt", "-k", "1")[0]
    assert hit["title"] == "Sourdough starter troubleshooting" and "hungry" in hit["text"]
    assert search("DEADBRANCH", "--source", "gpt", "--mode", "keyword") == []
    hits = search("matching dates", "--where", '{"conversation_id": "67e2-regex"}')
    assert hits and {h["metadata"]["conversation_id"] for h in hits} == {"67e2-regex"}
    assert hits[0]["metadata"]["roles"] == ["user", "assistant"]

    # claude: a paraphrase finds the conversation; --after on its created time.
    hit = search("why were my containers killed overnight", "--source", "claude-ai", "-k", "1")[0]
    assert hit["title"] == "Kubernetes pod eviction" and hit["metadata"]["url"].startswith("https://claude.ai/chat/")
    hits = search("translate a greeting", "--source", "claude-ai", "--after", "2024-01-01")
    assert hits and {h["title"] for h in hits} == {"Kubernetes pod eviction"}

    # calendar: events by what they are about and by when they happen.
    hit = search("when do we meet to plan the garden shed", "--source", "cal", "-k", "1")[0]
    assert hit["title"] == "Family planning sync"
    assert hit["metadata"]["recurrence"] == "weekly on Monday until 2025-06-30"
    hits = search(
        "trip",
        "--source",
        "cal",
        "--after",
        "2025-04-01",
        "--before",
        "2025-05-01",
        "--where",
        '{"all_day": {"is_true": true}}',
    )
    assert [h["title"] for h in hits] == ["Easter trip to the Baltic coast"]
    assert hits[0]["metadata"]["start"] == "2025-04-18" and hits[0]["metadata"]["location"] == "Warnemünde"

    # A second build with nothing changed reads nothing again (cursors) and embeds nothing.
    again = {r["source"]: r for r in cli_json("build")}
    assert all(r["chunks_embedded"] == 0 and r["added"] == r["changed"] == r["deleted"] == 0 for r in again.values()), (
        json.dumps(again, default=str)[:2000]
    )
