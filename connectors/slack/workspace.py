"""Who and where, from an export's workspace files: ``users.json`` (names), ``channels.json`` and
``groups.json`` (public and private channels, their folders named by channel name),
``mpims.json`` (group DMs, folders named ``mpdm-…``) and ``dms.json`` (DMs, folders named by
the DM's id). Each is optional: an export of public channels has no DM files, a hand-copied
folder may have none at all, and a conversation folder no file lists is still read (a DM id
``D…`` as a direct chat, ``mpdm-…`` as a group, anything else as a channel named by its folder).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ragbag.connectors._chat import ME
from ragbag.connectors._exports import load_json
from ragbag.connectors._isolate import each_record, reason
from ragbag.core.records import ReadError
from ragbag.text.unreadable import Unreadable

USERS = "users.json"
CHANNELS = "channels.json"
GROUPS = "groups.json"
MPIMS = "mpims.json"
DMS = "dms.json"
# Workspace files an export holds beside its conversation folders: read for names, or (the
# rest) about integrations, canvases and org members, never conversations.
META = frozenset(
    {
        USERS,
        CHANNELS,
        GROUPS,
        MPIMS,
        DMS,
        "integration_logs.json",
        "canvases.json",
        "org_users.json",
        "file_conversations.json",
    }
)
_DM_ID = re.compile(r"^D[A-Z0-9]{6,}$")


@dataclass(frozen=True)
class Chat:
    chat_id: str
    name: str  # "#general", the other person of a DM, the members of a group DM
    is_group: bool


@dataclass
class Workspace:
    users: dict[str, str] = field(default_factory=dict)  # user id → name
    user_keys: dict[str, set[str]] = field(default_factory=dict)  # user id → what `me` may name it by
    channels: dict[str, str] = field(default_factory=dict)  # channel id → name
    chats: dict[str, Chat] = field(default_factory=dict)  # conversation folder → chat
    me: str = ""  # the `me` option, casefolded ("" when unset)

    def is_me(self, uid: str, name: str = "") -> bool:
        """Whether a user id (or, with no id, a name) is the exporting user named by ``me``."""
        if not self.me:
            return False
        if uid and (uid.casefold() == self.me or self.me in self.user_keys.get(uid, ())):
            return True
        return bool(name) and name.casefold() == self.me

    def user(self, uid: str) -> str:
        return self.users.get(uid, uid)

    def channel(self, cid: str) -> str:
        return self.channels.get(cid, cid)

    def chat(self, folder: str) -> Chat:
        """The chat a conversation folder holds; one no workspace file lists is named by its
        folder: a DM id (``D…``) is a direct chat, ``mpdm-…`` a group DM, the rest channels."""
        found = self.chats.get(folder)
        if found:
            return found
        if _DM_ID.match(folder):
            return Chat(folder, folder, False)
        if folder.startswith("mpdm-"):
            return Chat(folder, folder, True)
        return Chat(folder, f"#{folder}", True)


def obj(value: Any) -> dict:
    """``value`` if it is a JSON object, else an empty one (exports leave fields out or null)."""
    return value if isinstance(value, dict) else {}


def scalar(value: Any) -> str:
    """A JSON string or number as one line of text; "" for anything else (null, lists, objects
    where a name belongs)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    return " ".join(str(value).split())


def user_name(user: dict) -> str:
    """A user's name as people know it: the profile's real name, else the display name, else
    the handle."""
    profile = obj(user.get("profile"))
    for value in (
        profile.get("real_name"),
        user.get("real_name"),
        profile.get("display_name"),
        user.get("name"),
        profile.get("name"),
    ):
        name = scalar(value)
        if name:
            return name
    return ""


def load_workspace(read: dict[str, Any], me: str) -> tuple[Workspace, list[ReadError]]:
    """The workspace of one export root. ``read`` maps each workspace file's name to
    ``(uri, bytes-getter)``; a file that cannot be parsed is reported once, an entry that fails
    alone (``file#index``), and the rest of the export is still read (names then stay ids)."""
    ws = Workspace(me=" ".join(me.split()).casefold())
    errors: list[ReadError] = []

    def each(name: str, add: Any) -> None:
        if name not in read:
            return
        uri, get = read[name]
        try:
            data = load_json(get())
        except Exception as exc:  # noqa: BLE001 — the boundary: a workspace file fails alone
            errors.append(ReadError(uri, f"{reason(exc)}: names from it are left as ids"))
            return
        if isinstance(data, dict):  # an API-style wrapper ({"members": [...]}, {"channels": [...]})
            data = next((v for v in data.values() if isinstance(v, list)), [])
        if not isinstance(data, list):
            errors.append(ReadError(uri, f"not a Slack {name}: expected a list of objects"))
            return
        for index, row in enumerate(data):
            # The isolation boundary: whatever one entry holds fails that entry alone.
            done = each_record(f"{uri}#{index}", _entry, add, row)
            if isinstance(done, ReadError):
                errors.append(done)

    def user(u: dict) -> None:
        uid = scalar(u.get("id"))
        if uid:
            name = user_name(u)
            if name:
                ws.users[uid] = name
            profile = obj(u.get("profile"))
            keys = (u.get("name"), u.get("real_name"), profile.get("real_name"), profile.get("display_name"))
            ws.user_keys[uid] = {scalar(k).casefold() for k in keys if scalar(k)}

    def channel(c: dict) -> None:
        cid, name = scalar(c.get("id")), scalar(c.get("name"))
        if cid and name:
            ws.channels[cid] = name
            ws.chats[name] = Chat(cid, f"#{name}", True)

    def mpim(m: dict) -> None:
        cid, name = scalar(m.get("id")), scalar(m.get("name"))
        if cid and name:
            ws.chats[name] = Chat(cid, _members(ws, m.get("members")) or name, True)

    def dm(d: dict) -> None:
        cid = scalar(d.get("id"))
        if cid:
            ws.chats[cid] = Chat(cid, _members(ws, d.get("members")) or cid, False)

    each(USERS, user)
    each(CHANNELS, channel)
    each(GROUPS, channel)
    each(MPIMS, mpim)
    each(DMS, dm)
    return ws, errors


def _entry(add: Any, row: Any) -> None:
    if not isinstance(row, dict):
        raise Unreadable(f"not an object ({type(row).__name__})")
    add(row)


def _members(ws: Workspace, members: Any) -> str:
    """The names of a DM's members other than me (all of them when ``me`` is not set; Me for a
    note to self)."""
    ids = [scalar(m) for m in members if scalar(m)] if isinstance(members, list) else []
    others = [ws.user(m) for m in ids if not ws.is_me(m, ws.user(m))]
    if not others and ids:
        return ME
    return ", ".join(others)
