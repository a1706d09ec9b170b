"""The chatgpt connector: the export's mapping tree, content types, zips, duplicates, cursors."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragbag.connectors import chatgpt
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.models.embedding import token_counter

T0 = 1709630000.123456  # 2024-03-05 09:13:20.123456 UTC


@pytest.fixture(scope="module")
def count():
    return token_counter()


class Tree:
    """Builds a conversation's ``mapping`` the way the export writes it (node ids, parents,
    children, ``message: null`` on the root)."""

    def __init__(self):
        self.mapping: dict[str, dict] = {
            "client-created-root": {"id": "client-created-root", "message": None, "parent": None, "children": []}
        }

    def add(
        self,
        node_id: str,
        parent: str,
        role: str,
        content: dict,
        t: float | None = None,
        hidden: bool = False,
        recipient: str = "all",
        channel: str | None = None,
    ) -> str:
        meta = {"is_visually_hidden_from_conversation": True} if hidden else {}
        if role == "assistant":
            meta.update(
                {
                    "model_slug": "gpt-4o",
                    "default_model_slug": "gpt-4o",
                    "finish_details": {"type": "stop", "stop_tokens": [200002]},
                    "parent_id": parent,
                }
            )
        self.mapping[node_id] = {
            "id": node_id,
            "message": {
                "id": node_id,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": t,
                "update_time": None,
                "content": content,
                "status": "finished_successfully",
                "end_turn": role == "assistant" or None,
                "weight": 1.0,
                "metadata": meta,
                "recipient": recipient,
                "channel": channel or ("final" if role == "assistant" else None),
            },
            "parent": parent,
            "children": [],
        }
        self.mapping[parent]["children"].append(node_id)
        return node_id


def text(*parts) -> dict:
    return {"content_type": "text", "parts": list(parts)}


def conversation(conv_id: str, title, tree: Tree, current: str | None, created: float, updated: float, **extra) -> dict:
    conv = {
        "title": title,
        "create_time": created,
        "update_time": updated,
        "mapping": tree.mapping,
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": conv_id,
        "conversation_template_id": None,
        "gizmo_id": None,
        "gizmo_type": None,
        "is_archived": False,
        "is_starred": None,
        "safe_urls": [],
        "blocked_urls": [],
        "default_model_slug": "gpt-4o",
        "conversation_origin": None,
        "voice": None,
        "async_status": None,
        "disabled_tool_ids": [],
        "is_do_not_remember": False,
        "memory_scope": "global_enabled",
        "sugar_item_id": None,
        "id": conv_id,
    }
    conv.update(extra)
    if current is None:
        del conv["current_node"]
    return conv


def sourdough() -> dict:
    t = Tree()
    sys = t.add("sys-1", "client-created-root", "system", text(""), hidden=True)
    ctx = t.add(
        "ctx-1",
        sys,
        "user",
        {
            "content_type": "user_editable_context",
            "user_profile": "I bake bread at home.",
            "user_instructions": "Be brief.",
        },
        hidden=True,
    )
    q1 = t.add("u-1", ctx, "user", text("My sourdough starter smells like nail polish remover. Is it dead?"), T0)
    t.add("a-old", q1, "assistant", text("DEADBRANCH: throw the starter away and buy yeast."), T0 + 5)
    a1 = t.add(
        "a-new",
        q1,
        "assistant",
        text(
            "No. That acetone smell means the starter is hungry: feed it twice a day for a few days."
            "\ue200cite\ue202turn0search3\ue201"
        ),
        T0 + 30,
    )
    q2 = t.add(
        "u-2",
        a1,
        "user",
        {
            "content_type": "multimodal_text",
            "parts": [
                {
                    "content_type": "image_asset_pointer",
                    "asset_pointer": "file-service://file-8Hq2Lm",
                    "size_bytes": 183422,
                    "width": 1024,
                    "height": 768,
                    "fovea": None,
                    "metadata": None,
                },
                "Here is the jar after feeding: 100 g water and 100 g flour.",
            ],
        },
        T0 + 60,
    )
    think = t.add(
        "th-1",
        q2,
        "assistant",
        {
            "content_type": "thoughts",
            "thoughts": [{"summary": "Computing", "content": "SECRETTHOUGHT hydration math"}],
            "source_analysis_msg_id": "x",
        },
        T0 + 61,
    )
    memo = t.add(
        "bio-1",
        think,
        "assistant",
        text("MEMORYWRITE: user bakes sourdough"),
        T0 + 61.5,
        recipient="bio",
        channel="commentary",
    )
    memo = t.add("bio-2", memo, "tool", text("Model set context updated."), T0 + 61.6)
    memo = t.add("an-1", memo, "assistant", text("ANALYSIS: 100/100 is 100%"), T0 + 61.7, channel="analysis")
    code = t.add(
        "c-1",
        memo,
        "assistant",
        {
            "content_type": "code",
            "language": "python",
            "response_format_name": None,
            "text": "hydration = 100 * 100 / 100\nhydration",
        },
        T0 + 62,
        recipient="python",
    )
    out = t.add("o-1", code, "tool", {"content_type": "execution_output", "text": "100.0"}, T0 + 63)
    a2 = t.add(
        "a-2", out, "assistant", text("Your starter is at 100% hydration, which is normal 【4†source】."), T0 + 64
    )
    return conversation("67e1-sourdough", "Sourdough starter troubleshooting", t, a2, T0, T0 + 64)


def regex_chat(updated: float = T0 + 3600, extra_answer: str = "") -> dict:
    t = Tree()
    q = t.add("u-1", "client-created-root", "user", text("Write a regex that matches ISO dates."), T0 + 3000)
    a = t.add(
        "a-1",
        q,
        "assistant",
        text("Use `\\d{4}-\\d{2}-\\d{2}`. Example transcript:\n\nUser: 2024-03-05 matches." + extra_answer),
        T0 + 3010,
    )
    return conversation("67e2-regex", "Regex for ISO dates", t, a, T0 + 3000, updated)


def untitled_no_current_node() -> dict:
    t = Tree()
    q = t.add(
        "u-1", "client-created-root", "user", text("How long should I rest brioche dough in the fridge?"), T0 + 100
    )
    t.add("a-1", q, "assistant", text("OLDANSWER: two hours."), T0 + 110)
    t.add("a-2", q, "assistant", text("Overnight, 8 to 16 hours, for the best flavour."), T0 + 120)
    return conversation("67e3-brioche", None, t, None, T0 + 100, T0 + 120)


def export(conversations: list) -> str:
    """conversations.json as the export writes it: one line, non-ASCII kept."""
    return json.dumps(conversations, ensure_ascii=False)


def export_zip(path: Path, conversations: list) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("user.json", json.dumps({"id": "user-abc", "email": "me@example.com"}))
        zf.writestr("conversations.json", export(conversations))
        zf.writestr("message_feedback.json", "[]")
        zf.writestr(
            "shared_conversations.json",
            json.dumps([{"id": "s1", "conversation_id": "67e1-sourdough", "title": "shared", "is_anonymous": True}]),
        )
        zf.writestr("chat.html", "<html><body>…</body></html>")
        zf.writestr("file-8Hq2Lm-jar.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    return path


GARBAGE = [{"title": "no tree", "id": "67e4-broken", "mapping": None, "current_node": None}, 42]


def read_all(path: Path, cursor=None):
    items = list(chatgpt.read(path, "gpt", cursor))
    assert isinstance(items[-1], Cursor)
    docs = {i.native_id: i for i in items if isinstance(i, Document)}
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = [i.native_id for i in items if isinstance(i, Seen)]
    return docs, errors, seen, items[-1].state


def test_current_branch_only_content_types_and_fields(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(export([sourdough()]), encoding="utf-8")
    docs, errors, _, _ = read_all(path)
    assert not errors
    doc = docs["67e1-sourdough"]
    assert doc.text == (
        "User: My sourdough starter smells like nail polish remover. Is it dead?\n\n"
        "Assistant: No. That acetone smell means the starter is hungry: feed it twice a day for a few days.\n\n"
        "User: [image]\n\nHere is the jar after feeding: 100 g water and 100 g flour.\n\n"
        "Assistant: ```python\nhydration = 100 * 100 / 100\nhydration\n```\n\n"
        "Your starter is at 100% hydration, which is normal.\n"
    )
    for hidden in (
        "DEADBRANCH",
        "SECRETTHOUGHT",
        "MEMORYWRITE",
        "ANALYSIS",
        "context updated",
        "Be brief",
        "100.0\n",
        "\ue200",
        "†",
    ):
        assert hidden not in doc.text
    assert doc.title == "Sourdough starter troubleshooting"
    assert doc.created_at == datetime(2024, 3, 5, 9, 13, 20, 123456, tzinfo=UTC)
    assert doc.updated_at == datetime.fromtimestamp(T0 + 64, tz=UTC)
    assert doc.uri == f"{path}#67e1-sourdough"
    assert doc.metadata == {
        "title": "Sourdough starter troubleshooting",
        "conversation_id": "67e1-sourdough",
        "turns": 4,
        "url": "https://chatgpt.com/c/67e1-sourdough",
        "file": "conversations.json",
        "created": "2024-03-05T09:13:20.123456+00:00",
        "updated": doc.updated_at.isoformat(),
        "model": "gpt-4o",
    }


def test_no_current_node_follows_the_newest_leaf_and_untitled_gets_the_question(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(export([untitled_no_current_node(), regex_chat()]))
    docs, _, _, _ = read_all(path)
    brioche = docs["67e3-brioche"]
    assert "Overnight, 8 to 16 hours" in brioche.text and "OLDANSWER" not in brioche.text
    assert brioche.title == "How long should I rest brioche dough in the fridge?"
    # A message line that reads like a turn label cannot fake a turn.
    assert "Example transcript:\n\nUser : 2024-03-05 matches." in docs["67e2-regex"].text


def test_zip_folder_duplicates_and_bad_input(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    export_zip(folder / "2024-03-export.zip", [sourdough(), regex_chat()])
    # A later loose export holds a newer copy of one conversation.
    (folder / "conversations.json").write_text(export([regex_chat(T0 + 7200, " Anchor it with ^ and $.")]))
    (folder / "conversations (1).json").write_text(export([untitled_no_current_node()])[:-40])  # cut short
    (folder / "truncated-export.zip").write_bytes((folder / "2024-03-export.zip").read_bytes()[:300])
    (folder / "more.json").write_text(export(GARBAGE))  # not named like an export: ignored
    sub = folder / "claude"
    sub.mkdir()
    (sub / "conversations.json").write_text(json.dumps([{"uuid": "c-1", "name": "x", "chat_messages": []}]))
    export_zip(folder / "garbage.zip", GARBAGE + [untitled_no_current_node()])

    docs, errors, _, _ = read_all(folder)
    assert set(docs) == {"67e1-sourdough", "67e2-regex", "67e3-brioche"}
    assert "Anchor it with ^ and $." in docs["67e2-regex"].text  # the newest copy wins
    assert docs["67e2-regex"].metadata["file"] == "conversations.json"
    assert docs["67e1-sourdough"].uri.endswith("2024-03-export.zip!/conversations.json#67e1-sourdough")
    reasons = {e.uri.split("/exports/", 1)[1]: e.error for e in errors}
    assert reasons == {
        "conversations (1).json": reasons["conversations (1).json"],
        "truncated-export.zip": reasons["truncated-export.zip"],
        "garbage.zip!/conversations.json#67e4-broken": "no message tree (mapping)",
        "garbage.zip!/conversations.json#1": "not a conversation object (int)",
        "claude/conversations.json": "a Claude export (conversations with 'chat_messages'), not a ChatGPT one: "
        "add it with `ragbag add claude NAME PATH`",
    }
    assert reasons["conversations (1).json"].startswith("invalid JSON")
    assert "unreadable zip" in reasons["truncated-export.zip"]


def test_spans_keep_exchanges_together_within_budget(tmp_path, count):
    path = tmp_path / "conversations.json"
    path.write_text(export([sourdough()]))
    doc = read_all(path)[0]["67e1-sourdough"]
    (whole,) = chatgpt.spans(doc, count, 400)
    assert whole.metadata == {"roles": ["user", "assistant"], "turn_start": 1, "turn_end": 4}
    first, second = chatgpt.spans(doc, count, 60)
    assert doc.text[first.start : first.end].startswith("User: My sourdough")
    assert doc.text[first.start : first.end].endswith("for a few days.")
    assert first.metadata == {"roles": ["user", "assistant"], "turn_start": 1, "turn_end": 2}
    assert second.metadata == {"roles": ["user", "assistant"], "turn_start": 3, "turn_end": 4}
    for budget in (12, 25):
        spans = chatgpt.spans(doc, count, budget)
        assert all(count(doc.text[s.start : s.end]) <= budget for s in spans)
        assert spans[0].metadata["roles"] == ["user"]
        covered = "".join(doc.text[s.start : s.end] for s in spans)
        assert "".join(covered.split()) == "".join(doc.text.split())  # nothing lost


def test_incremental_refresh_and_a_winner_that_moves(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    export_zip(folder / "old.zip", [sourdough(), regex_chat()])
    loose = folder / "conversations.json"
    loose.write_text(export([regex_chat(T0 + 7200, " Anchor it.")]))
    docs, _, _, cursor = read_all(folder)
    assert "Anchor it." in docs["67e2-regex"].text

    docs2, _, seen2, cursor2 = read_all(folder, json.loads(json.dumps(cursor)))
    assert docs2 == {} and sorted(seen2) == ["67e1-sourdough", "67e2-regex"]

    loose.write_text(export([regex_chat(T0 + 9000, " Anchor it, and use \\b.")]))
    docs3, _, seen3, cursor3 = read_all(folder, cursor2)
    assert list(docs3) == ["67e2-regex"] and "use \\b" in docs3["67e2-regex"].text
    assert seen3 == ["67e1-sourdough"]

    # The newer copy's file goes away: the older copy in the unchanged zip is read again, so the
    # stored conversation is replaced by it rather than vouched for.
    loose.unlink()
    docs4, _, seen4, _ = read_all(folder, cursor3)
    assert set(docs4) == {"67e1-sourdough", "67e2-regex"} and not seen4
    assert "Anchor" not in docs4["67e2-regex"].text
