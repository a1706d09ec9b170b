"""Hostile inputs built on demand, shared by the tests and benchmarks/pathological.py: the
shapes no public test suite carries."""

from __future__ import annotations

import zlib

from ragbag_evalsets.formats.pdf import pdf_file


def pdf_drawing_a_form(times: int) -> bytes:
    """A small PDF whose one page draws one text form ``times`` times: a few KB that expand to
    ``times`` × the form's text (the shape of a 307 KB PDF that expanded to 200 MB)."""
    page = zlib.compress(b"q /F0 Do Q\n" * times)
    form = b"BT /F1 12 Tf 72 712 Td (All work and no play makes Jack a dull boy.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /XObject << /F0 5 0 R >> /Font << /F1 6 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(page) + page + b"\nendstream",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >>"
        b" /Length %d >>\nstream\n" % len(form) + form + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_file(objects)
