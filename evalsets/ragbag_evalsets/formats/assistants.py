"""The AI assistants' exports: ChatGPT's ``conversations.json`` (a ``mapping`` tree of nodes, the
shown answer on the ``current_node`` path) and Claude's (a flat list of messages with content blocks)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from ragbag_evalsets.formats import h


def chatgpt_conv(
    title: str,
    start: datetime,
    turns: list[tuple[str, str]],
    model: str = "gpt-4o",
    dead_branch: tuple[int, str] | None = None,
) -> dict:
    """A conversation as ChatGPT exports it: a ``mapping`` tree from a root node, a hidden
    system message, then the turns; ``dead_branch=(i, text)`` adds an abandoned regenerated
    answer beside turn i (not on the ``current_node`` path)."""
    cid = str(uuid.UUID(bytes=bytes.fromhex(h("chatgpt", title))))
    t0 = start.timestamp()
    mapping: dict[str, dict] = {}

    def node(
        nid: str, parent: str | None, role: str | None, text, t: float, kind: str = "text", hidden: bool = False
    ) -> None:
        msg: dict | None = None
        if role is not None:
            content = (
                {"content_type": "code", "language": "python", "text": text}
                if kind == "code"
                else {"content_type": "text", "parts": [text]}
            )
            msg = {
                "id": nid,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": t if role != "system" else None,
                "update_time": None,
                "content": content,
                "status": "finished_successfully",
                "end_turn": True if role == "assistant" else None,
                "weight": 0.0 if hidden else 1.0,
                "metadata": (
                    {"is_visually_hidden_from_conversation": True}
                    if hidden
                    else {"model_slug": model}
                    if role == "assistant"
                    else {}
                ),
                "recipient": "all",
                "channel": None,
            }
        mapping[nid] = {"id": nid, "message": msg, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(nid)

    root = str(uuid.UUID(bytes=bytes.fromhex(h(cid, "root"))))
    node(root, None, None, None, t0)
    sys_id = str(uuid.UUID(bytes=bytes.fromhex(h(cid, "sys"))))
    node(sys_id, root, "system", "", t0, hidden=True)
    parent, t = sys_id, t0
    for i, (role, text) in enumerate(turns):
        t += 20 + (len(text) % 40) * 3
        nid = str(uuid.UUID(bytes=bytes.fromhex(h(cid, i))))
        if dead_branch and dead_branch[0] == i:
            dead = str(uuid.UUID(bytes=bytes.fromhex(h(cid, i, "dead"))))
            node(dead, parent, role, dead_branch[1], t - 5)
        kind = "text"
        if role == "assistant-code":
            role, kind = "assistant", "code"
        node(nid, parent, role, text, t, kind)
        parent = nid
    return {
        "title": title,
        "create_time": t0,
        "update_time": t,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": cid,
        "conversation_template_id": None,
        "gizmo_id": None,
        "gizmo_type": None,
        "is_archived": False,
        "safe_urls": [],
        "blocked_urls": [],
        "default_model_slug": model,
        "disabled_tool_ids": [],
        "id": cid,
    }


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond:06d}Z"


def claude_conv(name: str, start: datetime, turns: list, summary: str = "") -> dict:
    """A conversation as Claude exports it; a turn is (sender, text) or (sender, text,
    {"attachments": [...], "blocks": [...]})."""
    cid = str(uuid.UUID(bytes=bytes.fromhex(h("claude", name))))
    msgs, t = [], start
    for i, turn in enumerate(turns):
        sender, text = turn[0], turn[1]
        extra = turn[2] if len(turn) > 2 else {}
        t = t + timedelta(seconds=15 + (len(text) % 50) * 2)
        blocks = extra.get("blocks") or [{"type": "text", "text": text}]
        content = [
            dict(b, start_timestamp=_iso(t), stop_timestamp=_iso(t + timedelta(seconds=4)), citations=[])
            if b.get("type") == "text"
            else dict(b, start_timestamp=_iso(t), stop_timestamp=_iso(t))
            for b in blocks
        ]
        msgs.append(
            {
                "uuid": str(uuid.UUID(bytes=bytes.fromhex(h(cid, i)))),
                "text": text,
                "content": content,
                "sender": sender,
                "created_at": _iso(t),
                "updated_at": _iso(t),
                "attachments": extra.get("attachments", []),
                "files": extra.get("files", []),
            }
        )
    return {
        "uuid": cid,
        "name": name,
        "summary": summary,
        "created_at": _iso(start),
        "updated_at": _iso(t),
        "account": {"uuid": "5f0c2a4e-8d1b-4c7a-9e3f-1a2b3c4d5e6f"},
        "chat_messages": msgs,
    }
