"""Messages' ``chat.db`` as macOS writes it: handles, chats joined to them, messages joined to their
chat, some bodies only in ``attributedBody`` (an NSArchiver typedstream), tapbacks pointing at the
message they react to."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime

from ragbag_evalsets.formats import h
from ragbag_evalsets.formats.sqlite import APPLE_EPOCH, sqlite_bytes, us

# The tables as Messages creates them (the connector tests build their fixtures from it too).
CHAT_DB_SCHEMA = """

CREATE TABLE _SqliteDatabaseProperties (key TEXT, value TEXT, UNIQUE(key));
CREATE TABLE handle (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, id TEXT NOT NULL, country TEXT, service TEXT NOT NULL, uncanonicalized_id TEXT, person_centric_id TEXT, UNIQUE (id, service) );
CREATE TABLE chat (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, style INTEGER, state INTEGER, account_id TEXT, properties BLOB, chat_identifier TEXT, service_name TEXT, room_name TEXT, account_login TEXT, is_archived INTEGER DEFAULT 0, last_addressed_handle TEXT, display_name TEXT, group_id TEXT, is_filtered INTEGER DEFAULT 0, successful_query INTEGER, engram_id TEXT, server_change_token TEXT, ck_sync_state INTEGER DEFAULT 0, original_group_id TEXT, last_read_message_timestamp INTEGER DEFAULT 0, cloudkit_record_id TEXT, last_addressed_sim_id TEXT, is_blackholed INTEGER DEFAULT 0, syndication_date INTEGER DEFAULT 0, syndication_type INTEGER DEFAULT 0, is_recovered INTEGER DEFAULT 0, is_deleting_incoming_messages INTEGER DEFAULT 0);
CREATE TABLE message (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, text TEXT, replace INTEGER DEFAULT 0, service_center TEXT, handle_id INTEGER DEFAULT 0, subject TEXT, country TEXT, attributedBody BLOB, version INTEGER DEFAULT 0, type INTEGER DEFAULT 0, service TEXT, account TEXT, account_guid TEXT, error INTEGER DEFAULT 0, date INTEGER, date_read INTEGER, date_delivered INTEGER, is_delivered INTEGER DEFAULT 0, is_finished INTEGER DEFAULT 0, is_emote INTEGER DEFAULT 0, is_from_me INTEGER DEFAULT 0, is_empty INTEGER DEFAULT 0, is_delayed INTEGER DEFAULT 0, is_auto_reply INTEGER DEFAULT 0, is_prepared INTEGER DEFAULT 0, is_read INTEGER DEFAULT 0, is_system_message INTEGER DEFAULT 0, is_sent INTEGER DEFAULT 0, has_dd_results INTEGER DEFAULT 0, is_service_message INTEGER DEFAULT 0, is_forward INTEGER DEFAULT 0, was_downgraded INTEGER DEFAULT 0, is_archive INTEGER DEFAULT 0, cache_has_attachments INTEGER DEFAULT 0, cache_roomnames TEXT, was_data_detected INTEGER DEFAULT 0, was_deduplicated INTEGER DEFAULT 0, is_audio_message INTEGER DEFAULT 0, is_played INTEGER DEFAULT 0, date_played INTEGER, item_type INTEGER DEFAULT 0, other_handle INTEGER DEFAULT 0, group_title TEXT, group_action_type INTEGER DEFAULT 0, share_status INTEGER DEFAULT 0, share_direction INTEGER DEFAULT 0, is_expirable INTEGER DEFAULT 0, expire_state INTEGER DEFAULT 0, message_action_type INTEGER DEFAULT 0, message_source INTEGER DEFAULT 0, associated_message_guid TEXT, associated_message_type INTEGER DEFAULT 0, balloon_bundle_id TEXT, payload_data BLOB, expressive_send_style_id TEXT, associated_message_range_location INTEGER DEFAULT 0, associated_message_range_length INTEGER DEFAULT 0, time_expressive_send_played INTEGER, message_summary_info BLOB, ck_sync_state INTEGER DEFAULT 0, ck_record_id TEXT, ck_record_change_tag TEXT, destination_caller_id TEXT, is_corrupt INTEGER DEFAULT 0, reply_to_guid TEXT, sort_id INTEGER, is_spam INTEGER DEFAULT 0, has_unseen_mention INTEGER DEFAULT 0, thread_originator_guid TEXT, thread_originator_part TEXT, syndication_ranges TEXT, synced_syndication_ranges TEXT, was_delivered_quietly INTEGER DEFAULT 0, did_notify_recipient INTEGER DEFAULT 0, date_retracted INTEGER DEFAULT 0, date_edited INTEGER DEFAULT 0, was_detonated INTEGER DEFAULT 0, part_count INTEGER, is_stewie INTEGER DEFAULT 0, is_kt_verified INTEGER DEFAULT 0, is_sos INTEGER DEFAULT 0, is_critical INTEGER DEFAULT 0, bia_reference_id TEXT DEFAULT NULL, fallback_hash TEXT DEFAULT NULL);
CREATE TABLE attachment (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, created_date INTEGER DEFAULT 0, start_date INTEGER DEFAULT 0, filename TEXT, uti TEXT, mime_type TEXT, transfer_state INTEGER DEFAULT 0, is_outgoing INTEGER DEFAULT 0, user_info BLOB, transfer_name TEXT, total_bytes INTEGER DEFAULT 0, is_sticker INTEGER DEFAULT 0, sticker_user_info BLOB, attribution_info BLOB, hide_attachment INTEGER DEFAULT 0, ck_sync_state INTEGER DEFAULT 0, ck_server_change_token_blob BLOB, ck_record_id TEXT, original_guid TEXT UNIQUE NOT NULL, is_commsafety_sensitive INTEGER DEFAULT 0);
CREATE TABLE chat_handle_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE, handle_id INTEGER REFERENCES handle (ROWID) ON DELETE CASCADE, UNIQUE(chat_id, handle_id));
CREATE TABLE chat_message_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE, message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE, message_date INTEGER DEFAULT 0, PRIMARY KEY (chat_id, message_id));
CREATE TABLE message_attachment_join (message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE, attachment_id INTEGER REFERENCES attachment (ROWID) ON DELETE CASCADE, UNIQUE(message_id, attachment_id));
CREATE TABLE deleted_messages (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, guid TEXT NOT NULL);
CREATE INDEX chat_message_join_idx_message_date_id_chat_id ON chat_message_join(chat_id, message_date, message_id);
CREATE INDEX message_idx_handle ON message(handle_id, date);
CREATE INDEX message_idx_date ON message(date);
CREATE INDEX message_idx_associated_message2 ON message(associated_message_guid) WHERE associated_message_guid IS NOT NULL;
CREATE INDEX chat_idx_chat_identifier ON chat(chat_identifier);
INSERT INTO _SqliteDatabaseProperties VALUES ('_ClientVersion', '17000'), ('counter_last_all_messages', '0');
"""


def ts_length(n: int) -> bytes:
    """A typedstream integer as used for byte-string lengths."""
    if n < 0x80:
        return bytes([n])
    if n < 0x10000:
        return b"\x81" + n.to_bytes(2, "little")
    return b"\x82" + n.to_bytes(4, "little")


def ts_class(name: bytes, version: int) -> bytes:
    """A new typedstream class (84) named by a new shared string, with its version."""
    return b"\x84\x84" + bytes([len(name)]) + name + bytes([version])


def typedstream(text: str, mutable: bool = False) -> bytes:
    """An attributedBody as Messages writes it: NSArchiver's typedstream of an
    NS(Mutable)AttributedString whose string object is an NS(Mutable)String, then the attribute
    run (index 1 over the text's UTF-16 length) with its __kIMMessagePartAttributeName dict."""
    data = text.encode("utf-8")
    out = b"\x04\x0bstreamtyped\x81\xe8\x03"  # typedstream v4, signature, system version 1000
    out += b"\x84\x01@\x84"  # type "@": a new object follows
    if mutable:
        out += (
            ts_class(b"NSMutableAttributedString", 0)
            + ts_class(b"NSAttributedString", 0)
            + ts_class(b"NSObject", 0)
            + b"\x85"
        )
        out += b"\x92\x84" + ts_class(b"NSMutableString", 1) + ts_class(b"NSString", 1) + b"\x95"
    else:
        out += ts_class(b"NSAttributedString", 0) + ts_class(b"NSObject", 0) + b"\x85"
        out += b"\x92\x84" + ts_class(b"NSString", 1) + b"\x94"
    out += b"\x84\x01+" + ts_length(len(data)) + data + b"\x86"
    out += b"\x84\x02iI\x01" + ts_length(len(text.encode("utf-16-le")) // 2)
    out += (
        b"\x92\x84\x84\x84\x0cNSDictionary\x00\x94\x84\x01i\x01\x92\x84\x96\x96\x1d"
        b"__kIMMessagePartAttributeName\x86\x92\x84\x84\x84\x08NSNumber\x00\x84\x84\x07"
        b"NSValue\x00\x94\x84\x01*\x84\x99\x99\x00\x86\x86\x86"
    )
    return out


class ChatDB:
    """chat.db rows the way Messages writes them: a handle per address, a chat per
    conversation, each message joined to its chat with its date copied into the join."""

    def __init__(self) -> None:
        self.handles: dict[tuple[str, str], int] = {}
        self.rows: list = []  # deferred inserts, replayed into the database
        self.chats: list[tuple] = []
        self.n = 0

    def handle(self, ident: str, service: str) -> int:
        if (ident, service) not in self.handles:
            self.handles[(ident, service)] = len(self.handles) + 1
        return self.handles[(ident, service)]

    def chat(self, identifier: str, members: list[str], name: str = "", service: str = "iMessage") -> int:
        group = len(members) > 1
        guid = f"{service};{'+' if group else '-'};{identifier}"
        rowid = len(self.chats) + 1
        self.chats.append(
            (rowid, guid, 43 if group else 45, identifier, service, name, [self.handle(m, service) for m in members])
        )
        return rowid

    def say(
        self,
        chat: int,
        when: datetime,
        sender: str | None,
        text: str,
        *,
        blob: bool = False,
        tapback: int = 0,
        item_type: int = 0,
    ) -> None:
        self.n += 1
        service = self.chats[chat - 1][4]
        guid = str(uuid.UUID(bytes=bytes.fromhex(h("msg", self.n)))).upper()
        date = us(when, APPLE_EPOCH) * 1000
        handle = self.handle(sender, service) if sender else 0
        body = typedstream(text) if (blob or tapback) and text else None
        self.rows.append(
            (
                self.n,
                guid,
                None if blob else text,
                handle,
                body,
                service,
                date,
                int(sender is None),
                item_type,
                tapback,
                chat,
            )
        )

    def bytes(self) -> bytes:
        def fill(db: sqlite3.Connection) -> None:
            for (ident, service), rowid in sorted(self.handles.items(), key=lambda kv: kv[1]):
                db.execute(
                    "INSERT INTO handle (ROWID, id, country, service) VALUES (?, ?, ?, ?)",
                    (rowid, ident, "de" if ident.startswith("+49") else "us", service),
                )
            for rowid, guid, style, ident, service, name, members in self.chats:
                db.execute(
                    "INSERT INTO chat (ROWID, guid, style, state, account_id, chat_identifier,"
                    " service_name, room_name, display_name, group_id) VALUES"
                    " (?, ?, ?, 3, 'A1', ?, ?, ?, ?, ?)",
                    (
                        rowid,
                        guid,
                        style,
                        ident,
                        service,
                        ident if style == 43 else None,
                        name,
                        str(uuid.UUID(bytes=bytes.fromhex(h("group", guid)))).upper(),
                    ),
                )
                for member in members:
                    db.execute("INSERT INTO chat_handle_join VALUES (?, ?)", (rowid, member))
            for n, guid, text, handle, body, service, when, mine, item_type, tapback, chat in self.rows:
                db.execute(
                    "INSERT INTO message (ROWID, guid, text, handle_id, attributedBody, service,"
                    " account, date, date_read, date_delivered, is_delivered, is_finished,"
                    " is_from_me, is_read, is_sent, item_type, associated_message_guid,"
                    " associated_message_type) VALUES"
                    " (?, ?, ?, ?, ?, ?, 'e:jan.hoffmann@posteo.de', ?, ?, ?, 1, 1, ?, 1, ?, ?, ?, ?)",
                    (
                        n,
                        guid,
                        text,
                        handle,
                        body,
                        service,
                        when,
                        when + 4_000_000_000,
                        when,
                        mine,
                        mine,
                        item_type,
                        f"p:0/{self.rows[n - 2][1]}" if tapback else None,
                        tapback,
                    ),
                )
                db.execute("INSERT INTO chat_message_join VALUES (?, ?, ?)", (chat, n, when))

        return sqlite_bytes(CHAT_DB_SCHEMA, fill)
