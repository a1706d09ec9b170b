"""The signal connector: Signal Desktop folders as Signal leaves them (SQLCipher 4 databases built
from Signal's migrations by ragbag_evalsets.formats.signal, keys in config.json plain or wrapped
the way Chromium's OSCrypt wraps them), windows, traps, keys, incremental refresh."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlcipher3
from chat_reads import by_chat as grouped
from chat_reads import read_chats
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ragbag.connectors import signal
from ragbag.connectors.signal import keys
from ragbag.core.errors import RagbagError
from ragbag.core.records import Document
from ragbag.models.embedding import token_counter
from ragbag_evalsets.formats.signal import SignalDesktop, oscrypt_wrap
from tests.differential import signal as differential

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
PASSWORD = "kR3y9Qm2Lx7vT1pZ8sN4wA=="  # a keyring secret as Chromium makes them (16 random bytes, base64)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def sample(version: int = 1360) -> tuple[SignalDesktop, dict[str, str]]:
    """A folder's worth of chats: a direct chat, a group, Note to Self, and every trap."""
    s = SignalDesktop(version=version)
    ids = {
        "alice": s.contact("Alice Liddell", e164="+15550100001"),
        "bob": s.contact(profile="Bob", e164="+15550100002"),
        "carol": s.contact("\u2068Carol Ng\u2069", nickname="Caz"),
        "group": s.group("Hiking club"),
        "self": s.note_to_self(),
    }
    a, b, c, g = ids["alice"], ids["bob"], ids["carol"], ids["group"]
    s.say(a, at(0), a, "Did you book the cabin for the hiking trip?")
    s.say(a, at(1), None, "Yes! The lakeside cabin,\ntwo nights.", attachments=(("cabin.pdf", "application/pdf"),))
    s.say(a, at(2), a, "", attachments=(("", "image/jpeg"),))
    s.say(a, at(3), a, "this was a mistake", deletedForEveryone=True)
    s.say(a, at(4), a, "see you at 8", expireTimer=3600)
    s.say(a, at(5), None, "", kind="call-history")
    s.say(a, at(6), a, "", isViewOnce=1)
    s.say(a, at(7), a, "long text " * 300, attachments=(("", "text/x-signal-plain"),))
    # Three hours later: a new window, with an edited message and a sticker.
    s.say(a, at(180), a, "Meet at the trailhead at 8?", edits=((at(181), "Meet at the trailhead at 7?"),))
    s.say(a, at(182), None, "", sticker={"packId": "9acc9e8aba563d26a4994e69263e3b25", "emoji": "👍"})
    s.say(g, at(30), b, "I'll bring the tent")
    s.say(g, at(31), c, "我带睡袋和水")
    s.say(g, at(32), None, "I'll bring the stove", contact=[{"name": {"displayName": "Ranger Station"}}])
    s.say(g, at(33), b, "a story reply", storyId="0b0e5e0a-1111-4222-8333-444455556666")
    s.say(ids["self"], at(60), None, "gate code 4711")
    return s, ids


def read_all(path: Path, cursor=None, options=None):
    return read_chats(signal, path, cursor, options)


def by_chat(docs: list[Document]) -> dict[str, list[Document]]:
    return grouped(sorted(docs, key=lambda d: d.created_at))


@pytest.fixture(autouse=True)
def no_env_secrets(monkeypatch):
    monkeypatch.delenv(keys.ENV_KEY, raising=False)
    monkeypatch.delenv(keys.ENV_PASSWORD, raising=False)


def test_windows_field_by_field(tmp_path):
    s, ids = sample()
    folder = s.write(tmp_path / "Signal")
    docs, errors, _, _ = read_all(folder)
    assert errors == []
    chats = by_chat(docs)
    assert sorted(chats) == ["Alice Liddell", "Hiking club", "Note to Self"]
    first, second = chats["Alice Liddell"]
    assert first.text == (
        "2024-05-01 09:00 Alice Liddell: Did you book the cabin for the hiking trip?\n"
        "2024-05-01 09:01 Me: Yes! The lakeside cabin,\n  two nights. [attachment: cabin.pdf]\n"
        "2024-05-01 09:02 Alice Liddell: [attachment: image/jpeg]\n"
        f"2024-05-01 09:07 Alice Liddell: {('long text ' * 300).strip()}\n"
    )
    assert second.text == (
        "2024-05-01 12:00 Alice Liddell: Meet at the trailhead at 7?\n2024-05-01 12:02 Me: [sticker: 👍]\n"
    )
    db = folder / "sql" / "db.sqlite"
    first_id = s.messages[0]["id"]
    assert first.native_id == f"{ids['alice']}/{first_id}"
    assert first.uri == f"{db.absolute()}#{ids['alice']}/{first_id}"
    assert first.title == "Alice Liddell · 2024-05-01"
    assert (first.created_at, first.updated_at) == (at(0), at(7))
    assert first.authors == ["Alice Liddell", "Me"]
    assert first.metadata == {
        "chat": "Alice Liddell",
        "chat_id": ids["alice"],
        "is_group": False,
        "sender": ["Alice Liddell", "Me"],
        "is_from_me": True,
        "date": "2024-05-01",
        "messages": 4,
    }
    (group,) = chats["Hiking club"]
    assert group.text == (
        "2024-05-01 09:30 Bob: I'll bring the tent\n"
        "2024-05-01 09:31 Caz: 我带睡袋和水\n"
        "2024-05-01 09:32 Me: I'll bring the stove [contact: Ranger Station]\n"
    )
    assert group.metadata["is_group"] is True and group.metadata["sender"] == ["Bob", "Caz", "Me"]
    assert chats["Note to Self"][0].text == "2024-05-01 10:00 Me: gate code 4711\n"


@pytest.mark.parametrize("version", [20, 45, 88, 1270, 1360])
def test_every_schema_version_reads_the_same(tmp_path, version):
    """From the uuid columns (20) through serviceId (88), the columns leaving the JSON (1270) to
    attachments in rows of their own (1360): the same windows."""
    s, _ = sample(version)
    docs, errors, _, _ = read_all(s.write(tmp_path / "Signal"))
    latest, _ = sample()
    expected, _, _, _ = read_all(latest.write(tmp_path / "latest" / "Signal"))
    assert errors == []
    assert sorted((d.native_id, d.text, d.metadata["chat"]) for d in docs) == sorted(
        (d.native_id, d.text, d.metadata["chat"]) for d in expected
    )


def test_disappearing_messages_only_when_the_source_asks(tmp_path):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    docs, _, _, _ = read_all(folder, options={"disappearing": True})
    assert "2024-05-01 09:04 Alice Liddell: see you at 8\n" in by_chat(docs)["Alice Liddell"][0].text


def test_chromium_constants_match_os_crypt_linux():
    """The keys os_crypt_linux.cc hard-codes: PBKDF2-HMAC-SHA1("peanuts" / "", "saltysalt", 1)."""
    assert keys._derive(b"peanuts", 1).hex() == "fd621fe5a2b402539dfa147ca9272778"
    assert keys._derive(b"", 1).hex() == "d0d0ec9c7d77d43ac54187fa4818d17f"


def test_encrypted_key_of_the_basic_store_is_unwrapped_in_process(tmp_path):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal", wrap="v10")
    config = json.loads((folder / "config.json").read_text())
    assert "key" not in config and config["encryptedKey"].startswith(b"v10".hex())
    docs, errors, _, _ = read_all(folder)
    assert errors == [] and len(docs) == 4


def write_config(folder: Path, **config) -> None:
    (folder / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize("backend", ["gnome_libsecret", "kwallet6"])
def test_keyring_wrapped_key_needs_the_keyrings_secret(tmp_path, monkeypatch, backend):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    wrapped = oscrypt_wrap(s.key, PASSWORD.encode(), 1, b"v11").hex()
    write_config(folder, encryptedKey=wrapped, safeStorageBackend=backend)
    docs, errors, _, _ = read_all(folder)
    assert docs == [] and len(errors) == 1
    assert errors[0].uri == str((folder / "sql" / "db.sqlite").absolute())
    hint = "`secret-tool lookup application Signal`" if backend == "gnome_libsecret" else "'Chromium Safe Storage'"
    assert errors[0].error == (
        f"key wrapped by a {backend} secret ({hint}): set $RAGBAG_SIGNAL_PASSWORD to it, or $RAGBAG_SIGNAL_KEY to the key"
    )
    assert keys.ENV_PASSWORD in errors[0].error and "\n" not in errors[0].error
    monkeypatch.setenv(keys.ENV_PASSWORD, PASSWORD)
    docs, errors, _, _ = read_all(folder)
    assert errors == [] and len(docs) == 4
    monkeypatch.setenv(keys.ENV_PASSWORD, "not the secret")
    _, errors, _, _ = read_all(folder)
    assert errors[0].error.startswith("wrong password; key wrapped by")


def test_keyring_wrapped_with_an_empty_secret_opens_as_os_crypt_retries(tmp_path):
    """OSCrypt retries every ciphertext with the key of an empty password (crbug.com/40055416)."""
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    write_config(folder, encryptedKey=oscrypt_wrap(s.key, b"", 1, b"v11").hex(), safeStorageBackend="gnome_libsecret")
    docs, errors, _, _ = read_all(folder)
    assert errors == [] and len(docs) == 4


def test_macos_keychain_wrapped_key(tmp_path):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal Beta")
    write_config(folder, encryptedKey=oscrypt_wrap(s.key, PASSWORD.encode(), 1003, b"v10").hex())
    _, errors, _, _ = read_all(folder)
    assert "macOS Keychain item 'Signal Beta Safe Storage'" in errors[0].error
    docs, errors, _, _ = read_all(folder, options={"safe_storage_password": PASSWORD})
    assert errors == [] and len(docs) == 4


def test_windows_dpapi_sealed_key_is_explained(tmp_path):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    nonce = bytes(range(12))
    sealed = AESGCM(bytes(32)).encrypt(nonce, s.key.encode(), None)
    write_config(folder, encryptedKey=(b"v10" + nonce + sealed).hex())
    state = {"os_crypt": {"encrypted_key": base64.b64encode(b"DPAPI" + bytes(40)).decode()}}
    (folder / "Local State").write_text(json.dumps(state))
    _, errors, _, _ = read_all(folder)
    assert "Windows DPAPI" in errors[0].error and keys.ENV_KEY in errors[0].error
    docs, errors, _, _ = read_all(folder, options={"key": s.key})
    assert errors == [] and len(docs) == 4


def test_wrong_key_is_one_line(tmp_path, monkeypatch):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    monkeypatch.setenv(keys.ENV_KEY, hashlib.sha256(b"another key").hexdigest())
    docs, errors, _, _ = read_all(folder)
    assert docs == [] and [e.error for e in errors] == [
        "the key does not open the database (a wrong key, or not a Signal Desktop database)"
    ]
    monkeypatch.setenv(keys.ENV_KEY, "12345")
    _, errors, _, _ = read_all(folder)
    assert "not 64 hexadecimal digits" in errors[0].error


def test_wrong_files_are_reported_and_good_folders_still_read(tmp_path):
    s, _ = sample()
    s.write(tmp_path / "Signal")
    stray = tmp_path / "OtherApp" / "sql"
    stray.mkdir(parents=True)
    (stray / "db.sqlite").write_bytes(os.urandom(8192))  # not SQLite, not keyed by anything here
    (tmp_path / "OtherApp" / "config.json").write_text('{"theme": "dark"}')
    lone = tmp_path / "Lone" / "sql"
    lone.mkdir(parents=True)
    (lone / "db.sqlite").write_bytes(s.database())  # no config.json beside it
    plain = tmp_path / "Plain" / "sql"
    plain.mkdir(parents=True)
    conn = __import__("sqlite3").connect(plain / "db.sqlite")
    conn.execute("CREATE TABLE notes(x)")
    conn.commit()
    conn.close()
    (tmp_path / "Empty" / "sql").mkdir(parents=True)
    (tmp_path / "Empty" / "sql" / "db.sqlite").write_bytes(b"")
    docs, errors, _, _ = read_all(tmp_path)
    assert len(docs) == 4
    why = {Path(e.uri).parent.parent.name: e.error for e in errors}
    assert why == {
        "OtherApp": "config.json holds neither a key nor an encryptedKey: not a Signal Desktop folder?",
        "Lone": "no config.json beside sql/: expected a Signal Desktop folder (config.json, sql/db.sqlite)",
        "Plain": "not a Signal Desktop database (no conversations table)",
        "Empty": "empty or truncated file: not a Signal Desktop database",
    }


def test_already_decrypted_database_needs_no_key(tmp_path):
    """A plain SQLite copy (what sigtop's export-database writes) opens without config.json."""
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    db = folder / "sql" / "db.sqlite"
    conn = sqlcipher3.connect(str(db))
    conn.execute(f"PRAGMA key = \"x'{s.key}'\"")
    conn.execute(f"ATTACH DATABASE '{tmp_path / 'plain.sqlite'}' AS plain KEY ''")
    conn.execute("SELECT sqlcipher_export('plain')")
    conn.close()
    (tmp_path / "plain.sqlite").replace(db)
    (folder / "config.json").unlink()
    docs, errors, _, _ = read_all(db)
    assert errors == [] and len(docs) == 4


def test_bad_messages_lose_only_themselves(tmp_path):
    s, ids = sample()
    folder = s.write(tmp_path / "Signal")
    db = folder / "sql" / "db.sqlite"
    conn = sqlcipher3.connect(str(db))
    conn.execute(f"PRAGMA key = \"x'{s.key}'\"")
    cols = "id, conversationId, type, body, json, sent_at"
    conn.execute(
        f"INSERT INTO messages ({cols}) VALUES ('bad-json', ?, 'incoming', 'x', '[1, 2', ?)", (ids["alice"], 1)
    )
    conn.execute(f"INSERT INTO messages ({cols}) VALUES ('no-time', ?, 'incoming', 'y', '{{}}', NULL)", (ids["alice"],))
    conn.execute(
        f"INSERT INTO messages ({cols}) VALUES ('bad-utf8', ?, 'incoming', CAST(x'ff' AS TEXT), '{{}}', 1)",
        (ids["alice"],),
    )
    conn.execute("UPDATE conversations SET json = '{\"broken' WHERE id = ?", (ids["alice"],))  # its columns title it
    conn.commit()
    conn.close()
    docs, errors, _, _ = read_all(folder)
    assert len(docs) == 4 and "Alice Liddell" in by_chat(docs)
    assert sorted((e.uri.rsplit("#", 1)[1], e.error) for e in errors) == [
        ("bad-json", "its json column is not JSON"),
        ("bad-utf8", "a text column is not UTF-8"),
        ("no-time", "no usable sent_at (None)"),
    ]


def test_incremental_refresh(tmp_path):
    s, ids = sample()
    folder = s.write(tmp_path / "Signal")
    docs, _, _, cursor = read_all(folder)
    before = {d.native_id: d.text for d in docs}
    # Unchanged: every window Seen, the database not even opened (no key needed).
    config = (folder / "config.json").read_bytes()
    (folder / "config.json").unlink()
    again, errors, seen, cursor = read_all(folder, cursor)
    assert again == [] and errors == [] and sorted(seen) == sorted(before)
    (folder / "config.json").write_bytes(config)
    # Appended messages, an edit, a deletion for everyone.
    s.say(ids["alice"], at(183), ids["alice"], "Great, see you there")
    group_first = next(m for m in s.messages if m["conversationId"] == ids["group"])
    group_first["editHistory"] = [
        {"body": "I'll bring the big tent", "timestamp": 2},
        {"body": group_first["body"], "timestamp": 1},
    ]
    group_first["body"] = "I'll bring the big tent"
    note = next(m for m in s.messages if m["conversationId"] == ids["self"])
    note["deletedForEveryone"] = True
    s.write(folder)
    docs, errors, seen, _ = read_all(folder, cursor)
    after = {d.native_id: d.text for d in docs}
    assert errors == [] and seen == []
    gone = [i for i in before if i not in after]
    assert [before[i] for i in gone] == ["2024-05-01 10:00 Me: gate code 4711\n"]
    changed = {i for i in after if i in before and after[i] != before[i]}
    assert {before[i].splitlines()[0] for i in changed} == {
        "2024-05-01 12:00 Alice Liddell: Meet at the trailhead at 7?",
        "2024-05-01 09:30 Bob: I'll bring the tent",
    }
    assert all(after[i] == before[i] for i in before if i in after and i not in changed)  # old windows stay


def test_unreadable_after_a_build_fails_instead_of_dropping_the_index(tmp_path, monkeypatch):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    _, _, _, cursor = read_all(folder)
    s.say(s.conversations[0]["id"], at(300), None, "one more")
    s.write(folder)
    monkeypatch.setenv(keys.ENV_KEY, "00" * 32)
    with pytest.raises(RagbagError, match="the key does not open the database"):
        read_all(folder, cursor)


def test_live_wal_database_is_read_from_a_copy_and_left_untouched(tmp_path):
    s, ids = sample()
    folder = s.write(tmp_path / "Signal")
    db = folder / "sql" / "db.sqlite"
    signal_app = sqlcipher3.connect(str(db))  # Signal running: its WAL holds the newest rows
    signal_app.execute(f"PRAGMA key = \"x'{s.key}'\"")
    signal_app.execute("PRAGMA journal_mode = WAL")
    signal_app.execute("PRAGMA wal_autocheckpoint = 0")
    signal_app.execute(
        "INSERT INTO messages (id, conversationId, type, body, json, sent_at) VALUES ('w1', ?, 'incoming', ?, '{}', ?)",
        (ids["alice"], "only in the WAL", int(at(184).timestamp() * 1000)),
    )
    signal_app.commit()
    files = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in db.parent.iterdir()}
    assert "db.sqlite-wal" in files
    docs, errors, _, _ = read_all(folder)
    assert errors == [] and any("only in the WAL" in d.text for d in docs)
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in db.parent.iterdir()} == files
    signal_app.close()


def test_places_per_platform(tmp_path):
    home = Path("/home/u")
    assert signal.places("linux", {}, home)[:2] == [home / ".config/Signal", home / ".config/Signal Beta"]
    assert home / ".var/app/org.signal.Signal/config/Signal" in signal.places("linux", {}, home)
    assert signal.places("linux", {"XDG_CONFIG_HOME": "/x"}, home)[0] == Path("/x/Signal")
    assert signal.places("darwin", {}, home) == [
        home / "Library/Application Support/Signal",
        home / "Library/Application Support/Signal Beta",
    ]
    assert signal.places("win32", {"APPDATA": "C:/Users/u/AppData/Roaming"}, home)[0] == Path(
        "C:/Users/u/AppData/Roaming/Signal"
    )


def test_discover_honours_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr(signal.sys, "platform", "linux")
    s, _ = sample()
    s.write(tmp_path / ".config" / "Signal")
    found, looked = signal.discover()
    assert found == [tmp_path / ".config" / "Signal" / "sql" / "db.sqlite"]
    assert str(tmp_path / ".config" / "Signal Beta") in looked
    docs, errors, _, _ = read_all(None)
    assert errors == [] and len(docs) == 4


def test_spans_keep_whole_messages():
    count = token_counter()
    s, _ = sample()
    text = "".join(f"2024-05-01 09:{n:02d} Bob: message number {n} about the tent and the stove\n" for n in range(60))
    doc = Document(source="s", connector="signal", native_id="x", uri="u", title="t", text=text)
    spans = signal.spans(doc, count, 64)
    assert len(spans) > 1 and all(count(text[sp.start : sp.end]) <= 64 for sp in spans)
    assert all(text[sp.start : sp.end].startswith("2024-05-01 ") for sp in spans)
    assert spans[0].metadata == {"sender": ["Bob"], "is_from_me": False}


def test_writer_is_deterministic_and_its_key_opens_only_its_database():
    s, _ = sample()
    assert s.database() == sample()[0].database()
    assert s.database() != SignalDesktop(account="someone else").database()


def test_differential_reference_agrees_on_a_generated_folder(tmp_path):
    s = SignalDesktop()
    a, g = s.contact("Dana", e164="+15550100009"), s.group("Book club")
    e = s.contact(profile="Eve")
    s.say(a, at(0), a, "Chapter 3 tonight?\nor tomorrow")
    s.say(a, at(1), None, "Tonight works")
    s.say(g, at(2), e, "I finished the book")
    s.say(g, at(3), e, "spoiler", deletedForEveryone=True)
    outcome = differential.compare(s.write(tmp_path / "Signal"))
    assert outcome.disagreements == [] and outcome.reference == 3
    assert outcome.checks == {"count": (3, 3), "times": (3, 3), "people": (3, 3), "text": (3, 3)}


def test_without_sqlcipher_the_reason_says_what_to_install(tmp_path, monkeypatch):
    s, _ = sample()
    folder = s.write(tmp_path / "Signal")
    monkeypatch.setitem(__import__("sys").modules, "sqlcipher3", None)  # as if not installed
    docs, errors, _, _ = read_all(folder)
    assert docs == [] and [e.error for e in errors] == [
        "reading Signal's encrypted database needs the sqlcipher3 module (pip install sqlcipher3-wheels)"
    ]


def test_names_lose_their_isolates_and_unknown_senders_are_said_so(tmp_path):
    s = SignalDesktop()
    dave, group = s.contact("\u2068Dave Okafor\u2069"), s.group("")
    s.say(dave, at(0), dave, "hi")
    s.say(group, at(1), dave, "count me in")
    s.messages[-1].pop("sourceServiceId")  # a sender the database does not name
    docs, errors, _, _ = read_all(s.write(tmp_path / "Signal"))
    texts = {d.metadata["chat"]: d.text for d in docs}
    assert errors == [] and texts == {
        "Dave Okafor": "2024-05-01 09:00 Dave Okafor: hi\n",
        "Unknown group": "2024-05-01 09:01 Unknown contact: count me in\n",
    }
