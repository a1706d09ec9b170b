"""The claude connector: chat_messages with content blocks, attachments, zips, bad input, cursors."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragbag.connectors import claude
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.models.embedding import token_counter


@pytest.fixture(scope="module")
def count():
    return token_counter()


def block(text: str, t: str = "2024-06-01T10:15:31.000000Z") -> dict:
    return {"start_timestamp": t, "stop_timestamp": t, "type": "text", "text": text, "citations": []}


def message(
    uuid: str,
    sender: str,
    blocks: list | None,
    text: str = "",
    t: str = "2024-06-01T10:15:30.123456Z",
    attachments: list | None = None,
    files: list | None = None,
) -> dict:
    """A chat message as the export writes it (``text`` repeats the text blocks)."""
    m = {
        "uuid": uuid,
        "text": text or "\n\n".join(b["text"] for b in blocks or [] if b.get("type") == "text"),
        "content": blocks,
        "sender": sender,
        "created_at": t,
        "updated_at": t,
        "attachments": attachments or [],
        "files": files or [],
    }
    if blocks is None:  # exports from before content blocks
        del m["content"]
    return m


def eviction() -> dict:
    return {
        "uuid": "0e1b6f2a-eviction",
        "name": "Kubernetes pod eviction",
        "summary": "",
        "created_at": "2024-06-01T10:15:30.123456Z",
        "updated_at": "2024-06-01T10:20:00.654321Z",
        "account": {"uuid": "acc-1"},
        "chat_messages": [
            message(
                "m1",
                "human",
                [block("Why do my pods get evicted at night?")],
                attachments=[
                    {
                        "file_name": "kubelet-config.yaml",
                        "file_size": 61,
                        "file_type": "yaml",
                        "extracted_content": 'evictionHard:\n  memory.available: "200Mi"',
                    }
                ],
                files=[{"file_uuid": "f-1", "file_name": "grafana-memory.png"}],
            ),
            message(
                "m2",
                "assistant",
                [
                    block("Let me check the kubelet defaults."),
                    {
                        "start_timestamp": None,
                        "stop_timestamp": None,
                        "type": "thinking",
                        "thinking": "SECRETTHOUGHT the nightly batch job",
                        "summaries": [],
                        "cut_off": False,
                    },
                    {
                        "start_timestamp": None,
                        "stop_timestamp": None,
                        "type": "tool_use",
                        "name": "web_search",
                        "input": {"query": "kubelet eviction thresholds memory.available"},
                        "message": "Searching",
                        "integration_name": None,
                        "integration_icon_url": None,
                        "context": None,
                        "display_content": None,
                    },
                    {
                        "start_timestamp": None,
                        "stop_timestamp": None,
                        "type": "tool_result",
                        "name": "web_search",
                        "content": [
                            {
                                "type": "knowledge",
                                "title": "Node-pressure Eviction | Kubernetes",
                                "url": "https://kubernetes.io/docs/concepts/scheduling-eviction/",
                                "metadata": {"type": "webpage_metadata"},
                                "is_missing": False,
                            }
                        ],
                        "is_error": False,
                        "message": None,
                        "display_content": None,
                    },
                    block(
                        "Your threshold of 200Mi is reached when the nightly backup fills the page cache; "
                        "raise memory limits or move the backup."
                    ),
                ],
            ),
            message("m3", "human", [block("Thanks, moving the backup fixed it.")]),
            message(
                "m4",
                "assistant",
                [
                    {
                        "start_timestamp": None,
                        "stop_timestamp": None,
                        "type": "tool_use",
                        "name": "artifacts",
                        "input": {"command": "create", "id": "note", "title": "Backup window"},
                    }
                ],
                text="\n```\nThis block is not supported on your current device yet.\n```\n\n",
            ),
        ],
    }


def legacy() -> dict:
    """An older export: no content blocks, an empty name."""
    return {
        "uuid": "5a5a-legacy",
        "name": "",
        "created_at": "2023-11-02T08:00:00Z",
        "updated_at": "2023-11-02T08:05:00Z",
        "chat_messages": [
            message("l1", "human", None, "Translate 'good morning' into Finnish."),
            message("l2", "assistant", None, "Hyvää huomenta."),
        ],
    }


def empty() -> dict:
    return {
        "uuid": "7e7e-empty",
        "name": "",
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "chat_messages": [],
    }


GARBAGE = [
    {"uuid": "bad-1", "name": "x", "chat_messages": "oops"},
    {"uuid": "bad-2", "name": "y", "chat_messages": [message("b1", "human", [block("hi")]), "junk"]},
    {"name": "no uuid", "chat_messages": []},
]


def export_zip(path: Path, conversations: list) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("users.json", json.dumps([{"uuid": "acc-1", "full_name": "Me", "email_address": "me@x.org"}]))
        zf.writestr("conversations.json", json.dumps(conversations, ensure_ascii=False))
        zf.writestr("projects.json", json.dumps([{"uuid": "p-1", "name": "Ops", "docs": []}]))
    return path


def read_all(path: Path, cursor=None):
    items = list(claude.read(path, "claude", cursor))
    assert isinstance(items[-1], Cursor)
    docs = {i.native_id: i for i in items if isinstance(i, Document)}
    errors = [i for i in items if isinstance(i, ReadError)]
    seen = [i.native_id for i in items if isinstance(i, Seen)]
    return docs, errors, seen, items[-1].state


def test_blocks_tools_attachments_and_fields(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([eviction(), legacy(), empty()], ensure_ascii=False))
    docs, errors, _, _ = read_all(path)
    assert not errors and set(docs) == {"0e1b6f2a-eviction", "5a5a-legacy"}  # empty ones skipped
    doc = docs["0e1b6f2a-eviction"]
    assert doc.text == (
        "User: Why do my pods get evicted at night?\n\n"
        '[attachment: kubelet-config.yaml]\nevictionHard:\n  memory.available: "200Mi"\n\n'
        "[file: grafana-memory.png]\n\n"
        "Assistant: Let me check the kubelet defaults.\n\n"
        "[tool web_search: kubelet eviction thresholds memory.available]\n\n"
        "[web_search result: Node-pressure Eviction | Kubernetes]\n\n"
        "Your threshold of 200Mi is reached when the nightly backup fills the page cache; "
        "raise memory limits or move the backup.\n\n"
        "User: Thanks, moving the backup fixed it.\n\n"
        "Assistant: [tool artifacts: create; note; Backup window]\n"
    )
    assert "SECRETTHOUGHT" not in doc.text and "not supported" not in doc.text
    assert doc.title == "Kubernetes pod eviction"
    assert doc.created_at == datetime(2024, 6, 1, 10, 15, 30, 123456, tzinfo=UTC)
    assert doc.updated_at == datetime(2024, 6, 1, 10, 20, 0, 654321, tzinfo=UTC)
    assert doc.uri == f"{path}#0e1b6f2a-eviction"
    assert doc.metadata == {
        "title": "Kubernetes pod eviction",
        "conversation_id": "0e1b6f2a-eviction",
        "turns": 4,
        "url": "https://claude.ai/chat/0e1b6f2a-eviction",
        "file": "conversations.json",
        "created": "2024-06-01T10:15:30.123456+00:00",
        "updated": "2024-06-01T10:20:00.654321+00:00",
        "attachments": ["kubelet-config.yaml", "grafana-memory.png"],
    }
    old = docs["5a5a-legacy"]
    assert old.text == "User: Translate 'good morning' into Finnish.\n\nAssistant: Hyvää huomenta.\n"
    assert old.title == "Translate 'good morning' into Finnish."
    assert old.created_at == datetime(2023, 11, 2, 8, 0, tzinfo=UTC)


def test_zip_folder_and_bad_input(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    export_zip(folder / "data-2024-06-01-10-20-00-batch-0000.zip", [eviction(), empty()] + GARBAGE)
    (folder / "conversations.json").write_text(json.dumps([legacy()]))
    (folder / "conversations-2.json").write_bytes(b'\xef\xbb\xbf[{"uuid": "x", "name": ')  # BOM, cut off
    (folder / "conversations-3.json").write_bytes(bytes(range(0x80, 0x100)) * 4)
    (folder / "broken.zip").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    gpt = folder / "chatgpt"
    gpt.mkdir()
    (gpt / "conversations.json").write_text(json.dumps([{"id": "g", "title": "t", "mapping": {}}]))
    docs, errors, _, _ = read_all(folder)
    # bad-2 loses only its junk entry (issue 31: it used to lose the whole conversation)
    assert set(docs) == {"0e1b6f2a-eviction", "5a5a-legacy", "bad-2"} and docs["bad-2"].text == "User: hi\n"
    reasons = {e.uri.split("/exports/", 1)[1]: e.error for e in errors}
    member = "data-2024-06-01-10-20-00-batch-0000.zip!/conversations.json"
    assert reasons[f"{member}#bad-1"] == "chat_messages is not a list"
    assert reasons[f"{member}#bad-2/messages/1"] == "message 1 is not an object (str)"
    assert reasons[f"{member}#4"] == "conversation has no id"
    assert reasons["conversations-2.json"].startswith("invalid JSON")
    assert "undecodable" in reasons["conversations-3.json"]
    assert "unreadable zip" in reasons["broken.zip"]
    assert reasons["chatgpt/conversations.json"] == (
        "a ChatGPT export (conversations with 'mapping'), not a Claude one: add it with `ragbag add chatgpt NAME PATH`"
    )
    assert len(reasons) == 7


def test_spans_by_exchange(tmp_path, count):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([eviction()]))
    doc = read_all(path)[0]["0e1b6f2a-eviction"]
    spans = claude.spans(doc, count, 60)
    assert all(count(doc.text[s.start : s.end]) <= 60 for s in spans)
    assert spans[0].metadata["roles"] == ["user"] and spans[0].metadata["turn_start"] == 1
    assert spans[-1].metadata == {"roles": ["user", "assistant"], "turn_start": 3, "turn_end": 4}
    assert doc.text[spans[-1].start : spans[-1].end] == (
        "User: Thanks, moving the backup fixed it.\n\nAssistant: [tool artifacts: create; note; Backup window]"
    )
    (whole,) = claude.spans(doc, count, 500)
    assert whole.metadata == {"roles": ["user", "assistant"], "turn_start": 1, "turn_end": 4}


def test_incremental_and_newest_copy_wins(tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    export_zip(folder / "a.zip", [eviction(), legacy()])
    newer = legacy()
    newer["updated_at"] = "2023-11-03T09:00:00Z"
    newer["chat_messages"].append(message("l3", "human", None, "And 'good night'?"))
    (folder / "b.json").write_text("")  # not an export name: ignored
    (folder / "conversations.json").write_text(json.dumps([newer]))
    docs, _, _, cursor = read_all(folder)
    assert "good night" in docs["5a5a-legacy"].text
    docs2, errors2, seen2, _ = read_all(folder, cursor)
    assert docs2 == {} and not errors2 and sorted(seen2) == ["0e1b6f2a-eviction", "5a5a-legacy"]
