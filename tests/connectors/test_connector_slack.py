"""The slack connector: workspace exports (folder, zip, one day file) as Slack writes them (the
evaluation homes' writer, ``ragbag_evalsets.formats.slack``), windows, threads, traps, refresh."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from chat_reads import read_chats

from ragbag.connectors import slack
from ragbag.core.records import Document
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.slack import SlackExport, escape, link, mention

BERLIN = ZoneInfo("Europe/Berlin")
T0 = datetime(2024, 3, 5, 9, 30, tzinfo=BERLIN)  # 2024-03-05 08:30 UTC


@pytest.fixture(scope="module")
def count():
    return token_counter()


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


class Team:
    """The export the tests start from, with the ids its checks need."""

    def __init__(self) -> None:
        ex = self.ex = SlackExport()
        self.ana = ex.user("Ana Souza", "ana")
        self.ben = ex.user("Ben Okafor", "ben")
        self.chen = ex.user("陈静", "chen")
        self.general = ex.channel("general", [self.ana, self.ben, self.chen])
        self.ops = ex.channel("ops-private", [self.ana, self.ben], private=True)
        self.dm = ex.dm(self.ana, self.ben)
        self.group = ex.mpim([self.ana, self.ben, self.chen])
        g = self.general
        ex.join(g, at(-5), self.chen)
        self.question = ex.say(
            g,
            at(0),
            self.ana,
            f"{mention(self.ben)} can you check {link('https://example.org/plan?a=1&b=2', 'the plan')}?",
        )
        ex.say(g, at(2), self.ben, "On it", thread=self.question)
        ex.say(g, at(3), self.chen, "我也看一下\n第二行", thread=self.question)
        ex.say(g, at(4), self.ben, escape("Budget is < 5k & fine"), files=[("q1.xlsx", "Q1 budget")])
        # Three hours later: a new window; and a reply to the morning's thread the next day.
        ex.say(g, at(180), self.chen, f"See <#{self._cid('general')}|general> and <!here>")
        ex.say(g, at(60 * 24 + 10), self.ana, "Next-day answer: Thursday works", thread=self.question)
        ex.say(self.dm, at(30), self.ben, "lunch?")
        ex.say(self.dm, at(31), self.ana, "yes, noon")
        ex.say(self.group, at(40), self.chen, "group hello")
        ex.say(self.ops, at(50), self.ana, "rotate the keys")

    def _cid(self, name: str) -> str:
        return next(c["id"] for c in self.ex.lists["channels.json"] if c["name"] == name)

    def write(self, folder: Path) -> Path:
        for rel, data in self.ex.files().items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        return folder


def read_all(path: Path, cursor=None, options=None):
    return read_chats(slack, path, cursor, options, source="work")


def by_title(docs: list[Document]) -> dict[str, Document]:
    """Each title's first document (a chat's windows of one day share their title)."""
    out: dict[str, Document] = {}
    for d in sorted(docs, key=lambda d: d.created_at or datetime.min.replace(tzinfo=UTC)):
        out.setdefault(d.title, d)
    return out


def test_channel_window_and_threads_field_by_field(tmp_path):
    team = Team()
    docs, errors, _, _ = read_all(team.write(tmp_path / "export"), options={"me": "ana"})
    assert errors == []
    titles = by_title(docs)
    window = titles["#general · 2024-03-05"]
    cid = team._cid("general")
    assert window.text == (
        "2024-03-05 08:30 Me: @Ben Okafor can you check the plan (https://example.org/plan?a=1&b=2)?\n"
        "  [thread: 3 replies]\n"
        "2024-03-05 08:34 Ben Okafor: Budget is < 5k & fine\n"
        "  [file] Q1 budget (q1.xlsx)\n"
    )
    assert window.native_id == f"{cid}@{team.question}"
    assert window.uri.endswith(f"export/general/2024-03-05.json#{team.question}")
    assert window.created_at == datetime.fromtimestamp(float(team.question), tz=UTC)  # ts to the microsecond
    assert f"{window.created_at:%H:%M:%S}" == "08:30:00" and f"{window.updated_at:%H:%M:%S}" == "08:34:00"
    assert window.authors == ["Me", "Ben Okafor"]
    assert window.metadata == {
        "chat": "#general",
        "chat_id": cid,
        "is_group": True,
        "sender": ["Me", "Ben Okafor"],
        "is_from_me": True,
        "date": "2024-03-05",
        "messages": 2,
        "file": "general/2024-03-05.json",
    }
    later = next(d for d in docs if d.text.startswith("2024-03-05 11:30"))
    assert later.text == "2024-03-05 11:30 陈静: See #general and @here\n"
    assert later.metadata["is_from_me"] is False

    thread_title = "#general · thread “@Ben Okafor can you check the plan (https://example.org/pla…” · 2024-03-05"
    same_day = titles[thread_title]
    assert same_day.text == (
        "2024-03-05 08:30 Me: @Ben Okafor can you check the plan (https://example.org/plan?a=1&b=2)?\n"
        "2024-03-05 08:32 Ben Okafor: On it\n"
        "2024-03-05 08:33 陈静: 我也看一下\n"
        "  第二行\n"
    )
    assert same_day.metadata["thread_ts"] == team.question
    assert same_day.native_id.startswith(f"{cid}@{team.question}/")
    assert f"{same_day.created_at:%Y-%m-%d %H:%M:%S}" == "2024-03-05 08:32:00"
    assert same_day.metadata["sender"] == ["Me", "Ben Okafor", "陈静"] and same_day.metadata["messages"] == 3
    # The next day's reply is its own document, opening with the question from the day before.
    next_day = titles[thread_title.replace("· 2024-03-05", "· 2024-03-06")]
    assert next_day.text.splitlines() == [
        "2024-03-05 08:30 Me: @Ben Okafor can you check the plan (https://example.org/plan?a=1&b=2)?",
        "2024-03-06 08:40 Me: Next-day answer: Thursday works",
    ]
    assert next_day.metadata["file"] == "general/2024-03-06.json"


def test_dms_group_dms_and_private_channels(tmp_path):
    team = Team()
    docs, _, _, _ = read_all(team.write(tmp_path / "export"), options={"me": team.ana})
    chats = {d.metadata["chat"]: d for d in docs if "thread_ts" not in d.metadata}
    dm = chats["Ben Okafor"]  # a DM is named by the other person
    assert dm.metadata["chat_id"] == team.dm and dm.metadata["is_group"] is False
    assert dm.text == "2024-03-05 09:00 Ben Okafor: lunch?\n2024-03-05 09:01 Me: yes, noon\n"
    group = chats["Ben Okafor, 陈静"]
    assert group.metadata["is_group"] is True and group.metadata["chat_id"].startswith("C")
    private = chats["#ops-private"]
    assert private.metadata["chat_id"].startswith("G") and private.text.endswith("Me: rotate the keys\n")
    # Without `me`, nobody is "Me" and a DM names both people.
    plain, _, _, _ = read_all(tmp_path / "export")
    assert not any(d.metadata["is_from_me"] for d in plain)
    assert "Ana Souza, Ben Okafor" in {d.metadata["chat"] for d in plain}


def test_zip_reads_as_the_folder_does(tmp_path):
    team = Team()
    folder_docs, _, _, _ = read_all(team.write(tmp_path / "export"))
    archive = tmp_path / "slack-export.zip"
    archive.write_bytes(team.ex.zip_bytes())
    zip_docs, errors, _, cursor = read_all(archive)
    assert errors == []
    again, _, seen, _ = read_all(archive, cursor)  # an unchanged zip is not opened again
    assert again == [] and sorted(seen) == sorted(d.native_id for d in zip_docs)
    assert sorted((d.native_id, d.text, d.title) for d in zip_docs) == sorted(
        (d.native_id, d.text, d.title) for d in folder_docs
    )
    assert all(d.uri.startswith(f"{archive.absolute()}!/") for d in zip_docs)
    assert {d.metadata["file"] for d in zip_docs} == {"slack-export.zip"}


def test_one_day_file_reads_with_its_exports_names(tmp_path):
    team = Team()
    export = team.write(tmp_path / "export")
    docs, errors, _, _ = read_all(export / "general" / "2024-03-05.json")
    assert errors == []
    assert {d.metadata["chat"] for d in docs} == {"#general"}
    assert "Ben Okafor: On it" in "".join(d.text for d in docs)
    assert any(d.metadata["file"] == "2024-03-05.json" for d in docs)


def test_system_lines_bots_attachments_blocks_and_edits(tmp_path):
    team = Team()
    ex, g = team.ex, team.general
    base = int(at(300).timestamp())

    def raw(n: int, **fields) -> dict:
        return ex.record(g, {"type": "message", "ts": f"{base + n}.000100", **fields})

    raw(1, subtype="channel_topic", user=team.ana, text="set the channel topic: launch")
    raw(2, subtype="channel_purpose", user=team.ana, text="set the channel purpose: x")
    raw(3, subtype="pinned_item", user=team.ana, text="pinned a message")
    raw(
        4,
        subtype="bot_message",
        bot_id="B01",
        username="deploy-bot",
        text="",
        attachments=[
            {"pretext": "Deploy *finished*", "title": "api v2.3", "text": "3 hosts", "fallback": "Deploy finished"},
            {"from_url": "https://news.example/x", "title": "A news page", "text": "long page text"},
        ],
    )
    raw(
        5,
        user=team.ben,
        text="",
        blocks=[
            {
                "type": "rich_text",
                "elements": [
                    {
                        "type": "rich_text_section",
                        "elements": [{"type": "text", "text": "Steps for "}, {"type": "user", "user_id": team.ana}],
                    },
                    {
                        "type": "rich_text_list",
                        "elements": [
                            {"type": "rich_text_section", "elements": [{"type": "text", "text": "backup"}]},
                            {
                                "type": "rich_text_section",
                                "elements": [{"type": "link", "url": "https://x.example/r", "text": "restore"}],
                            },
                        ],
                    },
                ],
            }
        ],
    )
    raw(6, user=team.ben, text="first draft", edited={"user": team.ben, "ts": f"{base + 9}.000000"})
    raw(7, user=team.chen, text="typo heer")
    raw(
        8,
        subtype="message_changed",
        hidden=True,
        message={"type": "message", "user": team.chen, "text": "typo here (fixed)", "ts": f"{base + 7}.000100"},
    )
    raw(9, user=team.chen, text="to be deleted")
    raw(10, subtype="message_deleted", hidden=True, deleted_ts=f"{base + 9}.000100")
    raw(11, subtype="tombstone", user="USLACKBOT", text="This message was deleted.", reply_count=1)
    raw(12, user=team.ana, text="orphan reply", thread_ts=f"{base + 11}.000100", parent_user_id="USLACKBOT")
    raw(13, subtype="file_share", user=team.ana, text="", files=[{"name": "gone.png", "mode": "tombstone"}])
    raw(14, subtype="me_message", user=team.ben, text="waves")
    raw(15, subtype="thread_broadcast", user=team.chen, text="also to the channel", thread_ts=team.question)
    docs, errors, _, _ = read_all(team.write(tmp_path / "export"))
    assert errors == []
    broadcast = [d for d in docs if "also to the channel" in d.text]  # read once, in its thread
    assert len(broadcast) == 1 and broadcast[0].metadata["thread_ts"] == team.question
    window = next(d for d in docs if "deploy-bot" in d.text)
    assert window.text == (
        "2024-03-05 13:30 deploy-bot: Deploy *finished*\n"
        "  api v2.3\n"
        "  3 hosts\n"
        "  [link] A news page\n"
        "2024-03-05 13:30 Ben Okafor: Steps for @Ana Souza\n"
        "  - backup\n"
        "  - restore (https://x.example/r)\n"
        "2024-03-05 13:30 Ben Okafor: first draft\n"
        "2024-03-05 13:30 陈静: typo here (fixed)\n"
        "2024-03-05 13:30 Ben Okafor: waves\n"
    )
    orphan = next(d for d in docs if "orphan reply" in d.text)  # its first message was deleted
    assert orphan.text == "2024-03-05 13:30 Ana Souza: orphan reply\n"
    assert orphan.title == "#general · thread from 2024-03-05 13:30 · 2024-03-05"


def test_bad_records_and_files_are_reported_and_the_rest_is_read(tmp_path):
    team = Team()
    export = team.write(tmp_path / "export")
    day = export / "general" / "2024-03-05.json"
    messages = json.loads(day.read_text())
    messages += ["junk", {"type": "message", "user": team.ana, "text": "no time"}, {"ts": "soon", "text": "x"}]
    messages.append({"type": "message", "ts": "1709627400.000900", "user": team.ana, "text": {"not": "text"}})
    day.write_text(json.dumps(messages))
    (export / "general" / "2024-03-07.json").write_text('[{"ts": "1709800000.0001", "text": "cut')
    (export / "general" / "2024-03-08.json").write_bytes(bytes(range(0x80, 0x100)) * 3)
    (export / "notes").mkdir()
    (export / "notes" / "todo.json").write_text(json.dumps({"todo": ["buy milk"]}))
    (export / "users.json").write_text("{broken")
    docs, errors, _, _ = read_all(export)
    why = {e.uri.replace(str(export.absolute()), ""): e.error for e in errors}
    assert why["/general/2024-03-05.json#" + str(len(messages) - 4)] == "not a message object (str)"
    assert why["/general/2024-03-05.json#" + str(len(messages) - 3)] == "no usable ts (None)"
    assert why["/general/2024-03-05.json#" + str(len(messages) - 2)] == "no usable ts ('soon')"
    assert why["/general/2024-03-05.json#1709627400.000900"] == "text is a dict, not text"
    assert why["/general/2024-03-07.json"].startswith("invalid JSON")
    assert "/general/2024-03-08.json" in why
    assert why["/notes/todo.json"].startswith("not a Slack export's day file")
    assert why["/users.json"].endswith("names from it are left as ids")
    assert len(errors) == 8
    # The good messages are all still read. Without users.json, people are named by the
    # user_profile their messages carry; a DM's members (named only there) stay ids.
    text = "".join(d.text for d in docs)
    assert "Ben Okafor: On it" in text and "@Ben Okafor can you check" in text
    assert f"{team.ana}, {team.ben}" in {d.metadata["chat"] for d in docs}


def test_not_an_export(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    (_, errors, _, _) = read_all(notes)
    assert [e.error for e in errors] == ["not a Slack export: expected its zip, its folder, or a day file (.json)"]
    archive = tmp_path / "photos.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.txt", "x")
    docs, errors, _, _ = read_all(archive)
    assert docs == [] and [e.error for e in errors] == [
        "not a Slack export: no users.json/channels.json and no conversation day files"
    ]
    team = Team()
    users = team.write(tmp_path / "export") / "users.json"
    assert "not a conversation" in read_all(users)[1][0].error
    assert read_all(tmp_path / "missing")[1][0].error == "no such file or directory"


def test_refresh_seen_appended_deleted_removed(tmp_path):
    team = Team()
    export = team.write(tmp_path / "export")
    first, _, _, cursor = read_all(export)
    ids = {d.native_id: d for d in first}
    # Nothing changed: every document is Seen, none re-read.
    docs, errors, seen, cursor = read_all(export, cursor)
    assert docs == [] and errors == [] and sorted(seen) == sorted(ids)

    # Appended to a day file: that file is read again (and the next day's, whose thread document
    # quotes a message of it); earlier windows keep their ids and text; the rest is Seen.
    team.ex.say(team.general, at(181), team.ben, "appended later")
    day = export / "general" / "2024-03-05.json"
    day.write_bytes(team.ex.files()["general/2024-03-05.json"])
    docs, _, seen, cursor = read_all(export, cursor)
    assert {d.metadata["file"] for d in docs} == {"general/2024-03-05.json", "general/2024-03-06.json"}
    assert set(seen) == {i for i, d in ids.items() if d.metadata["file"] not in {d.metadata["file"] for d in docs}}
    changed = {d.native_id: d for d in docs}
    assert set(changed) == {i for i, d in ids.items() if d.metadata["file"].startswith("general/")}
    for native_id, doc in changed.items():
        if "appended later" in doc.text:
            assert doc.text == ids[native_id].text + "2024-03-05 11:31 Ben Okafor: appended later\n"
        else:
            assert doc.text == ids[native_id].text

    # A message deleted from its file is gone; a removed day file's documents disappear.
    day.write_text(json.dumps([m for m in json.loads(day.read_text()) if m.get("text") != "appended later"]))
    (export / "general" / "2024-03-06.json").unlink()
    docs, _, seen, cursor = read_all(export, cursor)
    assert not any("appended later" in d.text for d in docs)
    assert {d.native_id for d in docs} | set(seen) == {
        i for i, d in ids.items() if d.metadata["file"] != "general/2024-03-06.json"
    }


def test_refresh_follows_names_me_and_a_threads_first_message(tmp_path):
    team = Team()
    export = team.write(tmp_path / "export")
    _, _, _, cursor = read_all(export)
    # The first message of a thread is edited in its own file: the next day's thread document,
    # which quotes it, is read again; other files are not.
    day = export / "general" / "2024-03-05.json"
    messages = json.loads(day.read_text())
    next(m for m in messages if m["ts"] == team.question)["text"] = "Rewritten question"
    day.write_text(json.dumps(messages))
    docs, _, _, cursor = read_all(export, cursor)
    assert {d.metadata["file"] for d in docs} == {"general/2024-03-05.json", "general/2024-03-06.json"}
    next_day = next(d for d in docs if d.metadata["file"] == "general/2024-03-06.json")
    assert next_day.text.startswith("2024-03-05 08:30 Ana Souza: Rewritten question\n")
    # A renamed user: every day file of that export is read again, with the new name.
    users = json.loads((export / "users.json").read_text())
    users[1]["profile"]["real_name"] = "Benjamin Okafor"
    (export / "users.json").write_text(json.dumps(users))
    docs, _, seen, cursor = read_all(export, cursor)
    assert seen == [] and any("Benjamin Okafor: On it" in d.text for d in docs)
    # Naming `me` re-reads too.
    docs, _, seen, _ = read_all(export, cursor, {"me": "Ana Souza"})
    assert seen == [] and any(d.metadata["is_from_me"] for d in docs)


def test_two_exports_keep_the_newest_copy(tmp_path):
    old, new = Team(), Team()
    new.ex.say(new.general, at(5), new.ana, "only in the newer export")
    old.write(tmp_path / "exports" / "2024-03")
    new.write(tmp_path / "exports" / "2024-04")
    docs, errors, _, _ = read_all(tmp_path / "exports")
    assert errors == []
    ids = [d.native_id for d in docs]
    assert len(ids) == len(set(ids))
    window = next(d for d in docs if d.title == "#general · 2024-03-05")
    assert "only in the newer export" in window.text and window.metadata["file"].startswith("2024-04/")


def test_windows_cut_at_silences_and_size(tmp_path):
    ex = SlackExport()
    a = ex.user("Ana Souza")
    ex.channel("busy", [a])
    for n in range(205):  # one a minute: one window by time, cut at 200 messages
        ex.say("busy", at(n / 2), a, f"message {n}")
    ex.say("busy", at(200), a, "after a silence")
    for rel, data in ex.files().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    docs, _, _, _ = read_all(tmp_path)
    assert [d.metadata["messages"] for d in sorted(docs, key=lambda d: d.created_at)] == [200, 5, 1]


def test_spans_carry_senders(tmp_path, count):
    team = Team()
    docs, _, _, _ = read_all(team.write(tmp_path / "export"), options={"me": "ana"})
    doc = next(d for d in docs if d.title == "#general · 2024-03-05")
    spans = slack.spans(doc, count, 512)
    assert len(spans) == 1
    assert spans[0].metadata == {"sender": ["Me", "Ben Okafor"], "is_from_me": True}
    assert doc.text[spans[0].start : spans[0].end] == doc.text.strip()


def test_public_export_legacy_file_comment_names_its_author():
    """hfaran/slack-export-viewer's test export (tests/fixtures/public/slack): a 2016 export whose
    ``file_comment`` messages name their author only in ``comment.user``; before the fix they
    read as sent by "?". Every message of the export is read, without an error."""
    archive = Path(__file__).resolve().parents[1] / "fixtures/public/slack/slack-export-viewer/tests__testarchive.zip"
    docs, errors, _, _ = read_all(archive)
    assert errors == [] and len(docs) == 43
    (doc,) = [d for d in docs if "commented on" in d.text]
    assert doc.metadata["sender"] == ["Hermione Granger"]
    assert "?" not in {s for d in docs for s in d.metadata["sender"]}


def test_a_bad_workspace_entry_fails_alone(tmp_path):
    team = Team()
    export = team.write(tmp_path / "export")
    users = json.loads((export / "users.json").read_text())
    users[0]["real_name"] = users[0]["profile"]["real_name"] = ["not", "a", "name"]  # falls back to the handle
    users.insert(1, "junk")
    (export / "users.json").write_text(json.dumps(users))
    channels = json.loads((export / "channels.json").read_text()) + [["a list"]]
    (export / "channels.json").write_text(json.dumps(channels))
    docs, errors, _, _ = read_all(export)
    assert sorted((e.uri.rsplit("/", 1)[-1], e.error) for e in errors) == [
        ("channels.json#1", "not an object (list)"),
        ("users.json#1", "not an object (str)"),
    ]
    text = "".join(d.text for d in docs)
    assert "ana: @Ben Okafor can you check" in text and "Ben Okafor: On it" in text
