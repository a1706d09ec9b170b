"""A Slack message's words as a reader sees them: Slack's ``mrkdwn`` markup resolved, rich-text
blocks walked when a message has no ``text``, attachments and files reduced to a line each.

Slack escapes only ``&``, ``<`` and ``>`` in message text and writes everything that points
elsewhere as an angle-bracket token (its "mrkdwn" reference): ``<@U123>`` a user,
``<#C123|general>`` a channel, ``<!here>`` a broadcast, ``<!subteam^S1|@team>`` a user group,
``<!date^…|fallback>`` a date, ``<https://x|label>`` a link. Tokens are resolved before the
three entities are unescaped, so a ``&lt;`` that a user typed never reads as a token.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ragbag.connectors.slack.workspace import scalar

Names = Callable[[str], str]  # a user or channel id → its name (the id itself when unknown)

_TOKEN = re.compile(r"<([^<>]*)>")
_BROADCASTS = {"here", "channel", "everyone"}


def unescape(text: str) -> str:
    """Slack's three entities; ``&amp;`` last so that ``&amp;lt;`` stays the text ``&lt;``."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def mrkdwn(text: Any, user: Names, channel: Names) -> str:
    """Message text with its tokens resolved: ``@Name``, ``#channel``, ``@here``, a link as
    ``label (url)`` (the url alone when the label only repeats it), entities unescaped."""
    if not isinstance(text, str):
        return ""
    return unescape(_TOKEN.sub(lambda m: _token(m.group(1), user, channel), text))


def _token(inner: str, user: Names, channel: Names) -> str:
    target, _, label = inner.partition("|")
    if target.startswith("@"):
        uid = target[1:]
        name = user(uid)
        return "@" + (label if name == uid and label else name)
    if target.startswith("#"):
        cid = target[1:]
        name = channel(cid)
        return "#" + (label if name == cid and label else name)
    if target.startswith("!"):
        command = target[1:]
        if command in _BROADCASTS:
            return "@" + command
        if label:  # subteams (@team), dates (their fallback text), anything else Slack labels
            return label
        return "@" + command.split("^", 1)[0]
    return link(target, label)


def link(url: str, label: str = "") -> str:
    """``label (url)``, or the url alone when there is no label or it only repeats the url; a
    ``mailto:`` link is its address."""
    label = label.strip()
    shown = url[len("mailto:") :] if url.startswith("mailto:") else url
    if not label or _bare(label) == _bare(url):
        return shown
    return f"{label} ({shown})"


def _bare(url: str) -> str:
    for prefix in ("mailto:", "https://", "http://"):
        if url.startswith(prefix):
            url = url[len(prefix) :]
    return url.rstrip("/")


# --- rich-text and layout blocks ---------------------------------------------------------------


def blocks_text(blocks: Any, user: Names, channel: Names) -> str:
    """The words of a message's ``blocks``: rich text (sections, lists, quotes, code), and the
    section/header/context blocks apps post. Read only when the message has no ``text``:
    otherwise the blocks repeat it."""
    out: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "rich_text":
            out.append(_rich(block.get("elements"), user, channel))
        elif kind in ("section", "header"):
            out.append(_layout_text(block.get("text"), user, channel))
            fields = block.get("fields")
            for item in fields if isinstance(fields, list) else []:
                out.append(_layout_text(item, user, channel))
        elif kind == "context":
            elements = block.get("elements")
            out += (
                [_layout_text(e, user, channel) for e in elements if isinstance(e, dict)]
                if isinstance(elements, list)
                else []
            )
    return "\n".join(part for part in out if part.strip())


def _layout_text(obj: Any, user: Names, channel: Names) -> str:
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return ""
    return mrkdwn(obj["text"], user, channel) if obj.get("type") == "mrkdwn" else obj["text"]


def _rich(elements: Any, user: Names, channel: Names) -> str:
    lines: list[str] = []
    for el in elements if isinstance(elements, list) else []:
        if not isinstance(el, dict):
            continue
        if el.get("type") == "rich_text_list":
            indent = "  " * int(el.get("indent") or 0)
            items = el.get("elements")
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict):
                    lines.append(f"{indent}- {_inline(item.get('elements'), user, channel)}")
        else:  # rich_text_section, rich_text_quote, rich_text_preformatted
            lines.append(_inline(el.get("elements"), user, channel))
    return "\n".join(lines)


def _inline(elements: Any, user: Names, channel: Names) -> str:
    out: list[str] = []
    for el in elements if isinstance(elements, list) else []:
        if not isinstance(el, dict):
            continue
        kind = el.get("type")
        if kind == "text":
            out.append(str(el.get("text") or ""))
        elif kind == "link":
            out.append(link(str(el.get("url") or ""), str(el.get("text") or "")))
        elif kind == "user":
            out.append("@" + user(str(el.get("user_id") or "")))
        elif kind == "channel":
            out.append("#" + channel(str(el.get("channel_id") or "")))
        elif kind == "emoji":
            out.append(f":{el.get('name')}:")
        elif kind == "broadcast":
            out.append("@" + str(el.get("range") or ""))
        elif kind == "usergroup":
            out.append("@" + str(el.get("usergroup_id") or ""))
        elif kind == "date":
            out.append(str(el.get("fallback") or ""))
        elif kind == "color":
            out.append(str(el.get("value") or ""))
    return "".join(out)


# --- attachments and files ---------------------------------------------------------------------


def attachment_lines(attachments: Any, user: Names, channel: Names) -> list[str]:
    """A line per attachment worth reading: a shared message as ``[shared] author: text``, a
    link preview as ``[link] title`` (its page text is the site's, not the conversation's), an
    app's attachment as its pretext, title, text and fields (its ``fallback`` when it has
    none of these)."""
    lines: list[str] = []
    for att in attachments if isinstance(attachments, list) else []:
        if not isinstance(att, dict):
            continue
        part = lambda key, att=att: mrkdwn(att.get(key), user, channel).strip()  # noqa: E731
        if att.get("is_msg_unfurl") or att.get("is_share"):
            author = scalar(att.get("author_name")) or scalar(att.get("author_subname"))
            body = part("text") or part("fallback")
            if body:
                lines.append(f"[shared] {author}: {body}" if author else f"[shared] {body}")
        elif att.get("from_url") or att.get("original_url"):
            title = part("title") or part("fallback")
            if title:
                lines.append(f"[link] {title}")
        else:
            parts = [part("pretext"), part("title"), part("text")]
            fields = att.get("fields")
            for f in fields if isinstance(fields, list) else []:
                if isinstance(f, dict):
                    value = mrkdwn(f.get("value"), user, channel).strip()
                    name = scalar(f.get("title"))
                    parts.append(f"{name}: {value}" if name and value else name or value)
            body = "\n".join(p for p in parts if p) or part("fallback")
            if body:
                lines.append(body)
    return lines


def file_lines(record: dict) -> list[str]:
    """``[file] title (name)`` per shared file (``files``, or an old export's single ``file``);
    deleted files (``mode: tombstone``) and those a free plan hides are left out."""
    files = record.get("files")
    if not isinstance(files, list):
        files = [record["file"]] if isinstance(record.get("file"), dict) else []
    lines = []
    for f in files:
        if not isinstance(f, dict) or f.get("mode") in ("tombstone", "hidden_by_limit"):
            continue
        name = scalar(f.get("name"))
        title = scalar(f.get("title")) or name
        if title:
            lines.append(f"[file] {title} ({name})" if name and name != title else f"[file] {title}")
    return lines
