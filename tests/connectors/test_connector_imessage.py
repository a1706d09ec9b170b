"""The imessage connector: chat.db as macOS writes it (real schema, WAL, typedstream bodies),
read as conversation windows, incrementally, without disturbing the live database."""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import cli, cli_json, split_read

from ragbag.connectors import imessage
from ragbag.core.errors import RagbagError
from ragbag.core.records import Document
from ragbag.models.embedding import token_counter
from ragbag.text.unreadable import Unreadable
from ragbag_evalsets.formats.imessage import CHAT_DB_SCHEMA, typedstream  # as Messages writes them

UTC = UTC
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)


def apple_ns(dt: datetime) -> int:
    return (dt - APPLE_EPOCH) // timedelta(microseconds=1) * 1000


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2024, 5, day, hour, minute, tzinfo=UTC)


class ChatDB:
    """Writes chat.db the way Messages does: a handle per address, a chat per conversation,
    message rows joined to their chat with the message date copied into the join."""

    def __init__(self, path: Path, wal: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        if wal:
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA wal_autocheckpoint = 0")
        self.db.executescript(CHAT_DB_SCHEMA)
        self.handles: dict[str, int] = {}
        self.n = 0

    @classmethod
    def open(cls, path: Path) -> ChatDB:
        self = cls.__new__(cls)
        self.path, self.db = path, sqlite3.connect(path)
        self.handles = dict((i, r) for r, i in self.db.execute("SELECT ROWID, id FROM handle"))
        self.n = self.db.execute("SELECT COUNT(*) FROM message").fetchone()[0] + 1000
        return self

    def handle(self, ident: str, service: str = "iMessage") -> int:
        if ident not in self.handles:
            cur = self.db.execute(
                "INSERT INTO handle (id, country, service, uncanonicalized_id,"
                " person_centric_id) VALUES (?, 'us', ?, NULL, NULL)",
                (ident, service),
            )
            self.handles[ident] = cur.lastrowid
        return self.handles[ident]

    def chat(
        self, guid: str, identifier: str, members: list[str], name: str | None = None, service: str = "iMessage"
    ) -> int:
        style = 43 if len(members) > 1 else 45
        cur = self.db.execute(
            "INSERT INTO chat (guid, style, state, account_id, chat_identifier, service_name,"
            " room_name, display_name, group_id) VALUES (?, ?, 3, 'A1', ?, ?, ?, ?, ?)",
            (
                guid,
                style,
                identifier,
                service,
                identifier if style == 43 else None,
                name or "",
                str(uuid.UUID(int=len(guid))),
            ),
        )
        for m in members:
            self.db.execute("INSERT INTO chat_handle_join VALUES (?, ?)", (cur.lastrowid, self.handle(m, service)))
        return cur.lastrowid

    def message(
        self,
        chat: int,
        when: datetime | int,
        sender: str | None,
        text: str | None = None,
        body: bytes | None = None,
        tapback: int = 0,
        item_type: int = 0,
        service: str = "iMessage",
        raw_text: bytes | None = None,
    ) -> tuple[int, str]:
        self.n += 1
        guid = str(uuid.UUID(int=self.n * 7919)).upper()
        date = when if isinstance(when, int) else apple_ns(when)
        handle = self.handle(sender, service) if sender else 0
        cur = self.db.execute(
            "INSERT INTO message (guid, text, handle_id, attributedBody, service, account, date,"
            " date_read, date_delivered, is_delivered, is_finished, is_from_me, is_read, is_sent,"
            " item_type, associated_message_guid, associated_message_type, cache_roomnames)"
            " VALUES (?, ?, ?, ?, ?, 'e:me@icloud.com', ?, ?, 0, 1, 1, ?, 1, ?, ?, ?, ?, NULL)",
            (
                guid,
                raw_text if raw_text is not None else text,
                handle,
                body,
                service,
                date,
                date,
                int(sender is None),
                int(sender is None),
                item_type,
                "p:0/" + guid if tapback else None,
                tapback,
            ),
        )
        self.db.execute("INSERT INTO chat_message_join VALUES (?, ?, ?)", (chat, cur.lastrowid, date))
        return cur.lastrowid, guid

    def close(self) -> Path:
        self.db.commit()
        self.db.close()
        return self.path


BOB = "+15551234567"
ALICE, CAROL = "alice@example.com", "carol@example.com"
CAROL_LONG = (
    "I think the well stands for the part of yourself you only reach when you stop running; "
    "Toru sitting at the bottom for days is the book's whole argument about grief."
)


def fixture_db(path: Path, wal: bool = True) -> tuple[ChatDB, dict]:
    db = ChatDB(path, wal)
    bob = db.chat(f"iMessage;-;{BOB}", BOB, [BOB])
    club = db.chat("iMessage;+;chat123456789", "chat123456789", [ALICE, CAROL], name="Book club")
    ids = {"bob": bob, "club": club}
    ids["w1"] = db.message(bob, at(1, 14, 3), BOB, "The plumber came by this morning")
    db.message(bob, at(1, 14, 5), None, body=typedstream("Did he fix the kitchen sink?"))
    db.message(
        bob,
        at(1, 14, 6),
        BOB,
        body=typedstream("Yes, he replaced the leaking faucet washer.\nOnly 80 dollars!", mutable=True),
    )
    db.message(bob, at(1, 14, 7), None, "Loved “Yes, he replaced the leaking faucet washer.”", tapback=2000)
    db.message(bob, at(1, 14, 8), BOB, "\ufffc", body=typedstream("\ufffc"))  # a photo alone
    ids["w2"] = db.message(bob, at(1, 18, 30), BOB, "Dinner at 8 at the Thai place?")
    ids["garbage"] = db.message(bob, at(1, 18, 31), BOB, body=b"\x00\x13garbage that is not a typedstream")
    db.message(bob, at(1, 18, 33), None, body=typedstream("Sounds good 👍"))
    ids["w3"] = db.message(club, at(3, 20, 0), ALICE, body=typedstream("Finished the Murakami novel"))
    db.message(club, at(3, 20, 1), ALICE, item_type=2)  # "Alice named the conversation"
    db.message(club, at(3, 20, 2), CAROL, body=typedstream(CAROL_LONG))
    db.message(club, at(3, 20, 4), None, "📚 Next month: The Left Hand of Darkness")
    return db, ids


def run(path, cursor=None):
    return split_read(imessage.read(path, "msgs", cursor))


def test_typedstream_bodies_of_every_length_and_class_chain():
    for text in ("Hi", "x" * 127, "é" * 100, "long " * 60, "z" * 70000, "emoji 👍🏽 and 中文", ""):
        for mutable in (False, True):
            assert imessage.attributed_text(typedstream(text, mutable)) == text
    blob = typedstream("x" * 300)
    at_ = blob.index(b"\x84\x01+") + 3
    assert blob[at_ : at_ + 3] == b"\x81\x2c\x01"  # 0x81 + 300 little-endian
    blob = typedstream("z" * 70000)
    at_ = blob.index(b"\x84\x01+") + 3
    assert blob[at_ : at_ + 5] == b"\x82\x70\x11\x01\x00"


@pytest.mark.parametrize(
    "blob, reason",
    [
        (b"", "not a typedstream"),
        (bytes(range(64)), "not a typedstream"),
        (b"bplist00\xd4\x01\x02\x03\x04\x05\x06\x07\x0aX$versionY$archiverT$topX$objects", "not a typedstream"),
        (b"\x04\x0bstreamtyped\x81\xe8\x03\x84\x01@", "no NSString"),
        (typedstream("hello world")[: typedstream("hello world").index(b"hello") + 5], "truncated"),
        (typedstream("hello").replace(b"+\x05hello", b"+\x90hello"), "unknown length tag 0x90"),
        (typedstream("hello").replace(b"+\x05hello", b"+\x81\x05"), "truncated"),
        (typedstream("hello").replace(b"hello", b"h\xffllo"), "not UTF-8"),
        (typedstream("hello").replace(b"\x84\x01+", b"\x84\x01-"), "no byte string"),
    ],
)
def test_garbage_bodies_raise_unreadable(blob, reason):
    with pytest.raises(Unreadable, match=reason):
        imessage.attributed_text(blob)


def test_apple_dates_in_nanoseconds_and_seconds():
    assert apple_ns(datetime(2024, 5, 1, 12, tzinfo=UTC)) == 736257600 * 10**9  # literal check
    assert imessage.apple_time(736257600 * 10**9) == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert imessage.apple_time(736257600) == datetime(2024, 5, 1, 12, tzinfo=UTC)  # pre-10.13
    assert imessage.apple_time(0) is None and imessage.apple_time(None) is None


def test_windows_field_by_field(tmp_path):
    db, ids = fixture_db(tmp_path / "Messages" / "chat.db")
    path = db.close()
    docs, seen, errors, cursor = run(path)
    bob1 = docs[f"iMessage;-;{BOB}/{ids['w1'][1]}"]
    assert bob1.text == (
        f"2024-05-01 14:03 {BOB}: The plumber came by this morning\n"
        "2024-05-01 14:05 Me: Did he fix the kitchen sink?\n"
        f"2024-05-01 14:06 {BOB}: Yes, he replaced the leaking faucet washer.\n"
        "  Only 80 dollars!\n"
    )  # the tapback and the photo-only message are not content
    assert bob1.title == f"{BOB} — 2024-05-01 14:03"
    assert bob1.created_at == at(1, 14, 3) and bob1.updated_at == at(1, 14, 6)
    assert bob1.authors == [BOB, "Me"]
    assert bob1.uri == f"{path.absolute()}#iMessage;-;{BOB}/{ids['w1'][1]}"
    assert bob1.metadata == {
        "chat": BOB,
        "chat_guid": f"iMessage;-;{BOB}",
        "chat_identifier": BOB,
        "display_name": "",
        "participants": [BOB],
        "sender": [BOB, "Me"],
        "is_from_me": True,
        "is_group": False,
        "service": "iMessage",
        "date": "2024-05-01",
        "messages": 3,
    }
    bob2 = docs[f"iMessage;-;{BOB}/{ids['w2'][1]}"]  # after a gap of more than an hour
    assert bob2.text == (
        f"2024-05-01 18:30 {BOB}: Dinner at 8 at the Thai place?\n2024-05-01 18:33 Me: Sounds good 👍\n"
    )
    (err,) = errors  # the garbage blob: reported with file and ROWID, its window still read
    assert err.uri == f"{path.absolute()}#{ids['garbage'][0]}" and "not a typedstream" in err.error
    club = docs[f"iMessage;+;chat123456789/{ids['w3'][1]}"]
    assert club.title == "Book club — 2024-05-03 20:00"
    assert club.text == (
        f"2024-05-03 20:00 {ALICE}: Finished the Murakami novel\n"
        f"2024-05-03 20:02 {CAROL}: {CAROL_LONG}\n"
        "2024-05-03 20:04 Me: 📚 Next month: The Left Hand of Darkness\n"
    )
    assert club.metadata["participants"] == [ALICE, CAROL] and club.metadata["is_group"] is True
    assert club.metadata["sender"] == [ALICE, CAROL, "Me"] and club.metadata["chat"] == "Book club"
    assert len(docs) == 3 and not seen
    assert len(cursor["files"][str(path.absolute())]["windows"]) == 3


def test_live_wal_database_is_read_from_a_copy_and_left_untouched(tmp_path):
    db, ids = fixture_db(tmp_path / "Messages" / "chat.db")
    db.db.commit()  # Messages is running: the rows are only in chat.db-wal
    wal = db.path.with_name("chat.db-wal")
    assert wal.stat().st_size > 0
    before = {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in db.path.parent.iterdir()
    }
    docs, _, _, _ = run(tmp_path / "Messages")
    after = {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in db.path.parent.iterdir()
    }
    assert after == before and len(docs) == 3
    db.close()


def test_old_database_with_dates_in_seconds(tmp_path):
    db = ChatDB(tmp_path / "chat.db", wal=False)
    chat = db.chat(f"SMS;-;{BOB}", BOB, [BOB], service="SMS")
    seconds = lambda dt: int((dt - APPLE_EPOCH).total_seconds())  # noqa: E731
    db.message(chat, seconds(at(2, 9, 15)), BOB, "Running late, train stuck at Dalston", service="SMS")
    db.message(chat, seconds(at(2, 9, 16)), None, "No worries", service="SMS")
    docs, _, _, _ = run(db.close())
    (doc,) = docs.values()
    assert doc.created_at == at(2, 9, 15) and doc.updated_at == at(2, 9, 16)
    assert doc.metadata["service"] == "SMS" and doc.text.startswith("2024-05-02 09:15 ")


def test_windows_are_cut_by_size_as_well_as_by_gaps(tmp_path):
    db = ChatDB(tmp_path / "chat.db", wal=False)
    chat = db.chat(f"iMessage;-;{ALICE}", ALICE, [ALICE])
    for n in range(250):  # one long evening, never an hour of silence
        db.message(chat, at(4, 18) + timedelta(minutes=n), ALICE if n % 2 else None, f"message number {n}")
    big = "a long paragraph about nothing in particular " * 120  # ~5.4 KB each
    for n in range(4):
        db.message(chat, at(5, 9) + timedelta(minutes=n), ALICE, body=typedstream(big + str(n)))
    docs, _, _, _ = run(db.close())
    sizes = sorted((d.created_at, d.metadata["messages"]) for d in docs.values())
    assert [n for _, n in sizes] == [100, 100, 50, 2, 2]  # 100 messages, or ~16 KB of data


def test_incremental_refresh_reads_only_new_or_changed_windows(tmp_path):
    db, ids = fixture_db(tmp_path / "chat.db", wal=False)
    path = db.close()
    docs1, _, _, cursor1 = run(path)
    docs, seen, errors, cursor = run(path, cursor1)
    assert not docs and not errors and seen == set(docs1) and cursor == cursor1

    bob2 = f"iMessage;-;{BOB}/{ids['w2'][1]}"
    db = ChatDB.open(path)
    db.message(ids["bob"], at(1, 19, 0), BOB, "Table booked for four")  # extends the last window
    _, late_guid = db.message(ids["bob"], at(2, 8), None, "Thanks for dinner!")  # a new window
    db.close()
    docs, seen, errors, cursor2 = run(path, cursor1)
    assert set(docs) == {bob2, f"iMessage;-;{BOB}/{late_guid}"}
    assert docs[bob2].text.endswith(f"2024-05-01 19:00 {BOB}: Table booked for four\n")
    assert docs[bob2].metadata["messages"] == 3 and len(errors) == 1  # garbage re-reported
    assert seen == set(docs1) - {bob2}
    assert cursor2["files"][str(path.absolute())]["max_rowid"] > cursor1["files"][str(path.absolute())]["max_rowid"]

    # A message synced late into an old window (high ROWID, old date), an edit and a deletion.
    bob1 = f"iMessage;-;{BOB}/{ids['w1'][1]}"
    db = ChatDB.open(path)
    db.message(ids["bob"], at(1, 14, 4), None, "Was it the guy from the flyer?")
    db.db.execute(
        "UPDATE message SET text = ?, date_edited = ? WHERE ROWID = ?",
        ("Finished the Murakami novel last night", apple_ns(at(3, 20, 9)), ids["w3"][0]),
    )
    db.close()
    docs, seen, _, cursor3 = run(path, cursor2)
    assert set(docs) == {bob1, f"iMessage;+;chat123456789/{ids['w3'][1]}"}
    assert "14:04 Me: Was it the guy from the flyer?" in docs[bob1].text
    assert "Finished the Murakami novel last night" in docs[f"iMessage;+;chat123456789/{ids['w3'][1]}"].text

    db = ChatDB.open(path)  # unsending the last message of the evening; deleting the book club
    db.db.execute("DELETE FROM message WHERE text = 'Table booked for four'")
    db.db.execute("DELETE FROM chat_message_join WHERE message_id NOT IN (SELECT ROWID FROM message)")
    db.db.execute("DELETE FROM chat_message_join WHERE chat_id = ?", (ids["club"],))
    db.db.execute("DELETE FROM chat WHERE ROWID = ?", (ids["club"],))
    db.close()
    docs, seen, _, _ = run(path, cursor3)
    assert set(docs) == {bob2} and "Table booked" not in docs[bob2].text
    assert f"iMessage;+;chat123456789/{ids['w3'][1]}" not in seen | set(docs)
    assert seen == {bob1, f"iMessage;-;{BOB}/{late_guid}"}


def test_group_rename_and_new_member_reread_that_chat_only(tmp_path):
    db, ids = fixture_db(tmp_path / "chat.db", wal=False)
    path = db.close()
    docs1, _, _, cursor = run(path)
    db = ChatDB.open(path)
    db.db.execute("UPDATE chat SET display_name = 'Sci-fi book club' WHERE ROWID = ?", (ids["club"],))
    db.close()
    docs, seen, _, cursor = run(path, cursor)
    club = f"iMessage;+;chat123456789/{ids['w3'][1]}"
    assert set(docs) == {club} and seen == set(docs1) - {club}
    assert docs[club].metadata["chat"] == "Sci-fi book club" and docs[club].title.startswith("Sci-fi")
    db = ChatDB.open(path)
    db.db.execute("INSERT INTO chat_handle_join VALUES (?, ?)", (ids["club"], db.handle("dave@example.com")))
    db.close()
    docs, _, _, _ = run(path, cursor)
    assert set(docs) == {club} and docs[club].metadata["participants"] == [ALICE, CAROL, "dave@example.com"]


def test_bad_input_is_reported_and_good_databases_still_read(tmp_path):
    good, _ = fixture_db(tmp_path / "mac" / "chat.db", wal=False)
    good.close()
    garbage = tmp_path / "backup" / "chat.db"
    garbage.parent.mkdir()
    garbage.write_bytes(b"bplist00 this is not a database" * 10)
    other = tmp_path / "other" / "chat.db"
    other.parent.mkdir()
    sqlite3.connect(other).executescript("CREATE TABLE messages(id, body);")
    docs, _, errors, cursor = run(tmp_path)
    assert len(docs) == 3
    reasons = {Path(e.uri.split("#")[0]).parent.name: e.error for e in errors}
    assert reasons["backup"] == "not a SQLite database"
    assert reasons["other"].startswith("not a Messages chat.db")
    assert "not a typedstream" in reasons["mac"]
    assert list(cursor["files"]) == [str((tmp_path / "mac" / "chat.db").absolute())]
    # Nothing readable at all: a first read reports it (nothing stored to lose); after a build,
    # the build fails rather than delete what that build indexed.
    docs, _, errors, _ = run(garbage)
    assert not docs and [e.error for e in errors] == ["not a SQLite database"]
    with pytest.raises(RagbagError, match="not a SQLite database"):
        run(garbage, {"files": {}})


def test_damaged_blob_pages_lose_only_their_message(tmp_path):
    db = ChatDB(tmp_path / "chat.db", wal=False)
    chat = db.chat(f"iMessage;-;{ALICE}", ALICE, [ALICE])
    db.message(chat, at(6, 10), ALICE, "Before the long one")
    big_id, _ = db.message(chat, at(6, 10, 1), ALICE, body=typedstream("L" * 60000))
    db.message(chat, at(6, 10, 2), None, "After the long one")
    path = db.close()
    raw = bytearray(path.read_bytes())
    page = raw.index(b"L" * 4000, 4096 * 4) // 4096 * 4096  # an overflow page of the blob
    raw[page : page + 4] = b"\x7f\xff\xff\xff"  # its next-page pointer now leads nowhere
    path.write_bytes(bytes(raw))
    docs, _, errors, cursor = run(path)
    (doc,) = docs.values()
    assert "Before the long one" in doc.text and "After the long one" in doc.text
    assert any(e.uri.endswith(f"#{big_id}") for e in errors)
    assert cursor["files"] == {}  # read in full again next time


def test_discover_honours_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert imessage.discover() == ([], [str(tmp_path / "Library" / "Messages" / "chat.db")])
    with pytest.raises(RagbagError, match="no Messages database found; looked in"):
        run(None)
    db, _ = fixture_db(tmp_path / "Library" / "Messages" / "chat.db")
    db.close()
    assert imessage.discover()[0] == [tmp_path / "Library" / "Messages" / "chat.db"]
    assert len(run(None)[0]) == 3


def test_spans_keep_whole_messages_within_budget():
    count = token_counter()
    lines = [f"2024-05-01 14:{m:02d} {ALICE}: " + ("word " * (5 + m)).strip() for m in range(40)]
    lines[7] += "\n  and a second line of the same message"
    text = "\n".join(lines) + "\n"
    doc = Document("s", "imessage", "c/g", "u", "t", text)
    spans = imessage.spans(doc, count, 64)
    assert len(spans) > 3 and all(count(text[s.start : s.end]) <= 64 for s in spans)
    for s in spans:  # every chunk starts at a message and ends at the end of one
        assert text[s.start :].startswith("2024-05-01 ") and text[s.end] == "\n"
    assert any("and a second line" in text[s.start : s.end] and "14:07" in text[s.start : s.end] for s in spans)
    assert all(s.metadata == {"sender": [ALICE], "is_from_me": False} for s in spans)
    mixed = Document("s", "imessage", "c/g", "u", "t", f"2024-05-01 14:00 {BOB}: hi\n2024-05-01 14:01 Me: hello\n")
    (span,) = imessage.spans(mixed, count, 64)
    assert span.metadata == {"sender": [BOB, "Me"], "is_from_me": True}
    huge = Document("s", "imessage", "c/g", "u", "t", "2024-05-01 14:00 Me: " + "blah " * 500 + "\n")
    assert all(count(huge.text[s.start : s.end]) <= 64 for s in imessage.spans(huge, count, 64))


@pytest.mark.slow
def test_end_to_end_build_search_and_filters(home, tmp_path):
    db, ids = fixture_db(tmp_path / "Messages" / "chat.db")
    db.db.commit()  # Messages still running: rows in the WAL
    cli("add", "imessage", "texts", str(tmp_path / "Messages"))
    (rep,) = cli_json("build")
    assert rep["status"] == "success" and rep["documents"] == 3 and len(rep["errors"]) == 1
    hits = cli_json("search", "who repaired the dripping tap and what did it cost", "-k", "1")
    assert hits[0]["title"] == f"{BOB} — 2024-05-01 14:03" and "80 dollars" in hits[0]["text"]
    hits = cli_json("search", "novel discussion", "-k", "5", "--where", json_where({"sender": {"contains": CAROL}}))
    assert [h["metadata"]["chat"] for h in hits] == ["Book club"]
    hits = cli_json("search", "dinner plans", "-k", "5", "--after", "2024-05-02")
    assert {h["metadata"]["chat"] for h in hits} == {"Book club"}
    db.close()


def json_where(value: dict) -> str:
    import json

    return json.dumps(value)
