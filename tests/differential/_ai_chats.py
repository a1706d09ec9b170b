"""What the chatgpt and claude differential modules share: the comparison of ragbag's
conversations with a reference reading (a plain walk of the export's JSON, see each module).

Checks, as (agree, compared): ``count`` (per conversation the reference finds with text, ragbag
has a document of that id), ``times`` (its ``created_at`` is the conversation's creation time),
``people`` (the roles that speak, user and assistant, are the same), ``text`` (per reference
message, its first non-empty line is in ragbag's text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tests.differential.common import Outcome, ragbag_read, rel


@dataclass
class Conversation:
    created: datetime | None
    messages: list[tuple[str, str]] = field(default_factory=list)  # (role, text)


def when(value) -> datetime | None:
    """Epoch seconds or an ISO string, as an aware UTC datetime."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str) and value:
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC)
    return None


def conversations(path: Path) -> list:
    data = json.loads(path.read_bytes().decode("utf-8-sig"))
    if isinstance(data, dict):
        data = data["conversations"] if isinstance(data.get("conversations"), list) else [data]
    return [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []


def compare(connector: str, path: Path, ref: dict[str, Conversation]) -> Outcome:
    docs, errors = ragbag_read(connector, path)
    mine = {d.native_id: d for d in docs}
    ref = {k: c for k, c in ref.items() if any(t.strip() for _, t in c.messages)}
    out = Outcome(rel(path), path.parent.name, len(ref), len(docs), len(errors))
    counted = timed = people = texts = total = 0
    for conv_id, conv in ref.items():
        lines = [next(ln.strip() for ln in t.splitlines() if ln.strip()) for _, t in conv.messages if t.strip()]
        total += len(lines)
        doc = mine.get(conv_id)
        if doc is None:
            out.disagreements.append(f"conversation {conv_id} missing in ragbag")
            continue
        counted += 1
        if conv.created is None or doc.created_at == conv.created:
            timed += 1
        else:
            out.disagreements.append(f"{conv_id}: created {doc.created_at}, reference {conv.created}")
        roles = {r for r, t in conv.messages if t.strip()}
        if roles == set(doc.metadata.get("roles") or _roles(doc.text)):
            people += 1
        else:
            out.disagreements.append(f"{conv_id}: roles {sorted(_roles(doc.text))}, reference {sorted(roles)}")
        for line in lines:
            if line in doc.text:
                texts += 1
            else:
                out.disagreements.append(f"{conv_id}: message line not in ragbag's text: {line[:60]!r}")
    out.disagreements += [f"conversation {i} only in ragbag" for i in mine if i not in ref]
    out.checks = {
        "count": (counted, max(len(ref), len(mine))),
        "times": (timed, len(ref)),
        "people": (people, len(ref)),
        "text": (texts, total),
    }
    return out


def _roles(text: str) -> set[str]:
    return {
        "user" if p.startswith("User: ") else "assistant"
        for p in text.split("\n\n")
        if p.startswith(("User: ", "Assistant: "))
    }
