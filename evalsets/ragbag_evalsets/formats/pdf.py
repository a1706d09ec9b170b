"""PDF as a minimal writer lays it out: standard Type1 fonts in WinAnsiEncoding (so the text
extracts), one text stream a page, a byte-exact cross-reference table."""

from __future__ import annotations


def _pdf_text(s: str) -> str:
    out = []
    for b in s.encode("cp1252"):
        c = chr(b)
        if c in "()\\":
            out.append("\\" + c)
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return "".join(out)


def make_pdf(pages: list[list[str]], title: str = "", author: str = "") -> bytes:
    """A minimal PDF: standard Type1 fonts (Helvetica, Helvetica-Bold) in WinAnsiEncoding, one
    text stream per page; a line starting with "# " is set in bold, "" is a blank line."""
    objs: list[bytes | None] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        None,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    ]
    kids = []
    for lines in pages:
        ops = ["BT", "/F1 10 Tf", "14 TL", "56 790 Td"]
        for line in lines:
            if line.startswith("# "):
                ops += ["/F2 13 Tf", f"({_pdf_text(line[2:])}) Tj", "T*", "/F1 10 Tf"]
            else:
                ops += [f"({_pdf_text(line)}) Tj", "T*"]
        ops.append("ET")
        stream = "\n".join(ops).encode("ascii")
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font"
            f" << /F1 3 0 R /F2 4 0 R >> >> /Contents {len(objs)} 0 R >>".encode()
        )
        kids.append(len(objs))
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode()
    info = ""
    if title or author:
        objs.append(
            f"<< /Title ({_pdf_text(title)}) /Author ({_pdf_text(author)}) /Producer (ragbag personal_eval) >>".encode(
                "ascii"
            )
        )
        info = f" /Info {len(objs)} 0 R"
    filled = [o for o in objs if o is not None]
    assert len(filled) == len(objs), "every PDF object is written before the file"
    return pdf_file(filled, info)


def pdf_file(objs: list[bytes], info: str = "") -> bytes:
    """Numbered objects (the first the catalog) as a PDF file with a byte-exact xref table;
    ``info`` is the trailer's `` /Info N 0 R`` when there is one. The tests and
    scripts/make_sample_pdf.py write their PDFs through it too."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
