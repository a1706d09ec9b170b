"""Telegram chats as Telegram Desktop exports them in its machine-readable JSON: ``result.json``
of "Export Telegram data" (the account: ``personal_information`` and ``chats.list``) or of
"Export chat history" (one chat object). Messages carry ``date`` in the exporting machine's
local time and ``date_unixtime``, ``from``/``from_id``, ``text`` (a string, or strings and entity
objects when the message has formatting or links) with its ``text_entities``; media are named by
their fields (``photo``, ``file`` + ``media_type``, ``sticker_emoji``, ``poll``, …) with the
"File not included" placeholder a default export writes; group events are ``service`` messages."""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from typing import Any

NOT_INCLUDED = "(File not included. Change data exporting settings to download.)"
_CHATS = "This page lists all chats from this export."
_ABOUT = "Here is the data you requested. Remember: Telegram is ad free, it doesn't use your data for ad targeting."

Text = str | list[str | tuple[str, str] | tuple[str, str, str]]  # pieces: plain, (type, text), (text_link, text, href)


class TelegramChat:
    """One chat of an export. ``sender`` arguments are ``(name, user id)``; None is the owner."""

    def __init__(self, name: str | None, kind: str, chat_id: int, owner: tuple[str, int], zone: tzinfo = UTC) -> None:
        self.name, self.kind, self.id, self.owner, self.zone = name, kind, chat_id, owner, zone
        self.messages: list[dict[str, Any]] = []

    def _head(self, when: datetime, kind: str = "message") -> dict[str, Any]:
        return {
            "id": 1000 + len(self.messages),
            "type": kind,
            "date": when.astimezone(self.zone).replace(tzinfo=None).isoformat(timespec="seconds"),
            "date_unixtime": str(int(when.timestamp())),
        }

    def say(self, when: datetime, sender: tuple[str, int] | None, text: Text = "", **fields: Any) -> dict[str, Any]:
        """A message; ``fields`` are written between the sender and the text, as Telegram orders
        them (``edited``, ``forwarded_from``, ``reply_to_message_id``, media fields …)."""
        name, uid = sender or self.owner
        msg = self._head(when)
        edited = fields.pop("edited", None)
        if edited is not None:
            msg["edited"] = edited.astimezone(self.zone).replace(tzinfo=None).isoformat(timespec="seconds")
            msg["edited_unixtime"] = str(int(edited.timestamp()))
        msg |= {"from": name, "from_id": f"user{uid}", **fields}
        msg["text"], msg["text_entities"] = _text(text)
        self.messages.append(msg)
        return msg

    def link(self, when: datetime, sender: tuple[str, int] | None, before: str, words: str, url: str) -> None:
        self.say(when, sender, [before, ("text_link", words, url)])

    def photo(self, when: datetime, sender: tuple[str, int] | None, caption: str = "") -> None:
        self.say(when, sender, caption, photo=NOT_INCLUDED, width=1280, height=960)

    def sticker(self, when: datetime, sender: tuple[str, int] | None, emoji: str) -> None:
        fields = {"file": NOT_INCLUDED, "media_type": "sticker", "sticker_emoji": emoji, "width": 512, "height": 512}
        self.say(when, sender, "", **fields)

    def voice(self, when: datetime, sender: tuple[str, int] | None, seconds: int) -> None:
        fields = {"file": NOT_INCLUDED, "media_type": "voice_message", "mime_type": "audio/ogg"}
        self.say(when, sender, "", **fields, duration_seconds=seconds)

    def document(self, when: datetime, sender: tuple[str, int] | None, file_name: str, caption: str = "") -> None:
        self.say(when, sender, caption, file=NOT_INCLUDED, file_name=file_name, mime_type="application/pdf")

    def poll(self, when: datetime, sender: tuple[str, int] | None, question: str, answers: dict[str, int]) -> None:
        poll = {
            "question": question,
            "closed": False,
            "total_voters": sum(answers.values()),
            "answers": [{"text": a, "voters": n, "chosen": False} for a, n in answers.items()],
        }
        self.say(when, sender, "", poll=poll)

    def service(self, when: datetime, actor: tuple[str, int] | None, action: str, **fields: Any) -> None:
        name, uid = actor or self.owner
        msg = self._head(when, "service") | {"actor": name, "actor_id": f"user{uid}", "action": action, **fields}
        msg["text"], msg["text_entities"] = "", []
        self.messages.append(msg)

    def obj(self) -> dict[str, Any]:
        head: dict[str, Any] = {} if self.kind == "saved_messages" else {"name": self.name}
        return head | {"type": self.kind, "id": self.id, "messages": self.messages}

    def bytes(self) -> bytes:
        """This chat's own export ("Export chat history")."""
        return _dump(self.obj())


class TelegramAccount:
    """The account's export ("Export Telegram data"): its owner and chats."""

    def __init__(self, first_name: str, last_name: str, user_id: int, zone: tzinfo = UTC) -> None:
        self.first, self.last, self.user_id, self.zone = first_name, last_name, user_id, zone
        self.chats: list[TelegramChat] = []

    @property
    def me(self) -> tuple[str, int]:
        return (f"{self.first} {self.last}".strip(), self.user_id)

    def chat(self, name: str | None, kind: str, chat_id: int) -> TelegramChat:
        chat = TelegramChat(name, kind, chat_id, self.me, self.zone)
        self.chats.append(chat)
        return chat

    def bytes(self) -> bytes:
        return _dump(
            {
                "about": _ABOUT,
                "personal_information": {
                    "user_id": self.user_id,
                    "first_name": self.first,
                    "last_name": self.last,
                    "phone_number": "+49 170 0000000",
                    "username": "",
                    "bio": "",
                },
                "chats": {
                    "about": "This page lists all chats from this export.",
                    "list": [c.obj() for c in self.chats],
                },
                "left_chats": {"about": "This page lists all supergroups and channels from this export.", "list": []},
            }
        )


def _text(text: Text) -> tuple[str | list, list[dict[str, str]]]:
    """``text`` and ``text_entities`` as Telegram writes them: a plain string when the message
    has no entities, else the pieces with an object for each entity."""
    if isinstance(text, str):
        return text, [{"type": "plain", "text": text}] if text else []
    pieces: list[str | dict[str, str]] = []
    entities = []
    for piece in text:
        if isinstance(piece, str):
            pieces.append(piece)
            entities.append({"type": "plain", "text": piece})
        else:
            entity = {"type": piece[0], "text": piece[1]} | ({"href": piece[2]} if len(piece) > 2 else {})
            pieces.append(entity)
            entities.append(entity)
    return pieces, entities


def _dump(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
