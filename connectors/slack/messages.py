"""The messages of one day file: records made :class:`Post` s (who, when, the words, the thread
they belong to), with the export's edit and deletion events applied and system lines dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ragbag.connectors._chat import ME, Message, parse_time
from ragbag.connectors._isolate import each_record
from ragbag.connectors.slack.mrkdwn import attachment_lines, blocks_text, file_lines, mrkdwn
from ragbag.connectors.slack.workspace import Workspace, obj, scalar, user_name
from ragbag.core.records import ReadError
from ragbag.text.unreadable import Unreadable, one_line

# Subtypes that record something happening to the conversation, not something said in it:
# joins and leaves, topic/purpose/name changes, archiving, pins, apps and bots added, huddles
# started, and the placeholders of deleted messages (``tombstone``) and of thread replies
# (``message_replied``). Every other subtype (bot_message, file_share, thread_broadcast,
# me_message, reminder_add, slackbot_response…) is read when it has words.
SYSTEM = frozenset(
    {
        "channel_join",
        "channel_leave",
        "channel_topic",
        "channel_purpose",
        "channel_name",
        "channel_archive",
        "channel_unarchive",
        "channel_convert_to_private",
        "channel_convert_to_public",
        "channel_posting_permissions",
        "channel_canvas_updated",
        "group_join",
        "group_leave",
        "group_topic",
        "group_purpose",
        "group_name",
        "group_archive",
        "group_unarchive",
        "pinned_item",
        "unpinned_item",
        "bot_add",
        "bot_remove",
        "bot_enable",
        "bot_disable",
        "app_conversation_join",
        "app_conversation_leave",
        "sh_room_created",
        "huddle_thread",
        "joiner_notification",
        "joiner_notification_for_inviter",
        "ekm_access_denied",
        "message_replied",
        "tombstone",
    }
)
CHANGED, DELETED = "message_changed", "message_deleted"


@dataclass
class Post:
    ts: str  # Slack's id of the message in its conversation ("1700000000.000200")
    thread_ts: str | None  # the thread it replies in; None for a message of the channel itself
    replies: int  # replies in its thread (a thread's parent)
    message: Message
    stamp: float  # the newest of its time and its last edit's (the newest copy of a window wins)

    @property
    def when(self) -> datetime:
        return self.message.when


def posts(records: list, uri: str, ws: Workspace) -> tuple[list[Post], list[ReadError]]:
    """The readable messages of a day file in time order, and a ReadError per bad record
    (``uri#ts``, or ``uri#index`` without a ts). ``message_changed`` events replace the message
    they name (or stand for it when the file lacks it), ``message_deleted`` ones remove it."""
    errors: list[ReadError] = []
    kept: dict[str, dict] = {}
    changes: list[dict] = []
    deleted: set[str] = set()
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            errors.append(ReadError(f"{uri}#{index}", f"not a message object ({type(record).__name__})"))
            continue
        subtype = record.get("subtype")
        if subtype == CHANGED and isinstance(record.get("message"), dict):
            changes.append(record)
        elif subtype == DELETED:
            deleted.add(str(record.get("deleted_ts") or obj(record.get("previous_message")).get("ts") or ""))
        elif not _ts(record.get("ts")):
            errors.append(ReadError(f"{uri}#{index}", f"no usable ts ({one_line(repr(record.get('ts')))})"))
        else:
            kept.setdefault(str(record["ts"]).strip(), record)  # a repeated ts: the first copy
    for change in sorted(changes, key=lambda c: _ts(c.get("ts")) or 0.0):
        new = change["message"]
        ts = str(new.get("ts") or "").strip()
        if _ts(ts):
            kept[ts] = {**kept.get(ts, {}), **new}
    local = _profile_names(kept.values())
    out: list[Post] = []
    for ts, record in kept.items():
        if ts in deleted:
            continue
        # The isolation boundary: whatever one message holds fails that message alone.
        post = each_record(f"{uri}#{ts}", _post, ts, record, ws, local)
        if isinstance(post, ReadError):
            errors.append(post)
        elif post is not None:
            out.append(post)
    out.sort(key=lambda p: float(p.ts))
    return out, errors


def _ts(value: Any) -> float | None:
    try:
        ts = float(str(value).strip())
    except ValueError:
        return None
    return ts if ts > 0 and ts == ts else None


def _profile_names(records: Any) -> dict[str, str]:
    """Names of users the workspace files may not list (guests of a shared channel, an export
    without users.json), from the ``user_profile`` each of their messages carries."""
    out: dict[str, str] = {}
    for r in records:
        if isinstance(r.get("user_profile"), dict) and r.get("user"):
            name = user_name(r["user_profile"])
            if name:
                out.setdefault(str(r["user"]), name)
    return out


def _post(ts: str, record: dict, ws: Workspace, local: dict[str, str]) -> Post | None:
    """A readable message, None for what is dropped on purpose (system lines, no words)."""
    when = parse_time(ts)
    if when is None:
        raise Unreadable(f"no usable ts ({one_line(repr(ts))})")
    if record.get("subtype") in SYSTEM:
        return None
    user = lambda uid: ws.users.get(uid) or local.get(uid) or uid  # noqa: E731
    raw = record.get("text")
    if raw is not None and not isinstance(raw, str):
        raise Unreadable(f"text is a {type(raw).__name__}, not text")
    body = mrkdwn(raw, user, ws.channel).strip()
    if not body:
        body = blocks_text(record.get("blocks"), user, ws.channel).strip()
    lines = [body] if body else []
    lines += [a for a in attachment_lines(record.get("attachments"), user, ws.channel) if a not in lines]
    lines += file_lines(record)
    words = "\n".join(lines).strip()
    if not words:
        return None
    # An old export's file_comment names its author only in its comment.
    uid = scalar(record.get("user")) or scalar(obj(record.get("comment")).get("user"))
    sender = _sender(record, uid, user)
    mine = ws.is_me(uid, sender)
    thread_ts = scalar(record.get("thread_ts")) or None
    replies = record.get("reply_count")
    if not isinstance(replies, int) or isinstance(replies, bool):
        replies = len(record["replies"]) if isinstance(record.get("replies"), list) else 0
    stamp = max(float(ts), _ts(obj(record.get("edited")).get("ts")) or 0.0)
    return Post(
        ts=ts,
        thread_ts=thread_ts if thread_ts and thread_ts != ts else None,
        replies=replies,
        message=Message(when, ME if mine else sender, words, mine),
        stamp=stamp,
    )


def _sender(record: dict, uid: str, user: Any) -> str:
    """A person by name; an app or integration by its bot profile's name or the username it
    posted as (a webhook's), else its ids."""
    if uid and user(uid) != uid:
        return str(user(uid))
    bot = obj(record.get("bot_profile"))
    for value in (bot.get("name"), record.get("username"), uid, record.get("bot_id")):
        name = " ".join(str(value or "").split())
        if name:
            return name
    return "?"
