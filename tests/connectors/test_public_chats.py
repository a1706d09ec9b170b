"""Regression tests of issue 31 for the chat-export connectors (claude, chatgpt, wechat).

Claude and ChatGPT use polylogue's public schema representatives (tests/fixtures/public/<connector>,
SOURCES.tsv there), unchanged or with a minimal mutation said so in each test. WeChat: no public
PyWxDump export exists (its repository is gone and carried no sample), so its shape is built here
from PyWxDump's own source (xaoyaoo/PyWxDump ``pywxdump/db/dbMSG.py``
``get_msg_detail``, ``pywxdump/db/export/exportJSON.py`` and ``exportCSV.py``): rows
``{id, MsgSvrID, type_name, is_sender, talker, room_name, msg, src, extra, CreateTime}`` where
``room_name`` is the chat, ``talker`` the sender (the owner's wxid or "我" when ``is_sender``),
``CreateTime`` local time ``YYYY-MM-DD HH:MM:SS``, files ``<wxid>_<i>_<j>.json`` / ``.csv`` beside
``users.json`` (wxid → {nickname, remark, …}).
"""

from __future__ import annotations

import csv
import json
from datetime import datetime

from conftest import FIXTURES

from ragbag.connectors import chatgpt, claude, wechat
from ragbag.core.records import Document, ReadError

PUBLIC = FIXTURES / "public"
CLAUDE_00 = PUBLIC / "claude/polylogue/polylogue__schemas__providers__claude-ai__representatives__sample-00.json"
GPT_00 = PUBLIC / "chatgpt/polylogue/polylogue__schemas__providers__chatgpt__representatives__sample-00.json"


def read(module, path):
    docs, errors = [], []
    for item in module.read(path, "s", None):
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, ReadError):
            errors.append(item)
    return docs, errors


def test_claude_null_message_loses_only_that_entry(tmp_path):
    conv = json.loads(CLAUDE_00.read_text())  # mutation: a null inserted in chat_messages
    conv["chat_messages"].insert(1, None)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]))
    docs, errors = read(claude, path)
    assert len(docs) == 1 and docs[0].metadata["turns"] == 3
    assert [e.uri.rsplit("#", 1)[1] for e in errors] == [f"{conv['uuid']}/messages/1"]
    assert "not an object" in errors[0].error


def branched(leaf: str | None = None) -> dict:
    """sample-00 made a branched conversation (mutation): its messages chained by
    parent_message_uuid, and an earlier, abandoned answer to the first question beside them."""
    conv = json.loads(CLAUDE_00.read_text())
    parent = "00000000-0000-4000-8000-000000000000"
    for n, msg in enumerate(conv["chat_messages"]):
        msg["parent_message_uuid"], msg["created_at"] = parent, f"2024-01-01T00:0{n}:00Z"
        parent = msg["uuid"]
    dead = {
        "uuid": "dead-1",
        "sender": "assistant",
        "parent_message_uuid": conv["chat_messages"][0]["uuid"],
        "created_at": "2024-01-01T00:00:30Z",
        "text": "Dead branch answer.",
        "content": [{"type": "text", "text": "Dead branch answer."}],
    }
    conv["chat_messages"].insert(1, dead)
    if leaf:
        conv["current_leaf_message_uuid"] = leaf
    return conv


def test_claude_branches_follow_the_current_one(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([branched()]))
    (doc,), errors = read(claude, path)
    assert not errors and "Dead branch answer." not in doc.text and doc.metadata["turns"] == 3
    path.write_text(json.dumps([branched(leaf="dead-1")]))  # the export names the current leaf
    (doc,), _ = read(claude, path)
    assert doc.text.endswith("Assistant: Dead branch answer.\n") and doc.metadata["turns"] == 2


def test_chatgpt_user_messages_are_kept_whatever_their_recipient():
    # polylogue's representative: every recipient is a synthetic token; it read as nothing at all
    docs, errors = read(chatgpt, GPT_00)
    assert not errors and len(docs) == 1
    assert "Could you review this code for potential issues?" in docs[0].text


def test_chatgpt_one_bad_message_fails_alone(tmp_path):
    conv = json.loads(GPT_00.read_text())  # mutation: one message's author is a string
    first = next(k for k, n in conv["mapping"].items() if not n.get("parent"))
    conv["mapping"][first]["message"]["author"] = "user"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]))
    (doc,), errors = read(chatgpt, path)
    assert [e.uri.rsplit("/", 1)[1] for e in errors] == [first] and "AttributeError" in errors[0].error
    assert doc.text  # the rest of the conversation is kept


ROOM, ME_ID, BOB, CAROL = "4455@chatroom", "wxid_me", "wxid_bob", "wxid_carol"


def pywxdump_rows() -> list[dict]:
    def row(n, type_name, sender, talker, msg, at):
        return {
            "id": n,
            "MsgSvrID": str(9000 + n),
            "type_name": type_name,
            "is_sender": sender,
            "talker": talker,
            "room_name": ROOM,
            "msg": msg,
            "src": "",
            "extra": {},
            "CreateTime": at,
        }

    return [
        row(1, "文本", 0, BOB, "周末去爬山吗？", "2024-03-02 09:00:00"),
        row(2, "文本", 1, ME_ID, "好啊，几点？", "2024-03-02 09:01:00"),
        row(3, "图片", 0, CAROL, "图片", "2024-03-02 09:02:00"),
        row(4, "引用回复", 0, CAROL, "八点见\n\n[引用](2024-03-02 09:01:00)我:好啊，几点？", "2024-03-02 09:03:00"),
        row(5, "消息撤回1", 0, BOB, '"Bob" 撤回了一条消息', "2024-03-02 09:04:00"),
        row(
            6,
            "(分享)卡片式链接",
            0,
            BOB,
            'Trail map\nNorth ridge\n\n<a href="https://x.test">点击查看详情</a>',
            "2024-03-02 09:05:00",
        ),
    ]


def test_pywxdump_export_chat_is_room_name_and_sender_is_talker(tmp_path):
    export = tmp_path / "export" / ROOM
    export.mkdir(parents=True)
    (export / f"{ROOM}_0_7.json").write_text(json.dumps(pywxdump_rows(), ensure_ascii=False))
    users = {BOB: {"wxid": BOB, "nickname": "Bobby", "remark": "Bob"}, CAROL: {"wxid": CAROL, "nickname": "Carol"}}
    (export / "users.json").write_text(json.dumps(users, ensure_ascii=False))
    docs, errors = read(wechat, tmp_path / "export")
    assert not errors and len(docs) == 1
    (doc,) = docs
    assert doc.metadata["chat_id"] == ROOM and doc.metadata["is_group"]
    assert doc.metadata["sender"] == ["Bob", "Me", "Carol"] and doc.metadata["is_from_me"]
    lines = doc.text.splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "Bob: 周末去爬山吗？",
        "Me: 好啊，几点？",
        "Carol: 八点见",  # the quoted message is left out; the picture and the recall dropped
        "Bob: [link] Trail map",
    ]
    local = datetime(2024, 3, 2, 9, 0).astimezone()  # PyWxDump writes local time
    assert doc.created_at == local


def test_pywxdump_csv_export_reads_like_its_json(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    rows = pywxdump_rows()
    with open(export / f"{ROOM}_0_7.csv", "w", encoding="utf-8", newline="") as f:
        fields = ["id", "MsgSvrID", "type_name", "is_sender", "talker", "room_name", "msg", "src", "CreateTime"]
        writer = csv.writer(f)
        writer.writerow(fields)
        writer.writerows([[r[k] for k in fields] for r in rows])
    (csv_doc,), errors = read(wechat, export)
    assert not errors
    (export / f"{ROOM}_0_7.csv").unlink()
    (export / f"{ROOM}_0_7.json").write_text(json.dumps(rows, ensure_ascii=False))
    (json_doc,), _ = read(wechat, export)
    assert csv_doc.text == json_doc.text and csv_doc.metadata["chat_id"] == ROOM
