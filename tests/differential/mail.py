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
    read, errors = ragbag_read(CONNECTOR, path)
    docs = [d for d in read if "parent_doc_id" not in d.metadata]  # the messages
    attached = [d for d in read if "parent_doc_id" in d.metadata]  # their attachments' documents
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
    # Each attachment document names a file the standard library finds attached to its message.
    parents = {d.doc_id: r for r, d in pair(ref, docs)}
    found = 0
    for a in attached:
        r = parents.get(a.metadata["parent_doc_id"])
        named, unnamed = r["attachments"] if r is not None else (set(), set())
        if a.metadata.get("filename") in named or a.metadata.get("mime") in unnamed:
            found += 1
        else:
            out.disagreements.append(f"attachments: {a.metadata.get('filename')!r} is not attached to its message")
    if attached:
        out.checks["attachments"] = (found, len(attached))
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
        "attachments": _attachment_names(msg),
    }


def _attachment_names(msg: EmailMessage) -> tuple[set[str], set[str]]:
    """(the file names of the message's parts that declare one, the types of those that do not
    but are attachments all the same: an attached message, an ``attachment`` disposition)."""
    names, types = set(), set()
    for part in msg.walk():
        try:
            name = part.get_filename()
        except Exception:  # noqa: BLE001 — a parameter the policy cannot parse
            name = None
        if name:
            names.add(" ".join(str(name).split()))
        elif part.get_content_type() == "message/rfc822" or part.get_content_disposition() == "attachment":
            types.add(part.get_content_type())
    return names, types


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
_WRONG_LABEL = (
    "charset label wrong for the bytes: the reference decodes strictly in the declared charset "
    "and gets U+FFFD; ragbag reads the text as written"
)
EXPLAINED: dict[str, str] = {
    # Charset labels that lie: ragbag's reading is the text as written.
    "public/mail/mail-parser/tests__mails__mail_test_12": _WRONG_LABEL + " (UTF-8 body labelled GB2312)",
    "realworld/mail/mail-parser/mail_test_12": _WRONG_LABEL + " (UTF-8 body labelled GB2312)",
    "public/mail/mail-parser/tests__mails__mail_test_9": _WRONG_LABEL
    + " (GBK-only characters labelled GB2312: read as GB18030, its superset)",
    "realworld/mail/mail-parser/mail_test_9": _WRONG_LABEL + " (GBK-only characters labelled GB2312)",
    "public/mail/enmime/testdata__low-quality__incorrect-charset.raw": _WRONG_LABEL + " (UTF-8 labelled us-ascii)",
    "public/mail/mu/testdata__testdir2__bar__cur__mail2": _WRONG_LABEL + " (a UTF-8 em dash labelled us-ascii)",
    # Raw 8-bit bytes in an address: the reference keeps them as surrogates (compared as U+FFFD).
    "public/mail/flanker/tests__fixtures__messages__mailformed-headers.eml": (
        "a raw 0xB4 byte in a To: address: not UTF-8, so U+FFFD in the reference; ragbag's "
        "detector reads it as cp1252 '´' (the byte's Latin reading)"
    ),
    # Address headers the standard library parses differently.
    "public/mail/mail-parser/tests__mails__mail_test_19": (
        "'From: alice@example.com <bob@example.com>': the address is the one in angle brackets "
        "(RFC 5322 name-addr), the bare one before it a display name; policy.default takes alice "
        "as the sender and eve (not frank) in Cc"
    ),
    "public/mail/MimeKit/UnitTests__TestData__messages__issue358.txt": (
        "a folded address the standard library cuts at the fold ('jang.abcdef@xyzlinu'); ragbag "
        "unfolds the field first and reads the whole address"
    ),
    "public/mail/enmime/testdata__mail__qp-utf8-header-recursed.raw": (
        "From: holds two mailboxes, one with a malformed encoded word: policy.default gives up on "
        "the field (no sender); ragbag keeps the first mailbox as the sender"
    ),
    "public/mail/MimeKit/UnitTests__TestData__messages__stack-overflow.txt": (
        "To: nests comments until email.utils' address parser recurses out; ragbag falls back to "
        "the address-like tokens of that field (test@test.com), policy.default also reads a "
        "bogus 'date' mailbox from the debris"
    ),
    # What ragbag trims or does not take for mail, by design.
    "public/mail/flanker/tests__fixtures__messages__bounce__gmail-no-dns.eml": (
        "a bounce quoting the returned message after '----- Original message -----': ragbag trims "
        "that quoted tail like any Outlook-style quote; the bounce's own text is kept"
    ),
    "public/mail/enmime/testdata__low-quality__bad-header-start.raw": (
        "the file's first line starts with a blank (' From: …'), so it opens with no header "
        "field: ragbag does not take it for mail (reported when the file is named, skipped in a "
        "folder); the reference parses any file as a message"
    ),
}


def table() -> str:
    """The per-project agreement table of the corpus README (markdown)."""
    keys = ("count", "times", "people", "text")
    rows: dict[str, dict] = {}
    for path in units():
        out = compare(path)
        row = rows.setdefault(out.project, {"files": 0, "messages": 0, "documents": 0, "errors": 0})
        row["files"] += 1
        row["messages"] += out.reference
        row["documents"] += out.ragbag
        row["errors"] += out.errors
        for k in keys:
            a, c = out.checks.get(k, (0, 0))
            row[k] = (row.get(k, (0, 0))[0] + a, row.get(k, (0, 0))[1] + c)
    total: dict = {"files": 0, "messages": 0, "documents": 0, "errors": 0, **{k: (0, 0) for k in keys}}
    lines = [
        "| project | files | messages (reference) | documents (ragbag) | errors | count | times | people | text |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in sorted(rows.items()) + [("**all**", total)]:
        if name != "**all**":
            for k in total:
                total[k] = (total[k][0] + row[k][0], total[k][1] + row[k][1]) if k in keys else total[k] + row[k]
        cells = [str(row[k]) for k in ("files", "messages", "documents", "errors")]
        cells += [f"{row[k][0]}/{row[k][1]}" for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
