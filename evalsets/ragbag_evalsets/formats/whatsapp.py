"""WhatsApp chats as the app's "Export chat" writes them: one text file a chat, a line a message
with the phone's local date and time. iOS writes ``_chat.txt`` in a zip named ``WhatsApp Chat -
<name>.zip`` (``[12/31/23, 9:41:05 PM] Anna: …``, U+202F before the day half, U+200E before what
the app wrote); Android writes ``WhatsApp Chat with <name>.txt`` (``31/12/2023, 21:41 - Anna:
…``, its events without a sender); a German Android phone ``31.12.23, 21:41 - …`` and German
notices."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from ragbag_evalsets.formats import FIXED

LRM = "\u200e"
Blob = bytes  # the type, inside a class whose method is named ``bytes`` like the other writers'


@dataclass(frozen=True)
class Style:
    """How one phone writes: the timestamp with its separator, and the app's phrases."""

    stamp: Callable[[datetime], str]
    encrypted: str
    media: Callable[[str, str], str]  # (kind, file name or "") → the message's text
    deleted: str
    deleted_mine: str
    edited: str
    created: str
    added: str


def _ios_stamp(t: datetime) -> str:
    half = "AM" if t.hour < 12 else "PM"
    return f"[{t.month}/{t.day}/{t:%y}, {t.hour % 12 or 12}:{t:%M:%S}\u202f{half}] "


STYLES = {
    "ios": Style(
        stamp=_ios_stamp,
        encrypted="Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, "
        "can read or listen to them.",
        media=lambda kind, file: f"{LRM}<attached: {file}>" if file else f"{LRM}{kind} omitted",
        deleted=f"{LRM}This message was deleted.",
        deleted_mine=f"{LRM}You deleted this message.",
        edited=f" {LRM}<This message was edited>",
        created="{who} created group “{name}”",
        added="{who} added {whom}",
    ),
    "android": Style(
        stamp=lambda t: f"{t:%d/%m/%Y, %H:%M} - ",
        encrypted="Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, "
        "can read or listen to them. Tap to learn more.",
        media=lambda kind, file: f"{file} (file attached)" if file else "<Media omitted>",
        deleted="This message was deleted",
        deleted_mine="You deleted this message",
        edited=" <This message was edited>",
        created='{who} created group "{name}"',
        added="{who} added {whom}",
    ),
    "android_de": Style(
        stamp=lambda t: f"{t:%d.%m.%y, %H:%M} - ",
        encrypted="Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt. Niemand außerhalb dieses Chats kann "
        "sie lesen oder anhören, nicht einmal WhatsApp. Tippe, um mehr zu erfahren.",
        media=lambda kind, file: f"{file} (Datei angehängt)" if file else "<Medien ausgeschlossen>",
        deleted="Diese Nachricht wurde gelöscht",
        deleted_mine="Du hast diese Nachricht gelöscht",
        edited=" <Diese Nachricht wurde bearbeitet>",
        created="{who} hat die Gruppe „{name}“ erstellt",
        added="{who} hat {whom} hinzugefügt",
    ),
}
_YOU = {"ios": "You", "android": "You", "android_de": "Du"}


class WhatsApp:
    """One exported chat. ``name``: the contact (direct chat) or the group; ``me``: the exporting
    user's name as the export writes it; ``zone``: the phone's zone, in which times are written."""

    def __init__(self, name: str, me: str, *, style: str = "ios", zone: str = "Europe/Berlin", group: bool = False):
        self.name, self.me, self.style, self.group = name, me, style, group
        self.zone = ZoneInfo(zone)
        self.lines: list[str] = []

    def _line(self, when: datetime, sender: str | None, text: str) -> None:
        if not self.lines:  # every export starts with the encryption notice, at the first message's time
            self.lines.append(self._app_line(when, STYLES[self.style].encrypted))
        self.lines.append(
            STYLES[self.style].stamp(when.astimezone(self.zone)) + (f"{sender}: " if sender else "") + text
        )

    def _app_line(self, when: datetime, text: str) -> str:
        """A line the app wrote: under the chat's name with the mark on iOS, without a sender on Android."""
        stamp = STYLES[self.style].stamp(when.astimezone(self.zone))
        return stamp + (f"{self.name}: {LRM}{text}" if self.style == "ios" else text)

    def _app(self, when: datetime, text: str) -> None:
        if not self.lines:
            self.lines.append(self._app_line(when, STYLES[self.style].encrypted))
        self.lines.append(self._app_line(when, text))

    def say(self, when: datetime, sender: str | None, text: str, edited: bool = False) -> None:
        """``sender``: a member's name, None for me; a text of several lines is written as the app does."""
        self._line(when, sender or self.me, text + (STYLES[self.style].edited if edited else ""))

    def media(self, when: datetime, sender: str | None, kind: str = "image", file: str = "") -> None:
        """A picture, video, … sent: its file's name when exported with media, else its kind."""
        self._line(when, sender or self.me, STYLES[self.style].media(kind, file))

    def deleted(self, when: datetime, sender: str | None) -> None:
        style = STYLES[self.style]
        self._line(when, sender or self.me, style.deleted_mine if sender is None else style.deleted)

    def created(self, when: datetime, members: list[str]) -> None:
        """I created the group and added ``members``."""
        you = _YOU[self.style]
        self._app(when, STYLES[self.style].created.format(who=you, name=self.name))
        for member in members:
            self._app(when, STYLES[self.style].added.format(who=you, whom=member))

    def file_name(self) -> str:
        return "_chat.txt" if self.style == "ios" else f"WhatsApp Chat with {self.name}.txt"

    def bytes(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode("utf-8")

    def zip_name(self) -> str:
        return f"WhatsApp Chat - {self.name}.zip"

    def zip_bytes(self, media: dict[str, Blob] | None = None) -> Blob:
        """The export zip: the chat's text and the media files beside it, with fixed stamps."""
        out = io.BytesIO()
        stamp = FIXED.timetuple()[:6]
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(zipfile.ZipInfo(self.file_name(), stamp), self.bytes())
            for name, data in sorted((media or {}).items()):
                zf.writestr(zipfile.ZipInfo(name, stamp), data)
        return out.getvalue()
