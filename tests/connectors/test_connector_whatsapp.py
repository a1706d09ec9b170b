"""The whatsapp connector: "Export chat" text files as iOS and Android write them in several
locales, zips with media beside, windows, day/month inference, system lines, bad input, refresh."""

from __future__ import annotations

import io
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from chat_reads import by_chat, read_chats

from ragbag import connectors
from ragbag.connectors import whatsapp
from ragbag.connectors.whatsapp import lines, phrases
from ragbag.core.records import Document, stable_hash
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.whatsapp import WhatsApp

NNBSP, NBSP, LRM = "\u202f", "\u00a0", "\u200e"

# iOS (US locale), exported with media: a direct chat with Anna, exported by Ben.
IOS_CHAT = (
    f"[3/5/24, 9:30:00{NNBSP}AM] Anna: {LRM}Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them.\n"
    f"[3/5/24, 9:30:12{NNBSP}AM] Anna: Did you book the cabin for the hiking trip?\n"
    f"[3/5/24, 9:31:40{NNBSP}AM] Ben: Yes! The lakeside cabin near Mount Tam, two nights.\n"
    "Check-in is at 3 pm.\n"
    f"{LRM}[3/5/24, 9:32:05{NNBSP}AM] Anna: {LRM}<attached: 00000012-PHOTO-2024-03-05-09-32-05.jpg>\n"
    f"[3/5/24, 9:33:00{NNBSP}AM] Ben: Great, I will pack the stove {LRM}<This message was edited>\n"
    f"[3/5/24, 9:34:00{NNBSP}AM] Anna: {LRM}This message was deleted.\n"
    f"{LRM}[3/5/24, 9:35:00{NNBSP}AM] Ben: {LRM}image omitted\n"
    f"[3/5/24, 9:36:00{NNBSP}AM] Anna: Trail map.pdf • {LRM}2 pages {LRM}document omitted\n"
    f"[3/5/24, 9:37:00{NNBSP}AM] Anna: {LRM}Missed voice call\n"
    f"[3/5/24, 12:45:00{NNBSP}PM] Anna: {LRM}Location: https://maps.google.com/?q=37.9,-122.6\n"
)

# Android (British English), without media: a group, exported by Ben.
ANDROID_GROUP = (
    "05/03/2024, 09:00 - Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more.\n"
    '05/03/2024, 09:00 - Carol created group "Hiking Crew"\n'
    "05/03/2024, 09:01 - Carol added you\n"
    "05/03/2024, 09:02 - Carol: Welcome! Who brings what?\n"
    "05/03/2024, 09:03 - Dan Meyer: IMG-20240305-WA0001.jpg (file attached)\n"
    "The trail from last year\n"
    "05/03/2024, 09:04 - Dan Meyer: <Media omitted>\n"
    "05/03/2024, 09:05 - Ben: I'll bring the tent\n"
    "and the sleeping bags\n"
    "[3/5/24, 9:05:30 AM] Carol: a pasted line of another phone's export\n"
    '05/03/2024, 09:06 - Carol changed the subject from "Hiking" to "Hiking Crew: May"\n'
    "05/03/2024, 09:07 - \u202a+49 170 1234567\u202c: Count me in\n"
    f"13/03/2024, 18:30 - ~{NNBSP}Eve: Is there room for one more?\n"
)

# Android (German): a direct chat with Mama, exported by Jonas.
GERMAN = (
    "24.12.23, 18:00 - Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt. Niemand außerhalb dieses Chats kann sie lesen oder anhören, nicht einmal WhatsApp. Tippe, um mehr zu erfahren.\n"
    "24.12.23, 18:01 - Mama: Frohe Weihnachten! Kommst du morgen zum Essen?\n"
    "24.12.23, 18:02 - Jonas: Ja, um 12 Uhr <Diese Nachricht wurde bearbeitet>\n"
    "24.12.23, 18:03 - Jonas: Du hast diese Nachricht gelöscht\n"
    "24.12.23, 18:04 - Mama: <Medien ausgeschlossen>\n"
    "24.12.23, 18:05 - Mama: Diese Nachricht wurde gelöscht\n"
)

# Android (Spanish, 12-hour clock): a group, exported by Pablo (who deleted a message).
SPANISH = (
    f"31/12/2023, 11:58{NNBSP}p.{NBSP}m. - Lucía: ¡Feliz año nuevo!\n"
    f"01/01/2024, 00:08{NNBSP}a.{NBSP}m. - Marta: Igualmente 🎉\n"
    f"01/01/2024, 12:30{NNBSP}p.{NBSP}m. - Pablo: <Multimedia omitido>\n"
    f"01/01/2024, 12:31{NNBSP}p.{NBSP}m. - Pablo: Eliminaste este mensaje\n"
    f"01/01/2024, 12:32{NNBSP}p.{NBSP}m. - Pablo: ¿Quién trae la paella?\n"
)


@pytest.fixture(scope="module")
def count():
    return token_counter()


def zip_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def write_export(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    photo = b"\xff\xd8\xff\xe0 not really a jpeg"
    (folder / "WhatsApp Chat - Anna.zip").write_bytes(
        zip_of({"_chat.txt": IOS_CHAT.encode(), "00000012-PHOTO-2024-03-05-09-32-05.jpg": photo})
    )
    (folder / "WhatsApp Chat with Hiking Crew.txt").write_text(ANDROID_GROUP, encoding="utf-8")
    (folder / "WhatsApp Chat mit Mama.txt").write_text(GERMAN, encoding="utf-8")
    (folder / "Chat de WhatsApp con Playa.txt").write_text(SPANISH, encoding="utf-8")
    (folder / "IMG-20240305-WA0001.jpg").write_bytes(photo)  # media beside an Android export: not a chat
    (folder / "notes.txt").write_text("shopping list: milk, eggs")  # not named as an export: not read
    return folder


OPTIONS = {"timezone": "Europe/Berlin", "me": "Ben"}


def read_all(path: Path, cursor=None, options=None):
    return read_chats(whatsapp, path, cursor, options)


def test_the_connector_is_registered():
    assert connectors.get("whatsapp") is whatsapp
    assert whatsapp.SCHEDULE.split()[1:] == ["4", "*", "*", "*"]


def test_ios_zip_field_by_field(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, errors, _, _ = read_all(folder, options={"timezone": "Europe/Berlin"})
    assert errors == []
    first, second = by_chat(docs)["Anna"]
    # 3/5/24 is read as 5 March (US 12-hour form, nothing decides otherwise); Berlin is UTC+1 then.
    assert first.text == (
        "2024-03-05 08:30 Anna: Did you book the cabin for the hiking trip?\n"
        "2024-03-05 08:31 Me: Yes! The lakeside cabin near Mount Tam, two nights.\n"
        "  Check-in is at 3 pm.\n"
        "2024-03-05 08:32 Anna: [media: 00000012-PHOTO-2024-03-05-09-32-05.jpg]\n"
        "2024-03-05 08:33 Me: Great, I will pack the stove\n"
        "2024-03-05 08:35 Me: [media: image]\n"
        "2024-03-05 08:36 Anna: [media: document] Trail map.pdf • 2 pages\n"
    )
    chat_id = first.metadata["chat_id"]
    start = int(datetime(2024, 3, 5, 8, 30, 12, tzinfo=UTC).timestamp())
    assert first.native_id == f"{chat_id}@{start}"
    assert first.uri.endswith(f"WhatsApp Chat - Anna.zip!/_chat.txt#{start}")
    assert first.title == "Anna · 2024-03-05"
    assert first.created_at == datetime(2024, 3, 5, 8, 30, 12, tzinfo=UTC)
    assert first.updated_at == datetime(2024, 3, 5, 8, 36, tzinfo=UTC)
    assert first.authors == ["Anna", "Me"]
    assert first.metadata == {
        "chat": "Anna",
        "chat_id": chat_id,
        "is_group": False,
        "sender": ["Anna", "Me"],
        "is_from_me": True,  # Ben: the one of two senders who is not the contact the zip names
        "date": "2024-03-05",
        "messages": 6,
        "file": "WhatsApp Chat - Anna.zip",
    }
    # A shared location is kept (app-marked, yet the user's); the missed call is not.
    assert second.text == "2024-03-05 11:45 Anna: Location: https://maps.google.com/?q=37.9,-122.6\n"
    assert "deleted" not in first.text and "Missed" not in first.text and "encrypted" not in first.text


def test_android_group_events_media_and_the_me_option(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, _, _, _ = read_all(folder, options={"timezone": "America/New_York", "me": "Ben"})
    first, second = by_chat(docs)["Hiking Crew"]
    # 5 March is EST (UTC-5); 13 March, after the clocks changed, EDT (UTC-4).
    assert first.text == (
        "2024-03-05 14:02 Carol: Welcome! Who brings what?\n"
        "2024-03-05 14:03 Dan Meyer: [media: IMG-20240305-WA0001.jpg] The trail from last year\n"
        "2024-03-05 14:04 Dan Meyer: [media]\n"
        "2024-03-05 14:05 Me: I'll bring the tent\n"
        "  and the sleeping bags\n"
        "  [3/5/24, 9:05:30 AM] Carol: a pasted line of another phone's export\n"
        "2024-03-05 14:07 +49 170 1234567: Count me in\n"
    )
    assert second.text == "2024-03-13 22:30 Eve: Is there room for one more?\n"
    assert first.metadata["is_group"] is True and first.metadata["chat"] == "Hiking Crew"
    assert first.metadata["sender"] == ["Carol", "Dan Meyer", "Me", "+49 170 1234567"]
    assert second.metadata["is_from_me"] is False and first.metadata["is_from_me"] is True


def test_german_and_spanish_phrases_and_me_from_a_deletion(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, _, _, _ = read_all(folder, options={"timezone": "Europe/Berlin"})
    chats = by_chat(docs)
    (mama,) = chats["Mama"]
    assert mama.text == (
        "2023-12-24 17:01 Mama: Frohe Weihnachten! Kommst du morgen zum Essen?\n"
        "2023-12-24 17:02 Me: Ja, um 12 Uhr\n"
        "2023-12-24 17:04 Mama: [media]\n"
    )
    assert mama.metadata["is_group"] is False
    # Three senders: a group. Pablo deleted a message ("Eliminaste…"): he is the exporting user.
    # "00:08 a. m." is eight past midnight; Berlin is UTC+1 in winter.
    first, second = chats["Playa"]
    assert first.text == "2023-12-31 22:58 Lucía: ¡Feliz año nuevo!\n2023-12-31 23:08 Marta: Igualmente 🎉\n"
    assert second.text == "2024-01-01 11:30 Me: [media]\n2024-01-01 11:32 Me: ¿Quién trae la paella?\n"
    assert first.metadata["is_group"] is True


def test_without_a_timezone_times_are_this_machines(tmp_path, monkeypatch):
    path = tmp_path / "WhatsApp Chat mit Mama.txt"
    path.write_text(GERMAN, encoding="utf-8")
    monkeypatch.setattr(lines, "instant", lambda wall, zone: wall.replace(tzinfo=UTC))  # a machine on UTC
    (doc,), _, _, _ = read_all(path)
    assert doc.text.startswith("2023-12-24 18:01 Mama: ")
    docs, errors, _, _ = read_all(path, options={"timezone": "Mars/Olympus_Mons"})
    assert docs[0].text.startswith("2023-12-24 18:01 Mama: ")  # read in the machine's zone, and said so
    assert len(errors) == 1 and "unknown timezone 'Mars/Olympus_Mons'" in errors[0].error


@pytest.mark.parametrize(
    ("text", "day"),
    [
        # A second number above 12: month first, for every line of the file.
        ("1/2/24, 10:00 - Kim: a\n1/13/24, 10:00 - Lee: b\n", [(2024, 1, 2), (2024, 1, 13)]),
        # A first number above 12 decides for the whole file, never per line.
        ("12/05/24, 10:00 - Kim: a\n13/05/24, 10:00 - Lee: b\n", [(2024, 5, 12), (2024, 5, 13)]),
        # Nothing above 12: the order under which time runs forward (day-first would go back).
        (
            "1/2/24, 10:00 - Kim: a\n1/3/24, 10:00 - Lee: b\n2/2/24, 10:00 - Kim: c\n",
            [(2024, 1, 2), (2024, 1, 3), (2024, 2, 2)],
        ),
        # No evidence at all: the form's convention (day-first; US 12-hour with slashes month-first).
        ("03/04/24, 10:00 - Kim: a\n", [(2024, 4, 3)]),
        ("03/04/24, 10:00 AM - Kim: a\n", [(2024, 3, 4)]),
        # Year first, ISO and Korean (the day half before the time).
        ("2023-12-31 21:41 - Kim: a\n", [(2023, 12, 31)]),
        ("2023. 12. 31. 오후 9:41 - Kim: a\n", [(2023, 12, 31)]),
        # The old iOS form: no brackets, a colon after the time.
        ("31.12.15 21:41:05: Kim: a\n", [(2015, 12, 31)]),
    ],
)
def test_day_and_month_are_decided_per_file(tmp_path, text, day):
    path = tmp_path / "WhatsApp Chat with Kim.txt"
    path.write_text(text, encoding="utf-8")
    docs, errors, _, _ = read_all(path, options={"timezone": "UTC"})
    assert not errors
    stamps = [line[:10] for d in docs for line in d.text.splitlines()]
    assert stamps == [f"{y:04d}-{m:02d}-{d:02d}" for y, m, d in day]


def test_header_forms():
    ko = lines.header("2023. 12. 31. 오후 9:41 - 김: 안녕", 1)
    assert ko is not None and lines.wall_time(ko, lines.YMD) == datetime(2023, 12, 31, 21, 41)
    es = lines.header(f"01/01/2024, 12:05{NNBSP}a.{NBSP}m. - M: x", 1)
    assert es is not None and lines.wall_time(es, lines.DMY) == datetime(2024, 1, 1, 0, 5)
    fr = lines.header("31/12/2023 à 21:41 - Léa: salut", 1)
    assert fr is not None and fr.rest == "Léa: salut" and fr.half == ""
    assert lines.header("Anna: 12/31/23, 9:41 PM - not at a line's start", 1) is None
    assert lines.header("12/31/23 was a good day", 1) is None


def test_bad_files_and_records_are_reported_and_the_rest_read(tmp_path):
    folder = write_export(tmp_path / "export")
    (folder / "WhatsApp Chat with Olga.txt").write_text(
        "Exported on a Tuesday\n"
        "30/01/2024, 10:00 - Olga: before the impossible day\n"
        "31/02/2024, 10:01 - Olga: the thirty-first of February\n"
        "30/01/2024, 10:02 - Olga: after it\n",
        encoding="utf-8",
    )
    (folder / "WhatsApp Chat with Notes.txt").write_text("just some notes\nno timestamps at all\n")
    (folder / "WhatsApp Chat with Nobody.txt").write_bytes(b"")
    (folder / "WhatsApp Chat with Noise.txt").write_bytes(b"\x00\x01\x02" * 50)
    (folder / "WhatsApp Chat - Photos only.zip").write_bytes(zip_of({"00000001-PHOTO.jpg": b"\xff\xd8"}))
    (folder / "WhatsApp Chat - Broken.zip").write_bytes(b"PK\x03\x04 truncated")
    docs, errors, _, _ = read_all(folder, options=OPTIONS)
    reasons = {e.uri.rsplit("/", 1)[-1]: e.error for e in errors}
    assert reasons.keys() == {
        "WhatsApp Chat with Olga.txt#L1",
        "WhatsApp Chat with Olga.txt#L3",
        "WhatsApp Chat with Notes.txt",
        "WhatsApp Chat with Nobody.txt",
        "WhatsApp Chat with Noise.txt",
        "WhatsApp Chat - Photos only.zip",
        "WhatsApp Chat - Broken.zip",
    }
    assert reasons["WhatsApp Chat with Olga.txt#L1"] == "1 line(s) before the first message, not read"
    assert "impossible" in reasons["WhatsApp Chat with Olga.txt#L3"]
    assert reasons["WhatsApp Chat with Notes.txt"].startswith("not a WhatsApp chat export")
    assert reasons["WhatsApp Chat with Nobody.txt"].startswith("empty file")
    assert "binary" in reasons["WhatsApp Chat with Noise.txt"]
    assert "no _chat.txt" in reasons["WhatsApp Chat - Photos only.zip"]
    assert "unreadable zip" in reasons["WhatsApp Chat - Broken.zip"]
    assert all("\n" not in e.error for e in errors)
    (olga,) = by_chat(docs)["Olga"]
    assert "before the impossible day" in olga.text and "after it" in olga.text and "February" not in olga.text
    assert len(docs) == 8  # Anna ×2, Hiking Crew ×2, Mama, Playa ×2, and Olga's one
    assert "notes.txt" not in {d.metadata["file"] for d in docs}


def test_an_unzipped_export_folder_names_its_chat(tmp_path):
    folder = tmp_path / "exports" / "WhatsApp Chat - Bob"
    folder.mkdir(parents=True)
    (folder / "_chat.txt").write_text(IOS_CHAT.replace("Anna", "Bob"), encoding="utf-8")
    (folder / "00000012-PHOTO-2024-03-05-09-32-05.jpg").write_bytes(b"\xff\xd8")
    docs, errors, _, _ = read_all(tmp_path / "exports")
    assert not errors and {d.metadata["chat"] for d in docs} == {"Bob"}
    assert docs[0].metadata["file"] == "WhatsApp Chat - Bob/_chat.txt"


def test_an_ios_text_alone_is_named_by_its_encryption_notice(tmp_path):
    path = tmp_path / "_chat.txt"
    path.write_text(
        f"[6/1/24, 10:00:00] Trip 2024: {LRM}Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them.\n"
        f"[6/1/24, 10:00:00] Trip 2024: {LRM}Ana created this group\n"
        "[6/1/24, 10:00:05] Ana: Hola\n"
        "[6/1/24, 10:00:09] Bea: Hi\n",
        encoding="utf-8",
    )
    (doc,), _, _, _ = read_all(path, options={"timezone": "UTC"})
    assert doc.metadata["chat"] == "Trip 2024" and doc.metadata["is_group"] is True
    assert doc.metadata["is_from_me"] is False  # nothing says who exported it


def test_me_may_be_several_names(tmp_path):
    path = tmp_path / "WhatsApp Chat with Hiking Crew.txt"
    path.write_text(ANDROID_GROUP, encoding="utf-8")
    (first, _), _, _, _ = read_all(path, options={"me": ["Dan Meyer", "Ben"], "timezone": "UTC"})
    assert first.metadata["sender"] == ["Carol", "Me", "+49 170 1234567"]


def test_window_size_bound_stable_ids_and_same_second_windows(tmp_path, monkeypatch):
    path = tmp_path / "WhatsApp Chat with Kim.txt"
    rows = [f"02/01/2024, 10:00 - Kim: message {i}" for i in range(6)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.setattr(whatsapp, "WINDOW_MESSAGES", 2)
    docs, _, _, _ = read_all(path, options={"timezone": "UTC"})
    start = int(datetime(2024, 1, 2, 10, 0, tzinfo=UTC).timestamp())
    chat_id = docs[0].metadata["chat_id"]
    assert [d.native_id for d in docs] == [f"{chat_id}@{start}", f"{chat_id}@{start}.2", f"{chat_id}@{start}.3"]
    path.write_text("\n".join(rows + ["02/01/2024, 10:01 - Kim: one more"]) + "\n", encoding="utf-8")
    again, _, _, _ = read_all(path, options={"timezone": "UTC"})
    assert [d.native_id for d in again][:3] == [d.native_id for d in docs]
    assert [d.content_hash for d in again[:3]] == [d.content_hash for d in docs]
    assert len(again) == 4 and "one more" in again[-1].text


def test_incremental_refresh(tmp_path):
    folder = write_export(tmp_path / "export")
    docs, _, seen, cursor = read_all(folder, options=OPTIONS)
    assert not seen

    # Nothing changed: no file is parsed, every window is vouched for.
    docs2, _, seen2, cursor2 = read_all(folder, cursor, options=OPTIONS)
    assert docs2 == [] and sorted(seen2) == sorted(d.native_id for d in docs)

    # Mama's chat is exported again with a message more: only that file is read again, and its
    # earlier window keeps its id and text.
    mama = folder / "WhatsApp Chat mit Mama.txt"
    mama.write_text(GERMAN + "24.12.23, 18:06 - Mama: Bring bitte Brot mit\n", encoding="utf-8")
    docs3, _, seen3, cursor3 = read_all(folder, cursor2, options=OPTIONS)
    assert {d.metadata["chat"] for d in docs3} == {"Mama"}
    (old,) = [d for d in docs if d.metadata["chat"] == "Mama"]
    assert docs3[0].native_id == old.native_id and "Bring bitte Brot mit" in docs3[0].text
    assert set(seen3) == {d.native_id for d in docs if d.metadata["chat"] != "Mama"}

    # A message deleted from the export and a whole file removed: both gone on the next read.
    mama.write_text(GERMAN.replace("24.12.23, 18:04 - Mama: <Medien ausgeschlossen>\n", ""), encoding="utf-8")
    (folder / "Chat de WhatsApp con Playa.txt").unlink()
    docs4, _, seen4, cursor4 = read_all(folder, cursor3, options=OPTIONS)
    assert [d.metadata["chat"] for d in docs4] == ["Mama"] and "[media]" not in docs4[0].text
    assert not {d.native_id for d in docs if d.metadata["chat"] == "Playa"} & set(seen4)

    # Another zone moves every message: everything is read again.
    docs5, _, seen5, _ = read_all(folder, cursor4, options={**OPTIONS, "timezone": "Asia/Tokyo"})
    assert not seen5 and {d.metadata["chat"] for d in docs5} == {"Anna", "Hiking Crew", "Mama"}


def test_the_hour_a_clock_change_repeats_keeps_the_files_order(tmp_path):
    path = tmp_path / "WhatsApp Chat with Kim.txt"
    path.write_text(
        "29/10/2023, 02:50 - Kim: before the clocks go back\n29/10/2023, 02:10 - Lee: an hour later, after\n",
        encoding="utf-8",
    )
    (doc,), _, _, _ = read_all(path, options={"timezone": "Europe/Berlin"})
    assert doc.text == ("2023-10-29 00:50 Kim: before the clocks go back\n2023-10-29 01:10 Me: an hour later, after\n")


def test_the_same_chat_in_two_exports_is_kept_once_newest_wins(tmp_path):
    folder = tmp_path / "exports"
    (folder / "2024-03").mkdir(parents=True)
    (folder / "2024-04").mkdir()
    old = "02/01/2024, 10:00 - Kim: first draft of the plan\n"
    new = old + "02/01/2024, 10:05 - Kim: final plan: meet at the trailhead\n"
    (folder / "2024-03" / "WhatsApp Chat with Kim.txt").write_text(new, encoding="utf-8")
    (folder / "2024-04" / "WhatsApp Chat with Kim (1).txt").write_text(old, encoding="utf-8")
    docs, errors, _, _ = read_all(folder, options={"timezone": "UTC"})
    assert not errors and len(docs) == 1
    assert "final plan" in docs[0].text


def test_spans_are_whole_lines_within_budget_with_senders(tmp_path, count):
    folder = write_export(tmp_path / "export")
    docs, _, _, _ = read_all(folder, options=OPTIONS)
    first = by_chat(docs)["Hiking Crew"][0]
    spans = whatsapp.spans(first, count, 24)
    assert len(spans) > 1
    for sp in spans:
        piece = first.text[sp.start : sp.end]
        assert count(piece) <= 24 and piece == piece.strip()
        assert sp.metadata["sender"] and isinstance(sp.metadata["is_from_me"], bool)
    (whole,) = whatsapp.spans(first, count, 500)
    assert whole.metadata == {"sender": ["Carol", "Dan Meyer", "Me", "+49 170 1234567"], "is_from_me": True}


@pytest.mark.parametrize("style", ["ios", "android", "android_de"])
def test_what_the_evalsets_writer_writes_reads_back(tmp_path, style):
    chat = WhatsApp("Lisbon trip", "Jules", style=style, zone="Europe/Lisbon", group=True)
    t = datetime(2024, 7, 1, 9, 0, tzinfo=UTC)
    chat.created(t, ["Noor", "Sam"])
    chat.say(t.replace(minute=1), "Noor", "The gate code is 4711.\nRing twice.")
    chat.say(t.replace(minute=2), None, "Got it", edited=True)
    chat.media(t.replace(minute=3), "Sam", file="00000007-PHOTO-2024-07-01-10-03-00.jpg")
    chat.media(t.replace(minute=4), "Sam")
    chat.deleted(t.replace(minute=5), None)
    chat.deleted(t.replace(minute=6), "Noor")
    if style == "ios":
        (tmp_path / chat.zip_name()).write_bytes(chat.zip_bytes({"00000007-PHOTO-2024-07-01-10-03-00.jpg": b"\xff"}))
    else:
        (tmp_path / chat.file_name()).write_bytes(chat.bytes())
    (doc,), errors, _, _ = read_all(tmp_path, options={"timezone": "Europe/Lisbon", "me": "Jules"})
    file_attached = "[media: 00000007-PHOTO-2024-07-01-10-03-00.jpg]"
    assert not errors
    assert doc.text == (
        "2024-07-01 09:01 Noor: The gate code is 4711.\n"
        "  Ring twice.\n"
        "2024-07-01 09:02 Me: Got it\n"
        f"2024-07-01 09:03 Sam: {file_attached}\n"
        f"2024-07-01 09:04 Sam: {'[media: image]' if style == 'ios' else '[media]'}\n"
    )
    assert doc.metadata["chat"] == "Lisbon trip" and doc.metadata["is_group"] is True
    assert doc.metadata["chat_id"] == stable_hash("lisbon trip", length=16)


def test_long_runs_are_read_in_linear_time():
    """A message of 200,000 spaces (or direction marks) before an edit notice took a minute when
    the notice was searched for in the whole message; only its end is searched now."""
    started = time.perf_counter()
    for filler in (" ", LRM):
        body = "x" + filler * 200_000 + f"y {LRM}<This message was edited>"
        found = phrases.classify(body, True)
        assert found.kind == phrases.TEXT and found.text.endswith("y") and "edited" not in found.text
    assert time.perf_counter() - started < 5


def test_ragbag_add_sets_the_connectors_own_options(tmp_path):
    """`ragbag add … --option KEY=VALUE` writes what the connector declares (`OPTIONS`) into the
    source, typed (a repeated key a list); any other key, or a connector without settings, is a
    one-line refusal naming what there is."""
    import yaml
    from conftest import cli

    env = {"RAGBAG_HOME": str(tmp_path / "home")}
    chats = write_export(tmp_path / "chats")
    cli("add", "whatsapp", "chats", str(chats), "--option", "me=Ben", "--option", "me=Benjamin",
        "--option", "timezone=Europe/Berlin", env=env)  # fmt: skip
    registered = yaml.safe_load((tmp_path / "home" / "sources.yaml").read_text())["sources"]["chats"]
    assert registered["options"] == {"me": ["Ben", "Benjamin"], "timezone": "Europe/Berlin"}
    mine = [d for d in whatsapp.read(chats, "chats", None, options=registered["options"]) if isinstance(d, Document)]
    assert any(d.metadata["is_from_me"] for d in mine)

    bad = cli("add", "whatsapp", "other", str(chats), "--option", "colour=red", env=env, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "me, timezone" in bad.stderr
    bad = cli("add", "files", "notes", str(chats), "--option", "me=Ben", env=env, check=False)
    assert bad.returncode == 2 and "it has: none" in bad.stderr
