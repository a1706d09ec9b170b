"""Documents from e-mail: one message per document, quoted replies and signatures trimmed.

Formats, found anywhere under the given file or folder (one folder may hold all of them):

- **mbox** (Gmail Takeout ``*.mbox``, Thunderbird ``Inbox`` / ``Foo.sbd/Bar``, mutt ``~/mail``):
  a file whose first line is a ``From `` postmark. A new message starts at a postmark line
  (``From <sender> <weekday month day hh:mm...>``), so an unescaped "From here..." body line
  does not split a message; ``>From `` escaping (mboxrd) is undone in the body.
- **Maildir** (``cur/`` and ``new/``, ``tmp/`` ignored; Maildir++ ``.Sent`` folders).
- **Apple Mail** ``.emlx`` / ``.partial.emlx``: a byte-count first line, that many bytes of RFC 822
  message, then an XML plist trailer (its ``date-received`` is the fallback date).
- **Loose RFC 822 files** (``*.eml``, ``*.msg`` that are text, the CMU Enron layout
  ``maildir/<user>/<folder>/<n>.``): any other file whose header block has ``From:`` and one of
  ``Date:``/``Message-ID:``/``To:``/``Subject:``, or is nothing but fields naming one of those
  and a MIME or transport field (``Content-Type:``, ``Received:``…), is one message; files that
  do not look like that (``.msf`` summaries, plists, SQLite indexes) are ignored, and an OLE
  ``.msg`` (Outlook's binary format) is reported as not read.

Decoding uses the stdlib ``email`` package (``policy.default``, fed in 64 KB pieces) for
structure and transfer encodings, but headers and bodies are decoded here with a charset
fallback: GB2312/GBK are read as GB18030, single-byte labels (Latin-1, cp1250…) try UTF-8 first
(C1 controls in it read in the label's code page), unknown or lying labels try UTF-8; bytes with
no label (raw 8-bit headers, undeclared parts) are UTF-8 or else charset-normalizer's reading
(:func:`ragbag.text.decode.decode`), the charsets the message declares elsewhere breaking its
ties, never a fixed try-order. An HTML part without a MIME charset is read in its own
``<meta charset>``. HTML-only bodies become text with BeautifulSoup (quoted
``<blockquote>``/``gmail_quote`` blocks removed first). Attachments are listed by name and type
(``attachments``, ``attachment_types``); small text attachments add their text, and every other
readable attachment is a document of its own (:mod:`.attachments`; ``--no-attachments``).

Isolation: each file is read behind ``connectors._isolate.each_file`` and each mbox message
behind ``each_record``: any exception (not a list of types) is a
``ReadError("{file}#{offset or 0}", reason)`` and reading goes on; every Document is made
storable there. Work is bounded: a message (mbox record or file) of more than 64 MB is a
ReadError and its bytes are never held whole (mbox lines are read in 64 KB pieces), so reading
holds one message at a time, about four times its size while parsing; the patterns run on
message text are linear (quoting is scanned line by line, see :mod:`.quoting`).

Text: a ``From · To · Date · Subject`` summary line, then the body with quoted lines (``>``),
"On ... wrote:" / Outlook "-----Original Message-----" tails and the ``-- `` signature trimmed
(an interleaved reply keeps the answers written between its quotes).
Forwards (``Fwd:``/``FW:``/``WG:``/``转发:``) keep the forwarded text: it is what was sent.
Title = subject; ``created_at`` = the Date header in UTC (else emlx date-received, the Maildir
delivery time, the mbox postmark date).

Metadata: ``from`` (address), ``from_name``, ``to``, ``cc`` (address lists), ``subject``,
``date`` (ISO UTC), ``message_id``, ``thread_id``, ``thread_subject``, ``folder``,
``has_attachments``, ``attachments``, ``attachment_types``, ``labels`` (Gmail ``X-Gmail-Labels``),
``format`` (mbox, maildir, emlx, eml).

Ids: ``native_id`` is the Message-ID without brackets, else a hash of the file (Maildir: its
unique name, so a new→cur move keeps it) and index in the file. The same mail (same Message-ID
and same text) in two folders is kept once: the first in sorted path order (then file order)
wins. A different mail reusing a Message-ID (list software, bulk mailers) is kept apart as
``<id>#<hash of its text>``; the first keeps the bare id, so ids are stable across rebuilds. ``thread_id`` is
the root of References (else In-Reply-To); a message with neither is a thread root — its own
Message-ID — unless its subject says it is a reply (``Re:``/``AW:``/``回复:``; Outlook/Exchange
exports such as Enron carry no References), then ``subject:<normalised subject>``.
``thread_subject`` (the normalised subject) always groups such threads.

Incremental: the cursor holds, per mbox file, the byte offset after the last complete message,
the file's size and mtime, a hash of its first 4 KiB and of the 4 KiB before the offset (both
within the part already read), and
the native ids of the messages before the offset. An mbox whose size and mtime are unchanged is
not opened; one that grew with both hashes intact is read from the offset only; otherwise it is
read again in full. Ids are stored rather than re-scanned because re-scanning headers means
reading the whole file, which is what the offset avoids (the cost: one stored id per
message). Maildir, emlx and loose files: the cursor maps relative path → (mtime, size, native
id); an unchanged file yields ``Seen`` without being opened, a deleted file's message is
deleted. Missed by design: an mbox edited in place before the offset that keeps its size
growing and both hashed regions intact, and (for duplicates) the folder/uri of a kept copy whose
file was deleted while an unchanged duplicate vouches for it. The cursor keeps each message's
text hash beside its id, so an unchanged file still tells duplicates from reused ids.

Left out: attachments no reader handles (archives, audio, video; reported), Apple Mail's
``Envelope Index`` database (flags, mailbox names beyond the ``.mbox`` folder names), Thunderbird
``.msf`` summaries (deleted-but-not-compacted mbox messages are indexed), message bodies beyond
1 M characters (cut), messages over 64 MB (reported).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ragbag.connectors._inside import inside
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.connectors.mail.layout import folder_name, kind_by_name, mail_files, sniff
from ragbag.connectors.mail.mbox import read_mbox
from ragbag.connectors.mail.message import NAME, Run
from ragbag.connectors.mail.message_files import read_message_file
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span
from ragbag.text.chunking import TokenCounter, prose_spans

__all__ = ["NAME", "SCHEDULE", "discover", "read", "spans"]

SCHEDULE = "*/30 * * * *"
_CURSOR_VERSION = 1


def discover() -> tuple[list[Path], list[str]]:
    """Apple Mail V* trees, Thunderbird profiles' Mail/ImapMail, ~/Maildir and ~/mail."""
    home = Path(os.environ.get("HOME") or Path.home())
    patterns = [
        "Library/Mail/V*",
        ".thunderbird/*/Mail",
        ".thunderbird/*/ImapMail",
        "snap/thunderbird/common/.thunderbird/*/Mail",
        "snap/thunderbird/common/.thunderbird/*/ImapMail",
        "Library/Thunderbird/Profiles/*/Mail",
        "Library/Thunderbird/Profiles/*/ImapMail",
        "Maildir",
        "mail",
    ]
    found: list[Path] = []
    for pattern in patterns:
        found += sorted(p for p in home.glob(pattern) if p.is_dir())
    return found, [str(home / p) for p in patterns]


def read(
    path: Path | None, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every message under ``path`` (``None``: ``discover()``'s places), then the new cursor.
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    follow_outside = follows_outside(options)
    if path is None:
        roots, _ = discover()
        if not roots:
            yield ReadError("mail:default places", "no mail folders found in the default places")
            return
    else:
        roots = [Path(path)]
    reads_inside = inside(source, options)
    same = (cursor or {}).get("v") == _CURSOR_VERSION and (cursor or {}).get("inside") == reads_inside.signature
    old_roots = (cursor or {}).get("roots", {}) if same else {}
    new_roots: dict[str, Any] = {}
    for root in roots:
        key = str(root.absolute())
        if not root.exists():
            yield ReadError(key, "no such file or directory")
            continue
        old = old_roots.get(key, {})
        run = Run(source, reads_inside)
        yield from _read_root(
            root, run, old.get("files", {}), old.get("mbox", {}), follow_outside, excluded_paths(options)
        )
        new_roots[key] = {"files": run.files, "mbox": run.mbox}
    yield Cursor({"v": _CURSOR_VERSION, "inside": reads_inside.signature, "roots": new_roots})


def _read_root(
    root: Path, run: Run, old_files: dict, old_mbox: dict, follow_outside: bool = False, exclude: Sequence[str] = ()
) -> Iterator:
    errors: list[ReadError] = []
    entries = [(root, root.name)] if root.is_file() else mail_files(root, errors, follow_outside, exclude)
    for file, rel in entries:
        try:
            st = file.stat()
        except OSError as exc:
            yield ReadError(str(file.absolute()), f"unreadable: {exc.strerror or exc}")
            continue
        stamp = [st.st_mtime_ns, st.st_size]
        prev = old_files.get(rel)
        if prev is not None and prev[:2] == stamp:  # an unchanged one-message file
            run.files[rel] = prev
            yield from run.seen(prev[2], prev[3] if len(prev) > 3 else None, prev[4] if len(prev) > 4 else [])
            continue
        kind = kind_by_name(file, rel)
        if kind is None:
            kind = sniff(file)
        if kind is None:
            if root.is_file():  # the user named this very file: say why it gives nothing
                yield ReadError(
                    str(file.absolute()),
                    "not mail: no mbox 'From ' line and no header block "
                    "with From: (and Date:, Message-ID:, To: or Subject:)",
                )
            continue
        folder = folder_name(rel, kind)
        if kind == "mbox":
            yield from read_mbox(file, rel, folder, st, run, old_mbox.get(rel))
        else:
            yield from read_message_file(file, rel, kind, folder, stamp, run)
    yield from errors


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """A message is one chunk when it fits; longer ones split at paragraphs, then sentences."""
    if count(doc.text) <= max_tokens:
        s, e = 0, len(doc.text.rstrip())
        return [Span(s, e)] if doc.text.strip() else []
    return prose_spans(doc.text, count, max_tokens)
