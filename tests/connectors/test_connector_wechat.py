"""The wechat connector: per-contact JSON exports as their exporters write them, windows, traps."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from chat_reads import by_chat, read_chats

from ragbag.connectors import wechat
from ragbag.core.records import ReadError
from ragbag.models.embedding import token_counter

SHANGHAI = ZoneInfo("Asia/Shanghai")
T0 = datetime(2024, 3, 5, 9, 30, tzinfo=SHANGHAI)  # 2024-03-05 01:30 UTC
ME_ID = "wxid_me0001"


@pytest.fixture(scope="module")
def count():
    return token_counter()


def at(minutes: float) -> int:
    return int((T0 + timedelta(minutes=minutes)).timestamp())


def msg(
    local_id: int,
    minutes: float,
    content: str,
    *,
    kind: int = 1,
    talker: str,
    mine: bool = False,
    sender: str | None = None,
    **extra,
) -> dict:
    """One message as the database-dump exporters write it (fields in their order)."""
    frm, to = (ME_ID, talker) if mine else (talker, ME_ID)
    if sender and not mine and talker.endswith("@chatroom"):
        content = f"{sender}:\n{content}"  # group chats prefix others' messages with their wxid
    return {
        "localId": local_id,
        "talker": talker,
        "type": kind,
        "subType": 0,
        "content": content,
        "createTime": at(minutes),
        "isSentFromSelf": mine,
        "fromUser": frm,
        "toUser": to,
        **extra,
    }


def app_xml(title: str, app_type: int, extra: str = "") -> str:
    return (
        '<?xml version="1.0"?>\n<msg>\n\t<appmsg appid="" sdkver="0">\n'
        f"\t\t<title>{title}</title>\n\t\t<des></des>\n\t\t<type>{app_type}</type>\n{extra}"
        "\t</appmsg>\n\t<fromusername>wxid_x</fromusername>\n</msg>\n"
    )


IMAGE = (
    '<?xml version="1.0"?>\n<msg>\n\t<img aeskey="a1b2c3" encryver="1" cdnthumbaeskey="a1b2c3" '
    'cdnthumburl="3057020100044b30490201" cdnthumblength="4183" length="90512" md5="9f3c" />\n</msg>\n'
)
VOICE = (
    '<msg><voicemsg endflag="1" cancelflag="0" forwardflag="0" voiceformat="4" voicelength="2480" '
    'length="3962" /></msg>'
)
EMOJI = (
    '<msg><emoji fromusername="wxid_alice01" tousername="wxid_me0001" type="2" md5="7e2b" len="38522" '
    'productid="" /></msg>'
)
LOCATION = (
    '<msg><location x="37.9235" y="-122.5965" scale="16" label="Mill Valley, CA" '
    'poiname="Pantoll Ranger Station" /></msg>'
)


def alice_chat() -> list:
    t = "wxid_alice01"
    return [
        msg(101, 0, "Did you book the cabin for the hiking trip?", talker=t),
        msg(102, 1, "Yes! The lakeside cabin near Mount Tam, two nights.", talker=t, mine=True),
        msg(103, 2, IMAGE, kind=3, talker=t),
        msg(104, 3, VOICE, kind=34, talker=t),
        msg(105, 4, '"Alice" 撤回了一条消息', kind=10000, talker=t),
        msg(
            106,
            5,
            app_xml("Trail map: Dipsea &amp; Steep Ravine loop", 5, "\t\t<url>https://example.org/dipsea</url>\n"),
            kind=49,
            talker=t,
        ),
        msg(107, 6, EMOJI, kind=47, talker=t),
        msg(108, 7, LOCATION, kind=48, talker=t, mine=True),
        {
            "localId": 109,
            "talker": t,
            "type": 1,
            "content": "time lost",
            "createTime": "soon",
            "isSentFromSelf": False,
            "fromUser": t,
            "toUser": ME_ID,
        },
        "garbage",
        # Three hours later: a new conversation window, in Chinese, with a multi-line message.
        msg(110, 180, "周末去爬山吗？天气预报说周六是晴天。", talker=t),
        msg(111, 182, "好啊，周六早上八点出发\n我带三明治和水", talker=t, mine=True),
    ]


def group_chat() -> list:
    g = "24681357@chatroom"
    return [
        msg(201, 30, "我带帐篷和睡袋", talker=g, sender="wxid_bob002"),
        msg(202, 31, "Who is bringing the camping stove?", talker=g, sender="wxid_alice01"),
        msg(203, 32, "I'll bring the stove and fuel", talker=g, mine=True),
        msg(
            204,
            33,
            app_xml("我来买零食", 57, "\t\t<refermsg><content>Who is bringing...</content></refermsg>\n"),
            kind=49,
            talker=g,
            sender="wxid_carol3",
            displayName="Carol",
        ),
        msg(205, 34, '"Bob" 撤回了一条消息', kind=10000, talker=g),
    ]


def tweak_chat() -> list:
    """WeChatTweak's /wechat/chatlog shape: no type, no talker; kinds are sniffed from the XML."""
    rows = [
        ("wxid_bob002", ME_ID, "Running ten minutes late, save me a seat", 60, False),
        (ME_ID, "wxid_bob002", "No problem, we are at the corner table", 61, True),
        ("wxid_bob002", ME_ID, IMAGE, 62, False),
        ("wxid_bob002", ME_ID, '"Bob" recalled a message', 63, False),
        ("wxid_bob002", ME_ID, "<3 see you soon", 64, False),
    ]
    return [
        {"fromUser": f, "toUser": to, "content": c, "createTime": at(m), "isSentFromSelf": s} for f, to, c, m, s in rows
    ]


def write_export(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    dump = lambda data: json.dumps(data, ensure_ascii=False, indent=2)  # noqa: E731
    (folder / "Alice-wxid_alice01.json").write_text(dump(alice_chat()), encoding="utf-8")
    (folder / "周末登山群-24681357@chatroom.json").write_text(dump(group_chat()), encoding="utf-8")
    (folder / "Bob-wxid_bob002.json").write_text(
        json.dumps({"hasMore": 0, "chatLogs": tweak_chat()}, ensure_ascii=False), encoding="utf-8"
    )
    dan = [msg(301, 120, "明天下午三点在星巴克见面，记得带上合同。", talker="wxid_dan004")]
    (folder / "老丹-wxid_dan004.json").write_bytes(dump(dan).encode("gb18030"))  # a Windows tool's GBK
    (folder / "Broken-wxid_broken5.json").write_text('[{"localId": 1, "createTime": 17096', encoding="utf-8")
    (folder / "Noise-wxid_noise6.json").write_bytes(bytes(range(0x80, 0x100)) * 4)
    (folder / "contacts.json").write_text(json.dumps({"contacts": [{"wxid": "wxid_alice01"}]}))
    return folder


def read_all(path: Path, cursor=None):
    return read_chats(wechat, path, cursor)


def test_direct_chat_windows_field_by_field(tmp_path):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    first, second = by_chat(docs)["Alice"]
    assert first.text == (
        "2024-03-05 01:30 Alice: Did you book the cabin for the hiking trip?\n"
        "2024-03-05 01:31 Me: Yes! The lakeside cabin near Mount Tam, two nights.\n"
        "2024-03-05 01:35 Alice: [link] Trail map: Dipsea & Steep Ravine loop\n"
        "2024-03-05 01:37 Me: [location] Pantoll Ranger Station\n"
    )
    assert first.native_id == f"wxid_alice01@{at(0)}"
    assert first.title == "Alice · 2024-03-05"
    assert first.created_at == datetime(2024, 3, 5, 1, 30, tzinfo=UTC)
    assert first.updated_at == datetime(2024, 3, 5, 1, 37, tzinfo=UTC)
    assert first.uri.endswith(f"Alice-wxid_alice01.json#{at(0)}")
    assert first.authors == ["Alice", "Me"]
    assert first.metadata == {
        "chat": "Alice",
        "chat_id": "wxid_alice01",
        "is_group": False,
        "sender": ["Alice", "Me"],
        "is_from_me": True,
        "date": "2024-03-05",
        "messages": 4,
        "file": "Alice-wxid_alice01.json",
    }
    assert second.text == (
        "2024-03-05 04:30 Alice: 周末去爬山吗？天气预报说周六是晴天。\n"
        "2024-03-05 04:32 Me: 好啊，周六早上八点出发\n  我带三明治和水\n"
    )
    assert second.created_at == datetime(2024, 3, 5, 4, 30, tzinfo=UTC)
    assert second.metadata["messages"] == 2


def test_group_prefixes_become_senders_and_system_lines_go(tmp_path):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    (group,) = by_chat(docs)["周末登山群"]
    assert group.text == (
        "2024-03-05 02:00 Bob: 我带帐篷和睡袋\n"  # named by Bob-wxid_bob002.json
        "2024-03-05 02:01 Alice: Who is bringing the camping stove?\n"
        "2024-03-05 02:02 Me: I'll bring the stove and fuel\n"
        "2024-03-05 02:03 Carol: 我来买零食\n"
    )
    assert "wxid_alice01:" not in group.text and "撤回" not in group.text
    assert group.metadata["chat_id"] == "24681357@chatroom" and group.metadata["is_group"] is True
    assert group.metadata["sender"] == ["Bob", "Alice", "Me", "Carol"]


def test_typeless_exports_are_sniffed_and_gbk_is_decoded(tmp_path):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    chats = by_chat(docs)
    (bob,) = chats["Bob"]
    assert bob.text == (
        "2024-03-05 02:30 Bob: Running ten minutes late, save me a seat\n"
        "2024-03-05 02:31 Me: No problem, we are at the corner table\n"
        "2024-03-05 02:34 Bob: <3 see you soon\n"
    )
    assert bob.metadata["chat_id"] == "wxid_bob002"
    (dan,) = chats["老丹"]
    assert "明天下午三点在星巴克见面" in dan.text and dan.metadata["is_from_me"] is False


def test_bad_files_and_records_are_reported_and_the_rest_read(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, errors, _, _ = read_all(folder)
    reasons = {e.uri.rsplit("/", 1)[-1]: e.error for e in errors}
    assert reasons.keys() == {
        "Alice-wxid_alice01.json#109",
        "Alice-wxid_alice01.json#9",
        "Broken-wxid_broken5.json",
        "Noise-wxid_noise6.json",
        "contacts.json",
    }
    assert reasons["contacts.json"].startswith("not a WeChat chat export")  # said, not silently skipped
    assert "createTime" in reasons["Alice-wxid_alice01.json#109"]
    assert "not a message object" in reasons["Alice-wxid_alice01.json#9"]
    assert reasons["Broken-wxid_broken5.json"].startswith("invalid JSON")
    assert "undecodable" in reasons["Noise-wxid_noise6.json"]
    assert all("\n" not in e.error for e in errors)
    assert len(docs) == 5  # Alice ×2, group, Bob, Dan; contacts.json is not a chat


def test_window_size_bound_and_stable_ids(tmp_path, monkeypatch):
    t = "wxid_alice01"
    chat = [msg(i, i, f"message number {i}", talker=t) for i in range(10)]
    folder = tmp_path / "e"
    folder.mkdir()
    (folder / "Alice-wxid_alice01.json").write_text(json.dumps(chat))
    monkeypatch.setattr(wechat, "WINDOW_MESSAGES", 4)
    docs, _, _, _ = read_all(folder)
    assert [d.metadata["messages"] for d in docs] == [4, 4, 2]
    ids = [d.native_id for d in docs]
    # Messages appended later only ever touch the last window.
    (folder / "Alice-wxid_alice01.json").write_text(json.dumps(chat + [msg(10, 10, "one more", talker=t)]))
    again, _, _, _ = read_all(folder)
    assert [d.native_id for d in again] == ids
    assert [d.content_hash for d in again[:2]] == [d.content_hash for d in docs[:2]]
    assert again[2].content_hash != docs[2].content_hash


def test_incremental_refresh(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, errors, seen, cursor = read_all(folder)
    assert not seen
    json.loads(json.dumps(cursor))  # the cursor is stored as JSON

    # Nothing changed: no file is parsed, every window is vouched for, errors still reported.
    docs2, errors2, seen2, cursor2 = read_all(folder, cursor)
    assert docs2 == [] and sorted(seen2) == sorted(d.native_id for d in docs)
    assert sorted(e.uri for e in errors2) == sorted(e.uri for e in errors)

    # One chat grows: only that file is read again.
    alice = folder / "Alice-wxid_alice01.json"
    rows = json.loads(alice.read_text()) + [msg(112, 185, "记得带雨衣", talker="wxid_alice01")]
    alice.write_text(json.dumps(rows, ensure_ascii=False, indent=2))
    docs3, _, seen3, cursor3 = read_all(folder, cursor2)
    assert {d.metadata["chat"] for d in docs3} == {"Alice"}
    assert "记得带雨衣" in docs3[-1].text
    assert set(seen3) == {d.native_id for d in docs if d.metadata["chat"] != "Alice"}

    # A contact's file is deleted: its windows are gone (neither read nor Seen), and the group
    # chat, which named Bob after that file, is read again and now shows his wxid.
    (folder / "Bob-wxid_bob002.json").unlink()
    docs4, _, seen4, _ = read_all(folder, cursor3)
    assert {d.metadata["chat"] for d in docs4} == {"周末登山群"}
    assert "wxid_bob002: 我带帐篷和睡袋" in docs4[0].text
    assert set(seen4) == {d.native_id for d in docs + docs3 if d.metadata["chat"] in ("Alice", "老丹")}


def test_the_same_chat_in_two_exports_is_kept_once_newest_wins(tmp_path):
    folder = tmp_path / "exports"
    (folder / "2024-03").mkdir(parents=True)
    (folder / "2024-04").mkdir()
    t = "wxid_alice01"
    old = [msg(1, 0, "first draft of the plan", talker=t)]
    new = old + [msg(2, 5, "final plan: meet at the trailhead", talker=t)]
    (folder / "2024-03" / "Alice-wxid_alice01.json").write_text(json.dumps(new))
    (folder / "2024-04" / "Alice-wxid_alice01.json").write_text(json.dumps(old))
    docs, errors, _, _ = read_all(folder)
    assert not errors and len(docs) == 1
    assert "final plan" in docs[0].text  # the copy whose last message is newest


def test_spans_are_whole_lines_within_budget_with_senders(tmp_path, count):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    (group,) = by_chat(docs)["周末登山群"]
    spans = wechat.spans(group, count, 24)
    assert len(spans) > 1
    for sp in spans:
        piece = group.text[sp.start : sp.end]
        assert count(piece) <= 24 and piece == piece.strip()
        assert sp.metadata["sender"] and isinstance(sp.metadata["is_from_me"], bool)
    whole = wechat.spans(group, count, 500)
    assert len(whole) == 1
    assert whole[0].metadata == {"sender": ["Bob", "Alice", "Me", "Carol"], "is_from_me": True}
    mine = [sp for sp in spans if "I'll bring the stove" in group.text[sp.start : sp.end]]
    assert mine and all(sp.metadata["is_from_me"] for sp in mine)


def test_a_single_file_path_and_a_missing_path(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, _, _, _ = read_all(folder / "Alice-wxid_alice01.json")
    assert {d.metadata["chat"] for d in docs} == {"Alice"}
    items = list(wechat.read(tmp_path / "nope", "chats", None))
    assert isinstance(items[0], ReadError) and "no such file" in items[0].error
    assert wechat.SCHEDULE.split()[1:] == ["4", "*", "*", "*"]


def test_the_messages_shape_with_isself_is_mine(tmp_path):
    """{"messages": [{talker, isSelf, sender, createTime (ms)}]}: my messages are mine."""
    t0 = 1_735_725_600_000
    export = {
        "messages": [
            {
                "talker": "wxid_wei88",
                "isSelf": False,
                "sender": "wxid_wei88",
                "createTime": t0,
                "type": 1,
                "content": "明天几点的火车？",
            },
            {
                "talker": "wxid_wei88",
                "isSelf": True,
                "sender": "wxid_me",
                "createTime": t0 + 60_000,
                "type": 1,
                "content": "早上八点，G12次。",
            },
        ]
    }
    (tmp_path / "Wei-wxid_wei88.json").write_text(json.dumps(export, ensure_ascii=False))
    docs, errors, _, _ = read_all(tmp_path)
    assert errors == [] and len(docs) == 1
    assert "Me: 早上八点" in docs[0].text and "Wei: 明天几点" in docs[0].text
