"""Mail, differentially: ragbag's mail connector against the standard library's own reading.

The reference reader is the standard library alone: ``email`` with ``policy.default`` for one
message, ``mailbox.mbox`` for a file whose first line is a ``From `` postmark. Per file it
gives the messages (those with any of From, To, Subject, Date, Message-ID), and per message
its Date in UTC, sender and recipient addresses, and a distinctive stretch of its body (the
longest of its first unquoted lines of the plain body, else of the HTML body as text via
``html.parser``). ragbag's documents are paired with the reference's messages by Message-ID
(in order among equal ids), messages without one in file order.

Checks, as (agree, compared):

- ``count``: per file, ragbag's documents equal the reference's messages;
- ``times``: per paired message with a reference Date, ``created_at`` is that instant;
- ``people``: per paired message, the sender and the set of To+Cc addresses are the same;
- ``text``: per paired message with a distinctive body stretch, that stretch (whitespace
  collapsed) is in ragbag's text.

Every file where they differ is in :data:`EXPLAINED` (why, and why ragbag's reading is right or
acceptable), grouped by class in ``tests/fixtures/public/mail/README.md``.
"""

from __future__ import annotations

import email
import mailbox
import re
from datetime import UTC
from email import policy
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path

from tests.differential.common import FIXTURES, PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "mail"
CORPUS = PUBLIC / "mail"
REALWORLD = FIXTURES / "realworld" / "mail"
_HEADERS = ("from", "to", "subject", "date", "message-id")
_MIN_STRETCH = 24  # characters: shorter lines ("Hi Bob,") say too little to be distinctive


def units() -> list[Path]:
    """Every file of the public mail corpus and of the real-world mail fixtures."""
    public = [p for p in CORPUS.rglob("*") if p.is_file() and p.name not in ("SOURCES.tsv", "README.md")]
    return sorted(public) + sorted(p for p in REALWORLD.rglob("*") if p.is_file())


def project(path: Path) -> str:
    return Path(rel(path)).parts[2]


def compare(path: Path) -> Outcome:
    docs, errors = ragbag_read(CONNECTOR, path)
    ref = reference(path)
    out = Outcome(rel(path), project(path), len(ref), len(docs), len(errors))
    out.checks["count"] = (int(len(ref) == len(docs)), 1)
    if len(ref) != len(docs):
        out.disagreements.append(f"count: reference {len(ref)} messages, ragbag {len(docs)} documents")
    agree = {"times": [0, 0], "people": [0, 0], "text": [0, 0]}
    for i, (r, d) in enumerate(pair(ref, docs)):
        if r["date"] is not None:
            agree["times"][1] += 1
            if d.created_at is not None and d.created_at == r["date"]:
                agree["times"][0] += 1
            else:
                out.disagreements.append(f"times #{i}: reference {r['date']}, ragbag {d.created_at}")
        agree["people"][1] += 1
        mine = (d.metadata.get("from", ""), frozenset(d.metadata.get("to", []) + d.metadata.get("cc", [])))
        theirs = (r["from"], r["rcpt"])
        if mine == theirs:
            agree["people"][0] += 1
        else:
            out.disagreements.append(f"people #{i}: reference {_show(theirs)}, ragbag {_show(mine)}")
        if r["stretch"]:
            agree["text"][1] += 1
            if r["stretch"] in _squash(d.text):
                agree["text"][0] += 1
            else:
                out.disagreements.append(f"text #{i}: {r['stretch']!r} not in ragbag's text")
    out.checks.update({k: (v[0], v[1]) for k, v in agree.items()})
    return out


# --- the reference reading -----------------------------------------------------------------


def reference(path: Path) -> list[dict]:
    """The messages of ``path`` as the standard library reads them."""
    with open(path, "rb") as fh:
        first = fh.readline()
    if first.startswith(b"From "):
        box = mailbox.mbox(
            path, factory=lambda f: email.message_from_binary_file(f, policy=policy.default), create=False
        )
        try:
            messages = [box[key] for key in box.keys()]
        finally:
            box.close()
    else:
        messages = [email.message_from_bytes(path.read_bytes(), policy=policy.default)]
    return [_facts(m) for m in messages if any(_get(m, h) is not None for h in _HEADERS)]


def _get(msg, name: str):
    try:
        return msg[name]
    except Exception:  # noqa: BLE001 — a header the policy cannot parse counts as absent
        return None


def _facts(msg: EmailMessage) -> dict:
    date = _get(msg, "date")
    when = getattr(date, "datetime", None)
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 5322 "-0000": UTC, zone unknown
    sender = _addresses(msg, "from")
    return {
        "id": str(_get(msg, "message-id") or "").strip().strip("<>").strip(),
        "date": when.astimezone(UTC) if when is not None else None,
        "from": sender[0] if sender else "",
        "rcpt": frozenset(_addresses(msg, "to") + _addresses(msg, "cc")),
        "stretch": _stretch(msg),
    }


def _addresses(msg, name: str) -> list[str]:
    out: list[str] = []
    for value in msg.get_all(name, []) if _get(msg, name) is not None else []:
        for addr in getattr(value, "addresses", ()):
            # Raw 8-bit bytes stay lone surrogates in the standard library's reading: read as
            # UTF-8 (else U+FFFD) so that they compare with text at all.
            spec = addr.addr_spec.encode("utf-8", "surrogateescape").decode("utf-8", "replace").lower()
            spec = spec if addr.username else ""
            if spec and spec not in out:
                out.append(spec)
    return out


def _stretch(msg: EmailMessage) -> str:
    """The longest of the first ten unquoted body lines (not ``>`` lines, not an attribution
    "... wrote:", not after the ``-- `` signature line) of at least ``_MIN_STRETCH``
    characters, whitespace collapsed; '' when the body has none."""
    try:
        part = msg.get_body(preferencelist=("plain", "html"))
        text = part.get_content() if part is not None else ""
    except Exception:  # noqa: BLE001 — an undecodable body has nothing to compare
        return ""
    if part is None or not isinstance(text, str):
        return ""
    if part.get_content_type() == "text/html":
        text = _html_text(text)
    lines = []
    for line in text.splitlines():
        if line in ("--", "-- "):
            break  # the signature: ragbag trims it by design
        line = _squash(line)
        if line.startswith(">") or re.search(r"(wrote|schrieb|a écrit)\s?:$", line):
            continue  # a quoted earlier message: ragbag trims it by design
        if len(line) >= _MIN_STRETCH:
            lines.append(line)
        if len(lines) == 10:
            break
    return max(lines, key=len)[:80] if lines else ""


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "head", "title"):
            self.skip += 1
        elif tag in ("br", "p", "div", "tr", "li", "h1", "h2", "h3", "table", "blockquote"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "head", "title"):
            self.skip = max(0, self.skip - 1)
        elif tag in ("p", "div", "tr", "li", "h1", "h2", "h3", "table", "blockquote"):
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def _html_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _show(people: tuple[str, frozenset]) -> str:
    return f"{people[0] or '-'} → {sorted(people[1])}"


# --- pairing -------------------------------------------------------------------------------


def pair(ref: list[dict], docs: list) -> list[tuple[dict, object]]:
    """(reference message, ragbag document) pairs: by Message-ID, in order among equal ids;
    messages without an id in file order."""
    by_id: dict[str, list] = {}
    for d in docs:
        by_id.setdefault(d.metadata.get("message_id", ""), []).append(d)
    out = []
    for r in ref:
        queue = by_id.get(r["id"], [])
        if queue:
            out.append((r, queue.pop(0)))
    return out


# Files where the readings differ, relative to tests/fixtures: why, and why ragbag's reading is
# right or acceptable. Grouped by class in tests/fixtures/public/mail/README.md.
EXPLAINED: dict[str, str] = {}
