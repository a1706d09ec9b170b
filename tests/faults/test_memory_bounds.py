"""Issue 38, class 13: memory amplification, bounded once and reported. A 1 GB mbox cost more
than 6 GB of memory and a 307 KB PDF expanded to 200 MB of text; now an mbox costs one message
at a time, a message over ``MAX_MESSAGE_BYTES`` and a PDF drawing more text than one record holds
are cut or skipped with a report, and every record's text is bounded at the connectors'
isolation boundary (``MAX_TEXT_CHARS``), the cut named on its uri. Held with tracemalloc peaks
and sizes, never clocks; the files are other projects' public test files, mutated to size.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from figures import record

from ragbag.connectors import _isolate, files, mail
from ragbag.core.records import Document, ReadError
from tests.hostile_inputs import pdf_drawing_a_form

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "mail"


def _split(items) -> tuple[list[Document], list[ReadError]]:
    items = list(items)
    return [i for i in items if isinstance(i, Document)], [i for i in items if isinstance(i, ReadError)]


def test_a_pdf_that_expands_without_end_is_cut_and_the_cut_reported(tmp_path, monkeypatch):
    from ragbag.text import storable

    monkeypatch.setattr(storable, "MAX_TEXT_CHARS", 20_000)
    data = pdf_drawing_a_form(20_000)  # ≈ 900,000 characters of text from a few KB
    assert len(data) < 20_000
    (tmp_path / "bomb.pdf").write_bytes(data)
    docs, errors = _split(files.read(tmp_path / "bomb.pdf", "docs"))
    assert len(docs) == 1 and 0 < len(docs[0].text) <= 20_000 + 100
    assert "All work and no play" in docs[0].text
    assert [e.error for e in errors] == ["text cut on page 1: the PDF draws more text than one record holds"]


def _mbox_of(message: bytes, times: int, path: Path) -> Path:
    with open(path, "wb") as fh:
        for _ in range(times):
            fh.write(b"From a@b Mon Jan  1 00:00:00 2024\n")
            fh.write(message)  # no Message-ID: each is its own record (file and index)
            fh.write(b"\n")
    return path


def _peak(path: Path, options: dict | None = None) -> tuple[int, list, list]:
    tracemalloc.start()
    try:
        docs, errors = _split(mail.read(path, "t", None, options=options))
        return tracemalloc.get_traced_memory()[1], docs, errors
    finally:
        tracemalloc.stop()


def _big_message() -> bytes:
    """flanker's attached-pdf.eml with its PDF's base64 lines repeated to ~3 MB (a mutation)."""
    raw = (PUBLIC / "flanker" / "tests__fixtures__messages__attached-pdf.eml").read_bytes()
    head, sep, rest = raw.partition(b"filename=test.pdf")
    block_start = rest.index(b"\n\n") + 2
    block_end = rest.index(b"\n--", block_start)
    lines = rest[block_start:block_end]
    big = lines * (3_000_000 // len(lines))
    return head + sep + rest[:block_start] + big + rest[block_end:]


def test_mbox_memory_is_one_message_not_the_file(tmp_path):
    """An mbox message cost ~12x its size (a 1 GB mbox exceeded 6 GB): parsing now costs at
    most 6x one message, its attachments are decoded one at a time when read (their reader's
    cost comes on top: pypdf's ~7x the PDF here; OCR's is per page, bounded by the page's
    pixels, not by the file), and an mbox twice as long peaks no higher, whatever is read."""
    msg = _big_message()
    pdf = 3 * len(msg) // 4  # the attachment, base64-decoded
    peaks = {}
    for name, options in (("mail", {"attachments": False}), ("attachments", {"ocr": False}), ("ocr", {})):
        peak1, docs1, _ = _peak(_mbox_of(msg, 2, tmp_path / f"{name}-two"), options)
        peak2, docs2, _ = _peak(_mbox_of(msg, 4, tmp_path / f"{name}-four"), options)
        mails = lambda docs: [d for d in docs if "parent_doc_id" not in d.metadata]  # noqa: E731
        assert (len(mails(docs1)), len(mails(docs2))) == (2, 4)
        assert peak2 <= 1.25 * peak1, name
        peaks[name] = peak1
    assert peaks["mail"] <= 6 * len(msg)
    assert peaks["attachments"] <= 6 * len(msg) + 8 * pdf
    record(
        "memory",
        {
            "mbox_message_mb": round(len(msg) / 2**20, 2),
            "peak_two_messages_mb": round(peaks["mail"] / 2**20, 2),
            "peak_with_the_pdf_attachment_mb": round(peaks["attachments"] / 2**20, 2),
            "peak_with_ocr_of_its_page_mb": round(peaks["ocr"] / 2**20, 2),
        },
    )


def test_mbox_message_over_the_limit_is_reported_and_not_held(tmp_path, monkeypatch):
    """A message beyond the record size limit is a ReadError, its bytes never held whole; the
    next message is read."""
    from ragbag.connectors.mail import mbox

    msg = _big_message()
    small = (PUBLIC / "cpython" / "Lib__test__test_email__data__msg_01.txt").read_bytes()
    path = tmp_path / "box"
    with open(path, "wb") as fh:
        for m in (msg, small):
            fh.write(b"From a@b Mon Jan  1 00:00:00 2024\n" + m + b"\n")
    monkeypatch.setattr(mbox, "MAX_MESSAGE_BYTES", 1_000_000)
    peak, docs, errors = _peak(path)
    assert len(docs) == 1 and len(errors) == 1 and "larger than" in errors[0].error
    assert peak <= 2 * 1_000_000 + 500_000


def test_any_record_longer_than_the_bound_is_cut_at_the_boundary_and_the_cut_named(tmp_path, monkeypatch):
    """The bound every connector shares: a plain text file (no reader of its own cuts it) comes
    out at ``MAX_TEXT_CHARS`` characters, with a report saying how much was left out."""
    monkeypatch.setattr(_isolate, "MAX_TEXT_CHARS", 10_000)
    (tmp_path / "long.txt").write_text("a line of a long log file\n" * 2_000)  # 52,000 characters
    (tmp_path / "short.txt").write_text("a short note")
    docs, errors = _split(files.read(tmp_path, "docs"))
    by_name = {Path(d.uri).name: d for d in docs}
    assert len(by_name["long.txt"].text) == 10_000 and by_name["short.txt"].text == "a short note"
    assert [(Path(e.uri).name, e.error) for e in errors] == [
        ("long.txt", "text cut at 10,000 of 52,000 characters: the rest is not indexed")
    ]
