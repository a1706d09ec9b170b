"""The telegram connector: Telegram Desktop's JSON exports (account and single chat), written by
the evaluation sets' writer or by hand where a test needs an older or broken shape; windows,
Me, media labels, times, bad input, incremental refresh, and the public corpus' traps."""

from __future__ import annotations

import json
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from chat_reads import by_chat, read_chats
from conftest import FIXTURES

from ragbag.connectors import telegram
from ragbag.core.records import Document, ReadError
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.telegram import TelegramAccount, TelegramChat

BERLIN = ZoneInfo("Europe/Berlin")
T0 = datetime(2024, 3, 5, 9, 30, tzinfo=BERLIN)  # 08:30 UTC
LENA, ANNA, TOM = ("Lena Vogt", 5550001), ("Anna Berg", 5550002), ("Tom Fischer", 5550003)
PUBLIC = FIXTURES / "public" / "telegram"


@pytest.fixture(scope="module")
def count():
    return token_counter()


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def account() -> TelegramAccount:
    acc = TelegramAccount("Lena", "Vogt", LENA[1], BERLIN)
    anna = acc.chat("Anna Berg", "personal_chat", ANNA[1])
    anna.say(at(0), ANNA, "Did you book the cabin for the hiking trip?")
    anna.say(at(1), None, "Yes! The lakeside cabin near Mount Tam, two nights.")
    anna.service(at(2), ANNA, "phone_call", duration_seconds=56, discard_reason="hangup")
    anna.photo(at(3), ANNA, "the view from the porch")
    anna.sticker(at(4), None, "😀")
    anna.link(at(5), ANNA, "Trail map: ", "Dipsea loop", "https://example.org/dipsea")
    anna.voice(at(6), ANNA, 12)
    # Three hours later: a new window, German, a multi-line message and a quote block.
    anna.say(at(180), ANNA, "Wollen wir am Samstag wandern?\nDas Wetter soll gut werden.")
    anna.say(at(182), None, [("bold", "Ja!"), " Ich bringe ", ("blockquote", "Brot und Käse")])
    group = acc.chat("Wandergruppe", "private_supergroup", 1777000111)
    group.service(at(29), TOM, "invite_members", members=["Anna Berg"])
    group.say(at(30), TOM, "Who is bringing the camping stove?")
    group.say(at(31), None, "I'll bring the stove and fuel", reply_to_message_id=1001)
    group.poll(at(32), ANNA, "Saturday or Sunday?", {"Saturday": 2, "Sunday": 1})
    group.document(at(33), TOM, "route.pdf", "the route")
    group.say(at(34), ANNA, "we meet at the trailhead at 8", edited=at(40))
    group.say(at(35), TOM, "Sunny, 18 °C on Saturday", forwarded_from="Bergwetter")
    saved = acc.chat(None, "saved_messages", LENA[1])
    saved.say(at(60), None, "Wi-Fi at the cabin: cabin-guest")
    return acc


def write_export(folder: Path) -> Path:
    """An account export, a group's own export, an HTML export, and files that are no export."""
    (folder / "DataExport_2024-03-05").mkdir(parents=True)
    (folder / "DataExport_2024-03-05" / "result.json").write_bytes(account().bytes())
    book = TelegramChat("Book club", "private_group", 4440001, LENA, BERLIN)
    book.say(at(300), ("Marta Klein", 5550004), "Next month: The Left Hand of Darkness")
    book.say(at(301), LENA, "Great pick, I have it already")
    (folder / "ChatExport_2024-03-06").mkdir()
    (folder / "ChatExport_2024-03-06" / "result.json").write_bytes(book.bytes())
    (folder / "ChatExport_old").mkdir()
    (folder / "ChatExport_old" / "messages.html").write_text("<!DOCTYPE html><html><body>…</body></html>")
    (folder / "ChatExport_old" / "messages2.html").write_text("<!DOCTYPE html><html><body>…</body></html>")
    (folder / "Broken").mkdir()
    (folder / "Broken" / "result.json").write_text('{"name": "x", "messages": [{"id": 1, "date_unix')
    (folder / "Other").mkdir()
    (folder / "Other" / "result.json").write_text(json.dumps([{"sender_id": -1, "text": "an API dump"}]))
    (folder / "files").mkdir()
    (folder / "files" / "settings.json").write_text("{}")  # a file sent in a chat: not an export, not read
    return folder


def read_all(path: Path, cursor=None, options=None):
    return read_chats(telegram, path, cursor, options)


def test_personal_chat_windows_field_by_field(tmp_path):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    first, second = by_chat(docs)["Anna Berg"]
    assert first.text == (
        "2024-03-05 08:30 Anna Berg: Did you book the cabin for the hiking trip?\n"
        "2024-03-05 08:31 Me: Yes! The lakeside cabin near Mount Tam, two nights.\n"
        "2024-03-05 08:33 Anna Berg: [photo] the view from the porch\n"
        "2024-03-05 08:34 Me: [sticker 😀]\n"
        "2024-03-05 08:35 Anna Berg: Trail map: Dipsea loop (https://example.org/dipsea)\n"
        "2024-03-05 08:36 Anna Berg: [voice]\n"
    )
    start = int(at(0).timestamp())
    assert first.native_id == f"{ANNA[1]}@{start}"
    assert first.uri.endswith(f"DataExport_2024-03-05/result.json#{ANNA[1]}@{start}")
    assert first.title == "Anna Berg · 2024-03-05"
    assert first.created_at == datetime(2024, 3, 5, 8, 30, tzinfo=UTC)
    assert first.updated_at == datetime(2024, 3, 5, 8, 36, tzinfo=UTC)
    assert first.authors == ["Anna Berg", "Me"]
    assert first.metadata == {
        "chat": "Anna Berg",
        "chat_id": str(ANNA[1]),
        "chat_type": "personal_chat",
        "is_group": False,
        "sender": ["Anna Berg", "Me"],
        "is_from_me": True,
        "date": "2024-03-05",
        "messages": 6,
        "file": "DataExport_2024-03-05/result.json",
    }
    assert second.text == (
        "2024-03-05 11:30 Anna Berg: Wollen wir am Samstag wandern?\n"
        "  Das Wetter soll gut werden.\n"
        "2024-03-05 11:32 Me: Ja! Ich bringe\n"  # the quote block stands on a line of its own
        "  Brot und Käse\n"
    )


def test_group_polls_files_forwards_edits_and_service_lines(tmp_path):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    (group,) = by_chat(docs)["Wandergruppe"]
    assert group.text == (
        "2024-03-05 09:00 Tom Fischer: Who is bringing the camping stove?\n"
        "2024-03-05 09:01 Me: I'll bring the stove and fuel\n"
        "2024-03-05 09:02 Anna Berg: [poll] Saturday or Sunday? — Saturday (2) · Sunday (1)\n"
        "2024-03-05 09:03 Tom Fischer: [file: route.pdf] the route\n"
        "2024-03-05 09:04 Anna Berg: we meet at the trailhead at 8\n"
        "2024-03-05 09:05 Tom Fischer: [forwarded from Bergwetter] Sunny, 18 °C on Saturday\n"
    )
    assert "invite" not in group.text and "Anna Berg" in group.metadata["sender"]
    assert group.metadata["is_group"] is True and group.metadata["chat_type"] == "private_supergroup"
    assert group.metadata["sender"] == ["Tom Fischer", "Me", "Anna Berg"]


def test_saved_messages_are_mine_and_named(tmp_path):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    (saved,) = by_chat(docs)["Saved Messages"]
    assert saved.text == "2024-03-05 09:30 Me: Wi-Fi at the cabin: cabin-guest\n"
    assert saved.metadata["chat_type"] == "saved_messages" and saved.metadata["is_from_me"] is True


def test_a_groups_own_export_needs_the_me_option(tmp_path):
    folder = write_export(tmp_path / "export") / "ChatExport_2024-03-06"
    (book,) = read_all(folder)[0]
    assert "Lena Vogt: Great pick" in book.text and book.metadata["is_from_me"] is False
    for me in ("Lena Vogt", f"user{LENA[1]}", ["someone else", " Lena  Vogt "]):
        (book,) = read_all(folder, options={"me": me})[0]
        assert "2024-03-05 13:31 Me: Great pick, I have it already" in book.text, me
        assert book.metadata["is_from_me"] is True and book.metadata["sender"] == ["Marta Klein", "Me"]


def test_a_personal_chats_own_export_infers_me(tmp_path):
    chat = TelegramChat("Anna Berg", "personal_chat", ANNA[1], LENA, BERLIN)
    chat.say(at(0), ANNA, "are you home?")
    chat.say(at(1), LENA, "in ten minutes")
    (tmp_path / "result.json").write_bytes(chat.bytes())
    (doc,) = read_all(tmp_path / "result.json")[0]
    assert doc.text.endswith("Me: in ten minutes\n") and "Anna Berg: are you home?" in doc.text


def old_export(chat_id=9882011936) -> dict:
    """As Telegram Desktop wrote before date_unixtime (2020): zoneless dates, numeric ids."""
    return {
        "name": "Vogt family",
        "type": "private_group",
        "id": chat_id,
        "messages": [
            {"id": 1, "type": "message", "date": "2020-01-15T12:54:07", "from": "Anna Berg", "from_id": ANNA[1],
             "text": "winter: one hour ahead of UTC"},
            {"id": 2, "type": "message", "date": "2020-07-15T12:54:07", "from": "Lena Vogt", "from_id": LENA[1],
             "text": "summer: two hours ahead"},
        ],
    }  # fmt: skip


def test_zoneless_dates_take_the_timezone_option_and_numeric_ids_are_users(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(old_export()))
    winter, summer = read_all(path, options={"timezone": "Europe/Berlin", "me": f"user{LENA[1]}"})[0]
    assert winter.text == "2020-01-15 11:54 Anna Berg: winter: one hour ahead of UTC\n"
    assert summer.text == "2020-07-15 10:54 Me: summer: two hours ahead\n"  # zoneinfo's DST rules
    docs, errors, _, _ = read_all(path, options={"timezone": "Mars/Olympus"})
    assert len(docs) == 2 and len(errors) == 1 and "unknown zone 'Mars/Olympus'" in errors[0].error


def test_zoneless_dates_default_to_this_machines_zone(tmp_path, monkeypatch):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(old_export()))
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        winter, _ = read_all(path)[0]
    finally:
        monkeypatch.undo()
        time.tzset()
    assert winter.created_at == datetime(2020, 1, 15, 17, 54, 7, tzinfo=UTC)


def test_bad_files_and_records_are_reported_and_the_rest_read(tmp_path):
    folder = write_export(tmp_path / "export")
    acc = json.loads((folder / "DataExport_2024-03-05" / "result.json").read_text())
    anna = acc["chats"]["list"][0]["messages"]
    anna[0]["date_unixtime"], anna[0]["date"] = "soon", "later"  # message 1000: no usable date
    anna[1]["text"] = {"oops": 1}  # message 1001: text that is no text
    anna.insert(2, "garbage")  # not a message: reported by its position
    acc["chats"]["list"].append(["not", "a", "chat"])
    (folder / "DataExport_2024-03-05" / "result.json").write_text(json.dumps(acc, ensure_ascii=False))
    docs, errors, _, _ = read_all(folder)
    reasons = {e.uri.split("/export/", 1)[1]: e.error for e in errors}
    assert reasons.keys() == {
        f"DataExport_2024-03-05/result.json#{ANNA[1]}/1000",
        f"DataExport_2024-03-05/result.json#{ANNA[1]}/1001",
        f"DataExport_2024-03-05/result.json#{ANNA[1]}/2",
        "DataExport_2024-03-05/result.json#3",
        "ChatExport_old/messages.html",
        "Broken/result.json",
        "Other/result.json",
    }
    assert "no usable date" in reasons[f"DataExport_2024-03-05/result.json#{ANNA[1]}/1000"]
    assert "text is a dict" in reasons[f"DataExport_2024-03-05/result.json#{ANNA[1]}/1001"]
    assert "not a message object (str)" in reasons[f"DataExport_2024-03-05/result.json#{ANNA[1]}/2"]
    assert "not a chat object (list)" in reasons["DataExport_2024-03-05/result.json#3"]
    assert (
        "HTML export" in reasons["ChatExport_old/messages.html"] and "JSON" in reasons["ChatExport_old/messages.html"]
    )
    assert reasons["Broken/result.json"].startswith("invalid JSON")
    assert reasons["Other/result.json"].startswith("not a Telegram Desktop export")
    assert all("\n" not in e.error for e in errors)
    first = by_chat(docs)["Anna Berg"][0]
    assert "Did you book" not in first.text and "Yes! The lakeside" not in first.text
    assert "[photo] the view from the porch" in first.text  # the rest of the chat is read
    assert {d.metadata["chat"] for d in docs} == {"Anna Berg", "Wandergruppe", "Saved Messages", "Book club"}


def test_html_beside_json_is_quiet_and_html_by_name_is_reported(tmp_path):
    folder = tmp_path / "ChatExport"
    folder.mkdir()
    (folder / "messages.html").write_text("<!DOCTYPE html><html></html>")
    (folder / "result.json").write_bytes(account().chats[0].bytes())  # "HTML and JSON" exports both
    docs, errors, _, _ = read_all(folder)
    assert len(docs) == 2 and errors == []
    (tmp_path / "chat.html").write_text("\n<!DOCTYPE html><html></html>")
    (_, errors, _, _) = read_all(tmp_path / "chat.html")
    assert len(errors) == 1 and "HTML export (messages.html) is not read" in errors[0].error


def test_an_account_export_without_chats_says_so(tmp_path):
    data = json.loads(account().bytes())
    del data["chats"], data["left_chats"]
    (tmp_path / "result.json").write_text(json.dumps(data))
    docs, errors, _, _ = read_all(tmp_path)
    assert docs == [] and len(errors) == 1 and "without chats" in errors[0].error


def test_a_zipped_export_folder(tmp_path):
    folder = write_export(tmp_path / "export")
    archive = tmp_path / "Telegram.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in ("DataExport_2024-03-05/result.json", "ChatExport_old/messages.html", "Broken/result.json"):
            zf.write(folder / name, name)
        zf.writestr("DataExport_2024-03-05/photos/photo_1.jpg", b"\xff\xd8\xff")
    docs, errors, _, _ = read_all(archive)
    assert {d.metadata["chat"] for d in docs} == {"Anna Berg", "Wandergruppe", "Saved Messages"}
    assert docs[0].metadata["file"] == "Telegram.zip!/DataExport_2024-03-05/result.json"
    assert "Telegram.zip!/DataExport_2024-03-05/result.json#" in docs[0].uri
    assert sorted(e.uri.rsplit("!/", 1)[1] for e in errors) == ["Broken/result.json", "ChatExport_old/messages.html"]


def test_incremental_refresh(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, errors, seen, cursor = read_all(folder)
    assert not seen
    json.loads(json.dumps(cursor))  # the cursor is stored as JSON

    # Nothing changed: nothing is parsed, every window is vouched for, errors still reported.
    docs2, errors2, seen2, cursor2 = read_all(folder, cursor)
    assert docs2 == [] and sorted(seen2) == sorted(d.native_id for d in docs)
    assert sorted(e.uri for e in errors2) == sorted(e.uri for e in errors)

    # A later export: one message appended, one edited, one deleted (each in another window).
    acc = account()
    anna, group = acc.chats[0], acc.chats[1]
    anna.say(at(185), ANNA, "Super, bis Samstag!")
    edited = next(m for m in group.messages if m.get("text") == "we meet at the trailhead at 8")
    edited["text"] = edited["text_entities"][0]["text"] = "we meet at the trailhead at 7"
    acc.chats[2].messages.clear()  # the only saved message deleted
    (folder / "DataExport_2024-03-05" / "result.json").write_bytes(acc.bytes())
    docs3, _, seen3, cursor3 = read_all(folder, cursor2)
    old = {d.native_id: d for d in docs}
    new = {d.native_id: d for d in docs3}
    assert set(seen3) == {d.native_id for d in docs if d.metadata["chat"] == "Book club"}
    first_anna = by_chat(docs)["Anna Berg"][0].native_id
    assert new[first_anna].content_hash == old[first_anna].content_hash  # earlier windows unmoved
    assert new.keys() == {i for i, d in old.items() if d.metadata["chat"] not in ("Saved Messages", "Book club")}
    assert "Super, bis Samstag!" in by_chat(docs3)["Anna Berg"][-1].text
    assert "trailhead at 7" in by_chat(docs3)["Wandergruppe"][0].text  # the edit propagates

    # The group's own export is removed: its windows are gone (neither read nor Seen).
    (folder / "ChatExport_2024-03-06" / "result.json").unlink()
    docs4, _, seen4, _ = read_all(folder, cursor3)
    assert docs4 == [] and set(seen4) == set(new)

    # Another `me` changes how lines read: everything is read again.
    docs5, _, seen5, _ = read_all(folder, cursor3, options={"me": "Tom Fischer"})
    assert not seen5 and len(docs5) == len(docs3)


def test_the_same_chat_in_two_exports_is_kept_once_newest_edit_wins(tmp_path):
    early, late = account(), account()
    msg = next(m for m in late.chats[1].messages if m.get("text") == "we meet at the trailhead at 8")
    msg["text"] = msg["text_entities"][0]["text"] = "we meet at the trailhead at 7"
    msg["edited_unixtime"] = str(int(at(600).timestamp()))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "result.json").write_bytes(late.bytes())  # the older folder name holds the newer edit
    (tmp_path / "b" / "result.json").write_bytes(early.bytes())
    (tmp_path / "b" / "result (1).json").write_bytes(late.chats[1].bytes())  # the group's own export, too
    docs, errors, _, _ = read_all(tmp_path)
    assert errors == [] and len(docs) == len({d.native_id for d in docs}) == 4
    (group,) = by_chat(docs)["Wandergruppe"]
    assert "trailhead at 7" in group.text


def test_window_size_bound_and_stable_ids(tmp_path, monkeypatch):
    chat = TelegramChat("Anna Berg", "personal_chat", ANNA[1], LENA)
    for i in range(10):
        chat.say(at(i), ANNA, f"message number {i}")
    (tmp_path / "result.json").write_bytes(chat.bytes())
    monkeypatch.setattr(telegram, "WINDOW_MESSAGES", 4)
    docs = read_all(tmp_path)[0]
    assert [d.metadata["messages"] for d in docs] == [4, 4, 2]
    chat.say(at(10), ANNA, "one more")
    (tmp_path / "result.json").write_bytes(chat.bytes())
    again = read_all(tmp_path)[0]
    assert [d.native_id for d in again] == [d.native_id for d in docs]
    assert [d.content_hash for d in again[:2]] == [d.content_hash for d in docs[:2]]
    assert again[2].content_hash != docs[2].content_hash


def test_spans_are_whole_lines_within_budget_with_senders(tmp_path, count):
    docs, _, _, _ = read_all(write_export(tmp_path / "export"))
    (group,) = by_chat(docs)["Wandergruppe"]
    spans = telegram.spans(group, count, 24)
    assert len(spans) > 1
    for sp in spans:
        piece = group.text[sp.start : sp.end]
        assert count(piece) <= 24 and piece == piece.strip()
        assert sp.metadata["sender"] and isinstance(sp.metadata["is_from_me"], bool)
    (whole,) = telegram.spans(group, count, 500)
    assert whole.metadata == {"sender": ["Tom Fischer", "Me", "Anna Berg"], "is_from_me": True}


def test_a_missing_path_and_the_schedule(tmp_path):
    items = list(telegram.read(tmp_path / "nope", "chats", None))
    assert isinstance(items[0], ReadError) and "no such file" in items[0].error
    assert telegram.SCHEDULE.split()[1:] == ["4", "*", "*", "*"]


# --- the public corpus (tests/fixtures/public/telegram, SOURCES.tsv there) --------------------


def public(name: str) -> list[Document]:
    docs, errors, _, _ = read_all(next(PUBLIC.rglob(name)))
    assert errors == []
    return docs


def test_public_old_account_export_numeric_ids_are_the_owner():
    """chat-history-manager's 2020 account export writes from_id as numbers (mechanism: bare
    user ids), its owner in personal_information; a null name is a deleted account."""
    docs = public("*telegram_2020-01__result.json")
    mine = [d for d in docs if d.metadata["is_from_me"]]
    assert mine and all("Aaaaa Aaaaaaaaaaa" not in d.metadata["sender"] for d in docs)
    assert any(d.metadata["chat"] == "Deleted Account" for d in docs)
    assert any("[live location] 41.311194, 69.279725" in d.text for d in docs)
    assert any("[poll] Вечерний" in d.text for d in docs)


def test_public_newer_fields_todo_lists_blocks_and_unavailable_files():
    (group, _) = public("*telegram_2025-12__result.json")
    assert "Me: [to-do list] testing — point 1 · point 2 · point 3" in group.text
    assert "Me: [file]" in group.text  # "(File unavailable, please try again later)"
    (quote,) = public("*telegram_2023-11__result.json")
    assert quote.text.endswith("Me: This has blockquote!\n  My blockquote text\n")


def test_public_text_links_keep_their_address_before_the_line_break():
    docs = public("tests__result.json")
    assert "test: text link (http://example.com/)\n  example.com\n" in docs[0].text


def test_public_non_exports_are_reported_not_empty():
    for name in ("*telegram_chat_html__messages.html", "*telegram_channel.json"):
        docs, errors, _, _ = read_all(next(PUBLIC.rglob(name)))
        assert docs == [] and len(errors) == 1, name
