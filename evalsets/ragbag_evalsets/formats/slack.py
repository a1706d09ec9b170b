"""Slack workspace exports as Slack's "Export data" writes them: ``users.json``, ``channels.json``
(public), ``groups.json`` (private), ``dms.json``, ``mpims.json``, and one folder per
conversation (named by channel name, by the ``mpdm-…`` name of a group DM, by the id of a DM)
holding one ``YYYY-MM-DD.json`` per UTC day: messages ``{type, user, text, ts, user_profile,
…}`` with ``ts`` strings, threads by ``thread_ts`` (the first message carries ``reply_count``
and ``replies``), files, and join lines. Text is Slack's mrkdwn: :func:`mention`, :func:`link`
and :func:`escape` write its references and entities.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime

from ragbag_evalsets.formats import FIXED, h

TEAM = "T0RAGB4G5"


def mention(user_id: str) -> str:
    return f"<@{user_id}>"


def link(url: str, label: str = "") -> str:
    return f"<{url}|{escape(label)}>" if label else f"<{url}>"


def escape(text: str) -> str:
    """Slack escapes exactly these three in message text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class SlackExport:
    """One workspace export; conversations are named by the folder :meth:`channel`, :meth:`dm`
    and :meth:`mpim` return."""

    def __init__(self, team: str = TEAM) -> None:
        self.team = team
        self.users: list[dict] = []
        self.lists: dict[str, list[dict]] = {"channels.json": [], "groups.json": [], "dms.json": [], "mpims.json": []}
        self.days: dict[str, dict[str, list[dict]]] = {}  # folder → day → messages
        self._stamps: dict[tuple[str, int], int] = {}

    def _id(self, prefix: str, *parts: object) -> str:
        return prefix + h(self.team, prefix, *parts, n=6).upper()[:10]

    def user(self, real_name: str, handle: str | None = None) -> str:
        uid = self._id("U", real_name)
        handle = handle or real_name.split()[0].lower()
        profile = {"real_name": real_name, "real_name_normalized": real_name, "display_name": handle, "team": self.team}
        self.users.append({"id": uid, "team_id": self.team, "name": handle, "real_name": real_name, "profile": profile})
        return uid

    def _profile(self, uid: str) -> dict:
        user = next(u for u in self.users if u["id"] == uid)
        return {"real_name": user["real_name"], "display_name": user["name"], "name": user["name"], "team": self.team}

    def channel(self, name: str, members: list[str], private: bool = False) -> str:
        cid = self._id("G" if private else "C", name)
        entry = {"id": cid, "name": name, "created": int(FIXED.timestamp()), "creator": members[0], "members": members}
        entry |= {"is_archived": False, "topic": {"value": ""}, "purpose": {"value": ""}}
        self.lists["groups.json" if private else "channels.json"].append(entry)
        return name

    def dm(self, a: str, b: str) -> str:
        cid = self._id("D", a, b)
        self.lists["dms.json"].append({"id": cid, "created": int(FIXED.timestamp()), "members": [a, b]})
        return cid

    def mpim(self, members: list[str]) -> str:
        handles = [next(u["name"] for u in self.users if u["id"] == m) for m in members]
        name = "mpdm-" + "--".join(handles) + "-1"
        entry = {"id": self._id("C", name), "name": name, "created": int(FIXED.timestamp()), "members": members}
        self.lists["mpims.json"].append(entry | {"creator": members[0], "is_archived": False})
        return name

    def _ts(self, folder: str, when: datetime) -> str:
        """``seconds.micro`` unique in the conversation, as Slack's ids are."""
        second = int(when.timestamp())
        n = self._stamps.get((folder, second), 0) + 1
        self._stamps[(folder, second)] = n
        return f"{second}.{n * 100:06d}"

    def record(self, folder: str, message: dict) -> dict:
        """Any message object as is, filed under the UTC day of its ``ts``."""
        day = f"{datetime.fromtimestamp(float(message['ts']), tz=UTC):%Y-%m-%d}"
        self.days.setdefault(folder, {}).setdefault(day, []).append(message)
        return message

    def say(
        self,
        folder: str,
        when: datetime,
        user: str,
        text: str,
        *,
        thread: str | None = None,
        files: Sequence[tuple[str, str]] = (),
    ) -> str:
        """A message (``text`` in mrkdwn) by ``user``; ``thread``: the ts of the message it
        replies to; ``files``: (name, title) of files shared with it. Returns its ts."""
        ts = self._ts(folder, when)
        msg: dict = {"client_msg_id": h(folder, ts), "type": "message", "text": text, "user": user, "ts": ts}
        msg |= {
            "team": self.team,
            "user_team": self.team,
            "source_team": self.team,
            "user_profile": self._profile(user),
        }
        if files:
            msg["files"] = []
            for name, title in files:
                fid = self._id("F", folder, ts, name)
                url = f"https://files.slack.com/files-pri/{self.team}-{fid}/{name}"
                msg["files"].append(
                    {
                        "id": fid,
                        "name": name,
                        "title": title,
                        "mimetype": "application/octet-stream",
                        "url_private": url,
                    }
                )
            msg["upload"] = True
        if thread:
            parent = next(m for day in self.days[folder].values() for m in day if m["ts"] == thread)
            msg |= {"thread_ts": thread, "parent_user_id": parent["user"]}
            parent["thread_ts"] = thread
            parent["reply_count"] = parent.get("reply_count", 0) + 1
            parent.setdefault("replies", []).append({"user": user, "ts": ts})
            parent["reply_users"] = sorted({r["user"] for r in parent["replies"]})
            parent["latest_reply"] = ts
        self.record(folder, msg)
        return ts

    def join(self, folder: str, when: datetime, user: str) -> str:
        ts = self._ts(folder, when)
        self.record(
            folder,
            {
                "type": "message",
                "subtype": "channel_join",
                "ts": ts,
                "user": user,
                "text": f"<@{user}> has joined the channel",
            },
        )
        return ts

    def files(self) -> dict[str, bytes]:
        """Relative path → bytes, as the export's zip holds them."""
        dump = lambda data: json.dumps(data, ensure_ascii=False, indent=4).encode("utf-8")  # noqa: E731
        out = {"users.json": dump(self.users)}
        out |= {name: dump(rows) for name, rows in self.lists.items() if rows}
        for folder, days in sorted(self.days.items()):
            for day, messages in sorted(days.items()):
                out[f"{folder}/{day}.json"] = dump(sorted(messages, key=lambda m: float(m["ts"])))
        return out

    def zip_bytes(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in self.files().items():
                zf.writestr(zipfile.ZipInfo(name, FIXED.timetuple()[:6]), data, zipfile.ZIP_DEFLATED)
        return buf.getvalue()
