"""Issue 31, mail: each class of defect held by a test on files of other projects' public test
suites (tests/fixtures/public/mail, SOURCES.tsv says whose), or a minimal mutation of one where
no public file shows the class (said so at the test). Every test here failed before the fix.

Work bounds are held with counts, not clocks: characters handed to regexes. Memory bounds (class 13
of issue 38) are in tests/faults/test_memory_bounds.py.
"""

from __future__ import annotations

import email
import shutil
from email import policy
from pathlib import Path

import pytest
from conftest import FIXTURES

from ragbag import connectors
from ragbag.core.records import Document, ReadError

PUBLIC = FIXTURES / "public" / "mail"


def read(path: Path) -> tuple[list[Document], list[ReadError]]:
    docs, errors = [], []
    for item in connectors.get("mail").read(path, "t", None):
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, ReadError):
            errors.append(item)
    return docs, errors


def _surrogates(value) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_surrogates(v) for v in value.values())
    if isinstance(value, list):
        return any(_surrogates(v) for v in value)
    return False


# --- class 1: nothing one record holds fails the source -------------------------------------


def test_raw_8bit_to_header_is_decoded_not_a_lone_surrogate():
    """mail-parser's mail_test_12 has ``To: danglüe@email.com`` in raw UTF-8: it reached the
    store as lone surrogates, which Arrow cannot encode, and failed the whole build."""
    (doc,), _ = read(PUBLIC / "mail-parser" / "tests__mails__mail_test_12")
    assert doc.metadata["to"] == ["danglüe@email.com"]
    assert not _surrogates(doc.metadata) and not _surrogates(doc.text)


def test_a_field_the_address_parser_cannot_read_does_not_lose_the_message():
    """MimeKit's stack-overflow.txt nests comments in To: until the standard library's address
    parser recurses out: the message was a ReadError; now only that field's names are lost."""
    (doc,), errors = read(PUBLIC / "MimeKit" / "UnitTests__TestData__messages__stack-overflow.txt")
    assert errors == [] and doc.metadata["from"] == "test@test.com"


def test_any_failure_of_one_mbox_message_is_that_message_only(monkeypatch, tmp_path):
    """The isolation boundary, not a list of types: a message whose reading raises anything is
    a ReadError naming its offset and the exception; the others of the mbox are read."""
    from ragbag.connectors.mail import message

    real = message.body_and_attachments

    def fragile(msg, hints=None):
        if "even more" in str(msg["subject"]):
            raise LookupError("a parser bug nobody foresaw")
        return real(msg, hints)

    monkeypatch.setattr(message, "body_and_attachments", fragile)
    docs, errors = read(PUBLIC / "MimeKit" / "UnitTests__TestData__mbox__simple.mbox.txt")
    assert len(docs) == 2 and len(errors) == 1
    assert "#" in errors[0].uri and errors[0].error == "LookupError: a parser bug nobody foresaw"


def test_a_msg_name_on_rfc822_text_is_read():
    """MimeKit's DKIM tests keep RFC 822 messages as ``*.msg``: they were refused as Outlook
    files; only an OLE file is Outlook's."""
    (doc,), errors = read(PUBLIC / "MimeKit" / "UnitTests__TestData__dkim__gmail.msg")
    assert errors == [] and doc.metadata["from"]


# --- class 5: undeclared 8-bit text, HTML meta charsets -------------------------------------


def test_undeclared_latin1_name_is_not_read_as_gb18030():
    """flanker's from-encoding.eml: ``From: "Ingo L\\xfctkebohle"`` in raw Latin-1. A fixed
    try-order (UTF-8, GB18030, cp1252) made it CJK, GB18030 decoding nearly any bytes."""
    (doc,), _ = read(PUBLIC / "flanker" / "tests__fixtures__messages__from-encoding.eml")
    assert doc.metadata["from_name"] == "Ingo Lütkebohle"


def test_short_gb2312_bytes_without_a_label_read_as_chinese():
    """The GB2312 bytes of mail_test_12's sender name (its RFC 2047 payload), undeclared: six
    bytes the detector reads equally well as Big5 or EUC-JIS; the frequency prior breaks the
    tie. And the declared reading of the real headers stays right."""
    from ragbag.connectors.mail.charsets import decode_bytes
    from ragbag.text.decode import decode

    raw = email.message_from_bytes(
        (PUBLIC / "mail-parser" / "tests__mails__mail_test_12").read_bytes(), policy=policy.compat32
    )
    payload = email.header.decode_header(raw["From"])[0][0]
    assert decode(payload)[0] == decode_bytes(payload, None) == "张先生"
    (doc,), _ = read(PUBLIC / "mail-parser" / "tests__mails__mail_test_12")
    assert doc.metadata["from_name"] == "张先生" and doc.title == "代开各地增值税发票"


def test_html_meta_charset_is_honoured_when_mime_declares_none():
    """enmime's non-mime-missing-charset.raw: a text/html part without a MIME charset whose
    ``<meta charset="windows-1250">`` says how its euro sign is written: it read as U+0080."""
    (doc,), _ = read(PUBLIC / "enmime" / "testdata__mail__non-mime-missing-charset.raw")
    assert "Euro Sign: €" in doc.text and "\x80" not in doc.text


# --- class 6: one Message-ID, several mails --------------------------------------------------


def test_mails_reusing_a_message_id_are_kept_apart_and_true_copies_collapse(tmp_path):
    """notmuch's duplicate corpus: one Debian bug mail delivered as nine files under three
    Message-IDs, the copies differing (the tracker rewrites the subject per bug). Only one
    per id was kept, the others dropped without a word. The same file in two folders is one."""
    src = sorted(PUBLIC.glob("notmuch/test__corpora__duplicate__*"))
    for f in src:
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "copy").mkdir()
    shutil.copy(src[0], tmp_path / "copy" / src[0].name)  # a true duplicate in another folder
    docs, errors = read(tmp_path)
    assert errors == [] and len(docs) == 9
    ids = sorted(d.native_id for d in docs)
    assert len({d.metadata["message_id"] for d in docs}) == 3
    assert sum("#" not in i for i in ids) == 3  # the first of each id keeps it bare
    assert sorted(d.native_id for d in read(tmp_path)[0]) == ids  # stable across rebuilds


# --- class 10: linear work on pathological input ---------------------------------------------


class _Counting:
    """A compiled pattern that counts the characters each call may scan."""

    def __init__(self, pattern, seen: list[int]):
        self.pattern, self.seen = pattern, seen

    def _count(self, string, pos=0, endpos=None):
        self.seen.append(len(string[pos:endpos]))

    def match(self, string, *a):
        self._count(string, *a)
        return self.pattern.match(string, *a)

    def search(self, string, *a):
        self._count(string, *a)
        return self.pattern.search(string, *a)

    def finditer(self, string, *a):
        self._count(string, *a)
        return self.pattern.finditer(string, *a)

    def sub(self, repl, string, *a):
        self._count(string)
        return self.pattern.sub(repl, string, *a)


def _regex_work(monkeypatch, body: str) -> list[int]:
    import re

    from ragbag.connectors.mail import quoting

    seen: list[int] = []
    for name, value in vars(quoting).items():
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(quoting, name, _Counting(value, seen))
        elif isinstance(value, list) and value and isinstance(value[0], re.Pattern):
            monkeypatch.setattr(quoting, name, [_Counting(p, seen) for p in value])
    quoting.trim_quotes(body, forward=False)
    monkeypatch.undo()
    return seen


@pytest.mark.parametrize("tail", [" " * 4000 + "\nx", ("On Monday Rob wrote" + " " * 2000 + "x\n") * 4])
def test_quote_trimming_hands_regexes_bounded_lines_only(monkeypatch, tail):
    """A mutation of flanker's text-only.eml: its body, then "Sent from my iPhone" and trailing
    spaces (800 spaces took seconds in the old whole-body pattern, cubic), or attribution-like
    lines padded with blanks. Each regex call now sees at most one line's first MAX_SCAN
    characters, so regex work grows with the body, not with a power of it."""
    from ragbag.connectors.mail.quoting import MAX_SCAN

    msg = email.message_from_bytes(
        (PUBLIC / "flanker" / "tests__fixtures__messages__text-only.eml").read_bytes(), policy=policy.default
    )
    body = msg.get_content() + "\nSent from my iPhone" + tail
    small, large = _regex_work(monkeypatch, body), _regex_work(monkeypatch, body + body)
    assert max(small + large) <= MAX_SCAN + 16
    assert sum(large) <= 2.2 * sum(small)
