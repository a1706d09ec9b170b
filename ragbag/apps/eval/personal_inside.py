"""What lies inside the personal set's records: mail attachments, scans, screenshots and photos.

Jan's home (:mod:`ragbag.apps.eval.personal_set`) as it looks once mail attachments are read as
documents of their own and pictures are read by OCR and EXIF. Four query kinds, each asking for a
fact that only the inner document holds (the mail around it says "see attached"):

- ``attachment``: text PDFs (Type1 fonts, WinAnsi), ``.docx``, ``.xlsx`` and ``.odt`` attached to
  mails, in German, English, French, Spanish and Chinese; judged by the attachment's own first line
  ("Attachment NAME of the mail ..."), so the mail itself is not the answer;
- ``scanned``: image-only PDFs (a letter drawn with Pillow, saved as a PDF page of pixels), in the
  notes folder and attached to mails: nothing to read without OCR;
- ``screenshot``: PNG screenshots (a Wi-Fi password, a booking code, an error) in the notes folder
  and attached to mails;
- ``photo``: JPEG photos with EXIF date, camera and GPS, found by place and month in words or with
  ``where`` (``city``/``place``/``country``/``camera``) and ``after``/``before``.

Deterministic like the rest of the set: fixed dates, a seeded ``random.Random``, office files
re-zipped with fixed member times and fixed document properties, PDFs with fixed dates. Text is
drawn with a TrueType font found at run time (DejaVu or Liberation, else the font Pillow ships),
so the pictures are the same on one machine and readable on any. Pictures stay small (at most
800 pixels a side) so the OCR of the whole set costs about 35 images and pages.

Long because it is data: the invented documents and the questions about them, written out next
to the few functions that draw and package them.
"""

from __future__ import annotations

import io
import random
import time
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ragbag.apps.eval.personal_set import (
    CAMILLE,
    FELIX,
    INGRID,
    LINA,
    LUCIA,
    ME,
    ME_WORK,
    MUM,
    PRIYA,
    TOM,
    WEI,
    Mail,
    berlin,
    make_pdf,
)

KINDS = ("attachment", "scanned", "screenshot", "photo")
SEED = 20260201
FIXED = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)  # the stamp office files and PDFs carry as written
MARCO = ("Marco Lehmann", "marco.lehmann@web.de")


@dataclass
class Inside:
    """The mails (home: Gmail mbox, work: Maildir), the notes files and the queries of the four kinds."""

    home: list[Mail] = field(default_factory=list)
    work: list[Mail] = field(default_factory=list)
    files: list[tuple[str, bytes, datetime]] = field(default_factory=list)
    queries: list[tuple[str, str, list, dict]] = field(default_factory=list)

    def q(self, kind: str, text: str, relevant, **extra) -> None:
        assert kind in KINDS, kind
        self.queries.append((kind, text, list(relevant), extra))

    def add_to(self, s: Any) -> None:
        """Lay the notes files and the queries into the set (its mails went in with the others)."""
        for rel, data, mtime in self.files:
            s.file(rel, data, mtime)
        for kind, text, relevant, extra in self.queries:
            s.q(kind, text, relevant, **extra)


def made() -> Inside:
    out = Inside()
    rng = random.Random(SEED)
    _attachments(out)
    _scanned(out, rng)
    _screenshots(out)
    _photos(out, rng)
    return out


def _att(name: str) -> str:
    """What only the attachment's document says: its first line."""
    return f"Attachment {name} of the mail"


# ============================================================================ packaging


def _stable_zip(data: bytes) -> bytes:
    """The zip again, every member stamped with one fixed time (writers stamp the clock's)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 15, 9, 0, 0))
            fixed.compress_type = info.compress_type
            fixed.external_attr = info.external_attr
            body = src.read(info.filename)
            if info.filename in ("docProps/core.xml", "meta.xml"):
                body = _fixed_dates(body)
            dst.writestr(fixed, body)
    return buf.getvalue()


def _fixed_dates(xml: bytes) -> bytes:
    import re

    return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", b"2026-01-15T09:00:00Z", xml)


def _docx(blocks: list[tuple[str, Any]], title: str, author: str) -> bytes:
    """A Word document from ("h1"|"h2"|"p", text) and ("table", rows) blocks."""
    import docx

    document = docx.Document()
    for kind, value in blocks:
        if kind == "table":
            table = document.add_table(rows=0, cols=len(value[0]))
            for row in value:
                cells = table.add_row().cells
                for cell, text in zip(cells, row):
                    cell.text = text
        elif kind in ("h1", "h2"):
            document.add_heading(value, level=int(kind[1]))
        else:
            document.add_paragraph(value)
    props = document.core_properties
    props.title, props.author, props.last_modified_by = title, author, author
    props.created = props.modified = FIXED.replace(tzinfo=None)
    props.revision = 1
    buf = io.BytesIO()
    document.save(buf)
    return _stable_zip(buf.getvalue())


def _xlsx(sheets: list[tuple[str, list[list[Any]]]], author: str) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets:
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.properties.creator = book.properties.lastModifiedBy = author
    book.properties.created = book.properties.modified = FIXED.replace(tzinfo=None)
    buf = io.BytesIO()
    book.save(buf)
    return _stable_zip(buf.getvalue())


_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.2"'
)


def _odt(blocks: list[tuple[str, str]], title: str) -> bytes:
    """An OpenDocument text as a minimal writer lays it out (mimetype stored first, manifest,
    content, meta). Written by hand: odfpy's writer declares more namespaces once a process has
    used it, so its bytes would depend on what ran before."""
    from html import escape

    body = "".join(
        f'<text:h text:outline-level="1">{escape(t, quote=False)}</text:h>'
        if kind == "h1"
        else f"<text:p>{escape(t, quote=False)}</text:p>"
        for kind, t in blocks
    )
    head = "<?xml version='1.0' encoding='UTF-8'?>\n"
    members = [
        ("mimetype", "application/vnd.oasis.opendocument.text", zipfile.ZIP_STORED),
        (
            "META-INF/manifest.xml",
            head + '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" '
            'manifest:version="1.2">'
            '<manifest:file-entry manifest:full-path="/" '
            'manifest:media-type="application/vnd.oasis.opendocument.text"/>'
            '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
            '<manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>'
            "</manifest:manifest>",
            zipfile.ZIP_DEFLATED,
        ),
        (
            "content.xml",
            head + f"<office:document-content {_ODF_NS}><office:body><office:text>{body}"
            "</office:text></office:body></office:document-content>",
            zipfile.ZIP_DEFLATED,
        ),
        (
            "meta.xml",
            head + f"<office:document-meta {_ODF_NS}><office:meta><dc:title>{escape(title, quote=False)}</dc:title>"
            "<meta:creation-date>2026-01-15T09:00:00</meta:creation-date></office:meta></office:document-meta>",
            zipfile.ZIP_DEFLATED,
        ),
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, text, method in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 15, 9, 0, 0))
            info.compress_type = method
            archive.writestr(info, text.encode("utf-8"))
    return buf.getvalue()


# ============================================================================ drawing


_FONTS = {
    "sans": ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "Arial.ttf", "arial.ttf", "Helvetica.ttc"),
    "bold": ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf"),
    "mono": ("DejaVuSansMono.ttf", "LiberationMono-Regular.ttf", "Menlo.ttc", "consola.ttf"),
}
_FONT_DIRS = (
    "/usr/share/fonts/truetype/dejavu/",
    "/usr/share/fonts/truetype/liberation/",
    "/usr/share/fonts/dejavu/",
    "/usr/share/fonts/TTF/",
    "/System/Library/Fonts/Supplemental/",
    "/Library/Fonts/",
    "C:/Windows/Fonts/",
    "",  # Pillow's own search of the system's font folders
)


def _font(size: int, style: str = "sans") -> Any:
    """A TrueType font found at run time; Pillow's bundled font when this machine has none."""
    from PIL import ImageFont

    for name in _FONTS[style]:
        for folder in _FONT_DIRS:
            try:
                return ImageFont.truetype(folder + name, size)
            except OSError:
                continue
    return ImageFont.load_default(size=size)


def _wrap(draw: Any, text: str, font: Any, width: int) -> list[str]:
    words, lines, line = text.split(" "), [], ""
    for word in words:
        trial = f"{line} {word}".strip()
        if line and draw.textlength(trial, font=font) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    return lines + [line]


def _letter(lines: list[str], rng: random.Random, size: int = 19) -> Any:
    """One A4 page drawn like a scan: off-white paper, dark text, a little dust. A line starting
    with "# " is a heading, ">" right-aligns it (a date), "" is a blank line."""
    from PIL import Image, ImageDraw

    width, height = 800, 1131
    img = Image.new("L", (width, height), 246)
    draw = ImageDraw.Draw(img)
    for _ in range(260):  # scanner dust
        x, y = rng.randrange(width), rng.randrange(height)
        draw.point((x, y), fill=rng.randrange(150, 225))
    body, head = _font(size), _font(size + 7, "bold")
    y = 70
    for line in lines:
        if not line:
            y += size
            continue
        if line.startswith("# "):
            draw.text((70, y), line[2:], fill=25, font=head)
            y += int((size + 7) * 1.7)
            continue
        if line.startswith(">"):
            text = line[1:]
            draw.text((width - 70 - draw.textlength(text, font=body), y), text, fill=35, font=body)
            y += int(size * 1.6)
            continue
        for part in _wrap(draw, line, body, width - 140):
            draw.text((70, y), part, fill=35, font=body)
            y += int(size * 1.55)
    return img


def _scan_pdf(pages: list[list[str]], title: str, rng: random.Random) -> bytes:
    """An image-only PDF, one drawn page each, as a scanner app writes it: no text layer."""
    images = [_letter(p, rng) for p in pages]
    buf = io.BytesIO()
    stamp = time.gmtime(FIXED.timestamp())
    images[0].save(
        buf,
        "PDF",
        resolution=150,
        save_all=True,
        append_images=images[1:],
        title=title,
        producer="Scanner Pro 8.2",
        creationDate=stamp,
        modDate=stamp,
    )
    return buf.getvalue()


def _screenshot(rows: list[tuple[str, str]], width: int = 720, dark: bool = False, bar: str = "") -> bytes:
    """A PNG screenshot: a title bar, then rows of (style, text); styles "h" (large, bold), "t"
    (text), "s" (small, grey), "m" (monospace), "" (a gap)."""
    from PIL import Image, ImageDraw

    sizes = {"h": 30, "t": 22, "s": 17, "m": 18}
    height = 64 + sum(int(sizes.get(st, 14) * 1.7) for st, _ in rows) + 30
    bg, fg, grey = (
        ((30, 31, 36), (225, 228, 232), (150, 155, 160)) if dark else ((255, 255, 255), (28, 28, 30), (110, 110, 115))
    )
    img = Image.new("RGB", (width, min(height, 800)), bg)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, width, 40), fill=(60, 62, 70) if dark else (236, 236, 240))
    for n, colour in enumerate(((255, 95, 86), (255, 189, 46), (39, 201, 63))):
        draw.ellipse((14 + 22 * n, 14, 26 + 22 * n, 26), fill=colour)
    if bar:
        draw.text((100, 10), bar, fill=grey, font=_font(16))
    y = 64
    for style, text in rows:
        if not style:
            y += 14
            continue
        font = _font(sizes[style], {"h": "bold", "m": "mono"}.get(style, "sans"))
        draw.text((28, y), text, fill=grey if style == "s" else fg, font=font)
        y += int(sizes[style] * 1.7)
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def _dms(value: float) -> tuple[float, float, float]:
    value = abs(value)
    d = int(value)
    m = int((value - d) * 60)
    return float(d), float(m), round((value - d - m / 60) * 3600, 2)


def _photo(
    rng: random.Random, taken: str, offset: str, lat: float, lon: float, make: str, model: str, look: str
) -> bytes:
    """A small JPEG with the EXIF a phone writes: maker, model, date taken with its offset, GPS.
    The picture is a drawn scene (sky, sun, hills or houses or water), no text in it."""
    from PIL import Image, ImageDraw

    width, height = 640, 480
    skies = {
        "day": ((96, 160, 230), (200, 225, 250)),
        "dusk": ((70, 60, 130), (250, 160, 90)),
        "dawn": ((40, 50, 110), (255, 200, 120)),
        "night": ((10, 12, 40), (40, 40, 80)),
    }
    scene, _, sky = look.partition("/")
    top, bottom = skies[sky or "day"]
    img = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(img)
    for y in range(height):
        t = y / height
        draw.line((0, y, width, y), fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom)))
    if sky != "night":
        cx, cy = rng.randrange(80, 560), rng.randrange(50, 160)
        draw.ellipse((cx - 28, cy - 28, cx + 28, cy + 28), fill=(255, 236, 170))
    horizon = rng.randrange(260, 330)
    if scene == "sea":
        draw.rectangle((0, horizon, width, height), fill=(40, 90, 140))
        for _ in range(40):
            x, y = rng.randrange(width), rng.randrange(horizon, height)
            draw.line((x, y, x + rng.randrange(10, 40), y), fill=(120, 170, 210))
    elif scene == "mountain":
        for layer, shade in enumerate(((70, 90, 80), (50, 70, 60), (30, 50, 40))):
            pts = [(0, height)]
            for x in range(0, width + 40, 40):
                pts.append((x, horizon - 120 + layer * 60 + rng.randrange(-60, 60)))
            pts.append((width, height))
            draw.polygon(pts, fill=shade)
    else:  # town: houses with windows, a street
        draw.rectangle((0, horizon, width, height), fill=(120, 115, 110))
        x = 0
        while x < width:
            w, h = rng.randrange(50, 110), rng.randrange(80, 220)
            colour = tuple(rng.randrange(140, 240) for _ in range(3))
            draw.rectangle((x, horizon - h, x + w, horizon), fill=colour)
            for wy in range(horizon - h + 15, horizon - 20, 30):
                for wx in range(x + 10, x + w - 15, 22):
                    draw.rectangle((wx, wy, wx + 10, wy + 14), fill=(60, 70, 90))
            x += w + rng.randrange(0, 8)
    exif = Image.Exif()
    exif[0x010F] = make
    exif[0x0110] = model
    exif[0x0132] = taken
    sub = exif.get_ifd(0x8769)
    sub[0x9003] = taken
    sub[0x9004] = taken
    sub[0x9011] = offset
    gps = exif.get_ifd(0x8825)
    gps[1], gps[2] = ("N" if lat >= 0 else "S"), _dms(lat)
    gps[3], gps[4] = ("E" if lon >= 0 else "W"), _dms(lon)
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=70, exif=exif)
    return buf.getvalue()


# ============================================================================ attachments


def _attachments(out: Inside) -> None:
    q = out.q
    pdf, docx_t, xlsx_t, odt_t = (
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.oasis.opendocument.text",
    )

    # --- German PDF: the internet bill -------------------------------------------------------
    name = "O2_Rechnung_2025-11.pdf"
    out.home.append(
        Mail(
            berlin(2025, 12, 1, 6, 12),
            ("O2 Kundenservice", "rechnung@o2online.de"),
            [ME],
            "Ihre O2 Rechnung ist da",
            "Hallo Jan Hoffmann,\n\nIhre aktuelle Rechnung steht bereit. Sie finden sie als PDF im Anhang "
            "und in Mein O2.\n\nIhr O2 Team",
            labels=("Inbox", "Rechnungen"),
            attachments=[
                (
                    name,
                    pdf,
                    make_pdf(
                        [
                            [
                                "# Ihre Rechnung",
                                "Telefónica Germany GmbH & Co. OHG",
                                "",
                                "Herrn Jan Hoffmann, Weserstraße 41, 12045 Berlin",
                                "",
                                "Kundennummer: 6002 4471 388",
                                "Rechnungsnummer: 2025-11-7731554",
                                "Rechnungsdatum: 01.12.2025        Zeitraum: 01.11.2025 – 30.11.2025",
                                "",
                                "O2 Home L (DSL 250)                              39,99 €",
                                "Miete Router FRITZ!Box 7590                        5,00 €",
                                "Summe netto 37,81 €   MwSt. 19 % 7,18 €",
                                "Rechnungsbetrag 44,99 €",
                                "",
                                "Der Betrag wird am 05.12.2025 per SEPA-Lastschrift von Ihrem Konto",
                                "DE89 1001 1001 2623 4471 90 abgebucht. Mandatsreferenz O2-6002447138.",
                            ]
                        ],
                        title="Rechnung 2025-11-7731554",
                        author="Telefónica Germany",
                    ),
                )
            ],
        )
    )
    q("attachment", "how much was my internet bill for November 2025?", [("mail", _att(name))], lang="en>de")
    q("attachment", "Wann bucht O2 die Rechnung ab?", [("mail", _att(name))], lang="de")
    q("attachment", "O2 Rechnungsnummer 2025-11-7731554", [("mail", _att(name))], lang="de")

    # --- German PDF: the evening course ------------------------------------------------------
    name = "Anmeldebestaetigung_NK4.07-118B.pdf"
    out.home.append(
        Mail(
            berlin(2025, 8, 20, 14, 2),
            ("VHS Neukölln", "anmeldung@vhs-neukoelln.de"),
            [ME],
            "Ihre Anmeldung bei der Volkshochschule Neukölln",
            "Guten Tag,\n\nvielen Dank für Ihre Anmeldung. Ihre Anmeldebestätigung mit allen Angaben zum "
            "Kurs finden Sie im Anhang.\n\nMit freundlichen Grüßen\nIhre Volkshochschule Neukölln",
            attachments=[
                (
                    name,
                    pdf,
                    make_pdf(
                        [
                            [
                                "# Volkshochschule Neukölln – Anmeldebestätigung",
                                "",
                                "Teilnehmer: Jan Hoffmann, Teilnehmernummer 88 4102",
                                "Kurs: Chinesisch B1 – Konversation und Alltag",
                                "Kursnummer: NK4.07-118B",
                                "Termine: 12 x dienstags, 18:00–19:30 Uhr, ab 09.09.2025",
                                "Ort: Boddinstraße 34, 12053 Berlin, Raum 2.14 (2. OG)",
                                "Kursleitung: Frau Wang Fang",
                                "",
                                "Entgelt: 198,00 € (ermäßigt 118,80 €)",
                                "Das Entgelt wird zum 01.09.2025 von Ihrem Konto abgebucht.",
                                "Ein Rücktritt ist bis 7 Tage vor Kursbeginn kostenfrei möglich.",
                            ]
                        ],
                        title="Anmeldebestätigung NK4.07-118B",
                    ),
                )
            ],
        )
    )
    q("attachment", "which room is my Chinese evening class in?", [("mail", _att(name))], lang="en>de")
    q("attachment", "Was kostet der Chinesischkurs an der VHS?", [("mail", _att(name))], lang="de")
    q("attachment", "who teaches the Chinese course at the adult education centre?", [("mail", _att(name))])

    # --- English PDF: the Lisbon hotel folio, for expenses ------------------------------------
    name = "Invoice_FT-2025-4471_Lumen.pdf"
    out.work.append(
        Mail(
            berlin(2025, 6, 19, 10, 41),
            ("Lumen Hotel Lisboa", "reservas@lumenhotel.pt"),
            [ME_WORK],
            "Your invoice – thank you for staying with us",
            "Dear Mr Hoffmann,\n\nthank you for choosing Lumen Hotel. Please find your invoice attached.\n\n"
            "We hope to welcome you again soon.\nFront Office",
            attachments=[
                (
                    name,
                    pdf,
                    make_pdf(
                        [
                            [
                                "# Lumen Hotel Lisboa",
                                "Rua dos Fanqueiros 120, 1100-232 Lisboa · NIF 514 882 190",
                                "",
                                "# Invoice FT 2025/4471",
                                "Guest: Jan Hoffmann · Company: Fernwerk GmbH, Berlin",
                                "Arrival 16.06.2025 · Departure 19.06.2025 · 3 nights · Room 512, Superior Twin",
                                "",
                                "Accommodation incl. breakfast      3 x 142.00 EUR      426.00 EUR",
                                "Lisbon municipal tourist tax       3 x 4.00 EUR         12.00 EUR",
                                "Minibar 17.06.                                          7.50 EUR",
                                "Total                                                 445.50 EUR",
                                "VAT 6 % included (accommodation), 23 % (minibar)",
                                "",
                                "Paid by Visa ending 2291 on 19.06.2025.",
                            ]
                        ],
                        title="Invoice FT 2025/4471",
                        author="Lumen Hotel Lisboa",
                    ),
                )
            ],
        )
    )
    q("attachment", "how much tourist tax did I pay at the hotel in Lisbon?", [("mail", _att(name))])
    q("attachment", "hotel invoice total for the Lisbon offsite, for my expense report", [("mail", _att(name))])

    # --- English docx: the offsite agenda -----------------------------------------------------
    name = "Offsite_Agenda_June_2025.docx"
    out.work.append(
        Mail(
            berlin(2025, 6, 4, 17, 30),
            PRIYA,
            [("Backend", "backend@fernwerk.io")],
            "Offsite agenda (final)",
            "Hi all,\n\nfinal agenda attached. Bring comfortable shoes.\n\nPriya",
            attachments=[
                (
                    name,
                    docx_t,
                    _docx(
                        [
                            ("h1", "Backend offsite, 16–18 June 2025"),
                            ("h2", "Monday 16 June"),
                            ("p", "14:00 Arrival and check-in at the hotel"),
                            ("p", "16:00 Roadmap for the second half of the year (Priya)"),
                            ("p", "19:30 Team dinner at Taberna da Rua das Flores, Rua das Flores 103"),
                            ("h2", "Tuesday 17 June"),
                            ("p", "09:30 Architecture review: event sourcing for the ledger (Tom)"),
                            ("p", "11:30 On-call retrospective: what paged us in Q2 and why"),
                            ("p", "15:00 Sailing on the Tagus: meet at the pier of Doca de Santo Amaro, boat Gaivota"),
                            ("h2", "Wednesday 18 June"),
                            ("p", "10:00 Hack morning: pick one annoyance and fix it"),
                            ("p", "13:00 Check-out, flights home"),
                        ],
                        "Offsite agenda",
                        "Priya Nair",
                    ),
                )
            ],
        )
    )
    q("attachment", "where do we meet for the sailing trip at the team offsite?", [("mail", _att(name))])
    q("attachment", "who presents the event sourcing architecture review?", [("mail", _att(name))])
    q("attachment", "which restaurant is the team dinner on the first evening of the offsite?", [("mail", _att(name))])

    # --- English xlsx: capacity plan ----------------------------------------------------------
    name = "Capacity_Q1_2026.xlsx"
    out.work.append(
        Mail(
            berlin(2025, 11, 14, 16, 5),
            PRIYA,
            [ME_WORK],
            "Q1 capacity plan – please check your rows",
            "Hi Jan,\n\ncan you sanity-check the rows you own before Friday? Sheet attached.\n\nThanks,\nPriya",
            attachments=[
                (
                    name,
                    xlsx_t,
                    _xlsx(
                        [
                            (
                                "Services",
                                [
                                    [
                                        "Service",
                                        "Owner",
                                        "Peak RPS Q4",
                                        "Forecast RPS Q1",
                                        "Pods now",
                                        "Pods Q1",
                                        "Memory per pod",
                                    ],
                                    ["billing-api", "Jan", 1240, 1850, 8, 12, "1.5 GiB"],
                                    ["invoice-renderer", "Tom", 210, 260, 3, 4, "2 GiB"],
                                    ["ledger-sync", "Priya", 95, 140, 2, 2, "512 MiB"],
                                    ["webhooks-out", "Tom", 610, 900, 4, 6, "768 MiB"],
                                ],
                            ),
                            (
                                "Budget",
                                [
                                    ["Item", "EUR per month"],
                                    ["Compute (forecast Q1 2026)", 14100],
                                    ["Managed Postgres", 3050],
                                    ["Egress and other", 1250],
                                    ["Total cloud spend forecast", 18400],
                                ],
                            ),
                        ],
                        "Priya Nair",
                    ),
                )
            ],
        )
    )
    q(
        "attachment",
        "how many pods should billing-api run in Q1 according to the capacity plan?",
        [("mail", _att(name))],
    )
    q("attachment", "forecast monthly cloud spend for Q1 2026", [("mail", _att(name))])

    # --- French docx: the wedding programme ---------------------------------------------------
    name = "Programme_Camille_Julien.docx"
    out.home.append(
        Mail(
            berlin(2025, 6, 25, 21, 12),
            CAMILLE,
            [ME],
            "Le programme du week-end 🎉",
            "Coucou Jan !\n\nVoici le programme du week-end, à imprimer ou pas :)\n\nBises,\nCamille",
            attachments=[
                (
                    name,
                    docx_t,
                    _docx(
                        [
                            ("h1", "Camille & Julien – le week-end"),
                            ("h2", "Samedi 12 juillet 2025"),
                            ("p", "15h30 Cérémonie laïque dans le jardin du Domaine des Tilleuls"),
                            ("p", "17h00 Vin d'honneur sous les platanes, photos de groupe"),
                            ("p", "20h00 Dîner. Plan de table :"),
                            (
                                "table",
                                [
                                    ["Table", "Invités"],
                                    ["Fourvière", "Jan Hoffmann, Hélène Garnier, Paul et Inès Roux, Mathilde Faure"],
                                    ["Croix-Rousse", "Famille Durand"],
                                    ["Confluence", "Famille Moreau"],
                                ],
                            ),
                            ("p", "23h00 Ouverture du bal, DJ jusqu'à 3h"),
                            ("h2", "Dimanche 13 juillet 2025"),
                            ("p", "11h30 Brunch au bord de la piscine, maillot conseillé"),
                        ],
                        "Programme du mariage",
                        "Camille Durand",
                    ),
                )
            ],
        )
    )
    q("attachment", "which table am I seated at for Camille's wedding dinner?", [("mail", _att(name))], lang="en>fr")
    q("attachment", "à quelle heure est le brunch le dimanche après le mariage ?", [("mail", _att(name))], lang="fr")

    # --- French PDF: the suit hire ------------------------------------------------------------
    name = "Facture_F-2025-0712.pdf"
    out.home.append(
        Mail(
            berlin(2025, 7, 10, 18, 2),
            ("Smoking & Co", "contact@smokingandco.fr"),
            [ME],
            "Votre facture Smoking & Co",
            "Bonjour,\n\nmerci pour votre confiance. Vous trouverez votre facture en pièce jointe.\n\n"
            "L'équipe Smoking & Co",
            charset="iso-8859-1",
            attachments=[
                (
                    name,
                    pdf,
                    make_pdf(
                        [
                            [
                                "# Smoking & Co – Location de costumes",
                                "14 rue Mercière, 69002 Lyon · SIRET 812 447 190 00021",
                                "",
                                "# Facture n° F-2025-0712",
                                "Client : M. Jan Hoffmann · Date : 10/07/2025",
                                "",
                                "Location costume trois pièces bleu nuit, taille 50, du 10/07 au 14/07/2025   89,00 €",
                                "Nœud papillon bordeaux                                                     12,00 €",
                                "Total TTC 101,00 €",
                                "",
                                "Dépôt de garantie : 250,00 € (empreinte bancaire), libéré au retour du costume.",
                                "Retour au magasin au plus tard le lundi 14/07/2025 avant 12h00.",
                            ]
                        ],
                        title="Facture F-2025-0712",
                        author="Smoking & Co",
                    ),
                )
            ],
        )
    )
    q("attachment", "how much was the deposit for the suit I rented in Lyon?", [("mail", _att(name))], lang="en>fr")
    q("attachment", "jusqu'à quand dois-je rendre le costume ?", [("mail", _att(name))], lang="fr")

    # --- Chinese docx: the trip itinerary -----------------------------------------------------
    name = "行程安排_国庆.docx"
    out.home.append(
        Mail(
            berlin(2025, 9, 12, 15, 40),
            WEI,
            [ME],
            "行程安排（最终版）",
            "Jan，\n\n附件是我们的行程，你看看有没有问题。\n\n张伟",
            cte="base64",
            attachments=[
                (
                    name,
                    docx_t,
                    _docx(
                        [
                            ("h1", "国庆行程：上海 · 黄山 · 杭州"),
                            ("p", "9月29日（周一）Jan 到上海，住我家。"),
                            ("p", "10月2日 上海虹桥站 07:52 出发 → 黄山北站 11:20 到，高铁 G7395，二等座。"),
                            ("p", "10月3日–4日 黄山：云谷索道上山，索道每人 90 元，第二天早上看日出。"),
                            ("p", "10月5日 黄山北站 14:05 → 杭州东站 16:31，高铁 G7452。"),
                            ("p", "10月6日–8日 杭州：西湖骑车、龙井村喝茶、灵隐寺。"),
                            ("p", "10月9日 回上海。"),
                            ("p", "高铁票每人大约 680 元，我已经用 12306 买好了，到时候刷护照进站。"),
                        ],
                        "行程安排",
                        "张伟",
                    ),
                )
            ],
        )
    )
    q("attachment", "我们坐哪趟高铁去黄山？几点出发？", [("mail", _att(name))], lang="zh")
    q("attachment", "which day do we take the train from Huangshan to Hangzhou?", [("mail", _att(name))], lang="en>zh")
    q(
        "attachment",
        "how do I get into the station without a paper ticket in China?",
        [("mail", _att(name))],
        lang="en>zh",
    )

    # --- Chinese docx: homework from the language partner ---------------------------------------
    name = "第十二课_练习.docx"
    out.home.append(
        Mail(
            berlin(2025, 10, 28, 20, 15),
            LINA,
            [ME],
            "这周的练习",
            "Jan，\n\n这是这周的练习，在附件里。加油！\n\n李娜",
            charset="gb2312",
            cte="base64",
            attachments=[
                (
                    name,
                    docx_t,
                    _docx(
                        [
                            ("h1", "第十二课 在饭馆"),
                            ("p", "生词：服务员、菜单、点菜、买单、辣、打包"),
                            ("p", "练习一：用“虽然……但是……”造五个句子。"),
                            ("p", "练习二：写一段对话，你和朋友在饭馆点菜，至少八句。"),
                            ("p", "下周三（11月5日）语伴见面的时候交给我。"),
                        ],
                        "第十二课",
                        "李娜",
                    ),
                )
            ],
        )
    )
    q("attachment", "李娜这周给我留了什么练习？", [("mail", _att(name))], lang="zh")
    q("attachment", "when do I have to hand in my Chinese exercises to Li Na?", [("mail", _att(name))], lang="en>zh")

    # --- German xlsx: the volleyball tournament -----------------------------------------------
    name = "Spielplan_Mixed-Cup_2026.xlsx"
    out.home.append(
        Mail(
            berlin(2026, 1, 15, 19, 48),
            MARCO,
            [ME],
            "Mixed-Cup am 31.01. – Spielplan",
            "Moin zusammen,\n\nder Spielplan ist im Anhang. Startgeld bitte bis Sonntag an mich.\n\nMarco",
            attachments=[
                (
                    name,
                    xlsx_t,
                    _xlsx(
                        [
                            (
                                "Spielplan",
                                [
                                    ["Spiel", "Uhrzeit", "Feld", "Team A", "Team B"],
                                    [1, "10:00", 1, "Netzroller", "Sandfüchse"],
                                    [2, "10:00", 2, "Blockparty Neukölln", "Die Baggerseen"],
                                    [3, "10:40", 1, "Sandfüchse", "Blockparty Neukölln"],
                                    [4, "10:40", 2, "Die Baggerseen", "Netzroller"],
                                    [5, "11:20", 1, "Blockparty Neukölln", "Netzroller"],
                                    [6, "11:20", 2, "Sandfüchse", "Die Baggerseen"],
                                ],
                            ),
                            (
                                "Infos",
                                [
                                    ["Was", "Wie"],
                                    ["Unser Team", "Blockparty Neukölln"],
                                    ["Halle", "Sporthalle Lipschitzallee 70"],
                                    ["Treffpunkt", "09:15 vor der Halle"],
                                    ["Startgeld", "15 € pro Person"],
                                ],
                            ),
                        ],
                        "Marco Lehmann",
                    ),
                )
            ],
        )
    )
    q(
        "attachment",
        "what time do we meet at the hall for the volleyball tournament?",
        [("mail", _att(name))],
        lang="en>de",
    )
    q("attachment", "Mixed-Cup: auf welchem Feld spielen wir das erste Spiel?", [("mail", _att(name))], lang="de")

    # --- German odt: Felix's application -------------------------------------------------------
    name = "Anschreiben_BVG.odt"
    out.home.append(
        Mail(
            berlin(2025, 10, 19, 21, 33),
            FELIX,
            [ME],
            "Kannst du mal drüberlesen?",
            "Hi Jan,\n\nkannst du mein Anschreiben korrigieren? Abgabe ist Freitag. Danke dir!\n\nFelix",
            attachments=[
                (
                    name,
                    odt_t,
                    _odt(
                        [
                            ("h1", "Bewerbung als Elektroniker für Betriebstechnik (m/w/d), Kennziffer 2025-BT-0418"),
                            ("p", "Sehr geehrte Frau Krüger,"),
                            (
                                "p",
                                "mit großem Interesse habe ich Ihre Ausschreibung für die Werkstatt Betriebshof "
                                "Lichtenberg gelesen. Nach meiner Ausbildung bei Siemens Energy arbeite ich seit 2021 "
                                "in der Instandhaltung von Schaltanlagen.",
                            ),
                            (
                                "p",
                                "Ich könnte die Stelle zum 01.02.2026 antreten; "
                                "meine Kündigungsfrist beträgt sechs Wochen.",
                            ),
                            ("p", "Mit freundlichen Grüßen\nFelix Hoffmann"),
                        ],
                        "Anschreiben BVG",
                    ),
                )
            ],
        )
    )
    q("attachment", "which job is my brother applying for at the BVG?", [("mail", _att(name))], lang="en>de")
    q("attachment", "Ab wann könnte Felix bei der BVG anfangen?", [("mail", _att(name))], lang="de")

    # --- Spanish odt: a Sunday at the Albufera --------------------------------------------------
    name = "Albufera_domingo.odt"
    out.home.append(
        Mail(
            berlin(2025, 3, 5, 22, 18),
            LUCIA,
            [ME],
            "Plan para el domingo 🚲",
            "¡Hola Jan!\n\nTe mando el plan para el domingo, ¡mira el adjunto!\n\nBesos,\nLucía",
            cte="8bit",
            attachments=[
                (
                    name,
                    odt_t,
                    _odt(
                        [
                            ("h1", "Domingo 16 de marzo: la Albufera"),
                            ("p", "10:00 Alquilamos bicis en Valencia Bikes (Paseo de la Pechina 32), 15 € el día."),
                            (
                                "p",
                                "12:30 Comida en El Palmar, Casa Carmina: arroz del senyoret, reservado a mi nombre.",
                            ),
                            ("p", "18:15 Paseo en barca por el lago para ver la puesta de sol, 6 € por persona."),
                            ("p", "Vuelta a Valencia en bici o en el autobús 25."),
                        ],
                        "Albufera",
                    ),
                )
            ],
        )
    )
    q("attachment", "how much is the boat trip on the Albufera lake?", [("mail", _att(name))], lang="en>es")
    q("attachment", "¿dónde comemos en El Palmar el domingo?", [("mail", _att(name))], lang="es")


# ============================================================================ scanned


def _scanned(out: Inside, rng: random.Random) -> None:
    q = out.q

    # --- in the notes folder: what a scanner app leaves in a folder -----------------------------
    out.files.append(
        (
            "notes/Scans/Scan_2025-02-03_Krankenkasse.pdf",
            _scan_pdf(
                [
                    [
                        "# Techniker Krankenkasse",
                        "Bramfelder Straße 140, 22305 Hamburg",
                        "",
                        "Herrn Jan Hoffmann",
                        "Weserstraße 41, 12045 Berlin",
                        ">Hamburg, 28.01.2025",
                        "",
                        "# Mitgliedsbescheinigung",
                        "Wir bestätigen, dass Herr Jan Hoffmann, geboren am 14.02.1991, seit dem 01.03.2022 bei der "
                        "Techniker Krankenkasse als Arbeitnehmer versichert ist.",
                        "Krankenversichertennummer: T482019377",
                        "Die Pflegeversicherung ist eingeschlossen. "
                        "Diese Bescheinigung gilt zur Vorlage beim Arbeitgeber.",
                        "",
                        "Mit freundlichen Grüßen",
                        "Ihre Techniker Krankenkasse",
                    ]
                ],
                "Scan 2025-02-03",
                rng,
            ),
            datetime(2025, 2, 3, 18, 20, tzinfo=UTC),
        )
    )
    q("scanned", "what is my health insurance number?", [("notes", "T482019377")], lang="en>de")
    q("scanned", "Mitgliedsbescheinigung der Krankenkasse", [("notes", "T482019377")], lang="de")

    out.files.append(
        (
            "notes/Scans/Scan_2025-01-20.pdf",
            _scan_pdf(
                [
                    [
                        "# ARD ZDF Deutschlandradio Beitragsservice",
                        "50656 Köln",
                        "",
                        "Herrn Jan Hoffmann, Weserstraße 41, 12045 Berlin",
                        ">Köln, 10.01.2025",
                        "",
                        "Beitragsnummer 512 884 331",
                        "",
                        "# Zahlungsaufforderung",
                        "Der Rundfunkbeitrag beträgt 18,36 Euro im Monat. Für den Zeitraum Januar bis März 2025 "
                        "sind 55,08 Euro fällig.",
                        "Bitte geben Sie bei jeder Zahlung Ihre Beitragsnummer an.",
                    ],
                    [
                        "# Zahlungsweise",
                        "Sie zahlen vierteljährlich per Lastschrift. Der nächste Betrag wird am 15.02.2025 "
                        "von Ihrem Konto abgebucht.",
                        "",
                        "# Befreiung und Ermäßigung",
                        "Wer Bürgergeld, BAföG oder Grundsicherung erhält, kann sich befreien lassen. Den Antrag "
                        "finden Sie unter rundfunkbeitrag.de.",
                    ],
                ],
                "Scan 2025-01-20",
                rng,
            ),
            datetime(2025, 1, 20, 19, 2, tzinfo=UTC),
        )
    )
    q("scanned", "how much is the TV licence fee per month?", [("notes", "Beitragsnummer")], lang="en>de")
    q("scanned", "Rundfunkbeitrag Beitragsnummer", [("notes", "Beitragsnummer")], lang="de")
    q("scanned", "when will the broadcasting fee be debited next?", [("notes", "Beitragsnummer")], lang="en>de")

    out.files.append(
        (
            "notes/Scans/Certificate_of_employment.pdf",
            _scan_pdf(
                [
                    [
                        "# Fernwerk GmbH",
                        "Skalitzer Straße 85, 10997 Berlin",
                        ">Berlin, 21 July 2025",
                        "",
                        "# Certificate of Employment",
                        "To whom it may concern,",
                        "we hereby confirm that Mr Jan Hoffmann, born 14 February 1991, has been employed by "
                        "Fernwerk GmbH as Senior Backend Engineer since 1 March 2022 on a permanent full-time "
                        "contract. His annual gross salary is EUR 78,000.",
                        "We have approved his annual leave from 26 September to 15 October 2025 and expect him "
                        "back at work on 16 October 2025.",
                        "",
                        "Yours faithfully,",
                        "Priya Nair, Head of Backend",
                    ]
                ],
                "Certificate of employment",
                rng,
            ),
            datetime(2025, 7, 21, 16, 0, tzinfo=UTC),
        )
    )
    q("scanned", "since when have I been employed at Fernwerk?", [("notes", "Certificate of Employment")])
    q("scanned", "the letter from my employer for the China visa application", [("notes", "Certificate of Employment")])
    q("scanned", "what salary does my employment certificate state?", [("notes", "Certificate of Employment")])

    out.files.append(
        (
            "notes/Scans/Impfpass_FSME.pdf",
            _scan_pdf(
                [
                    [
                        "# Impfbescheinigung FSME",
                        "Praxis Dr. med. Thomas Lange, Allgemeinmedizin",
                        "Weichselstraße 3, 12045 Berlin",
                        "",
                        "Patient: Jan Hoffmann, geb. 14.02.1991",
                        "",
                        "1. Impfung: 18.02.2025, FSME-IMMUN Erwachsene, Ch.-B. AB3471",
                        "2. Impfung: 25.03.2025, FSME-IMMUN Erwachsene, Ch.-B. AB3519",
                        "3. Impfung fällig: zwischen September 2025 und März 2026",
                        "Auffrischung danach alle 3 Jahre.",
                        "",
                        "Stempel und Unterschrift",
                    ]
                ],
                "Impfpass",
                rng,
            ),
            datetime(2025, 3, 25, 19, 0, tzinfo=UTC),
        )
    )
    q("scanned", "when is my third tick-borne encephalitis shot due?", [("notes", "Impfbescheinigung")], lang="en>de")
    q("scanned", "FSME Impfung Chargennummer der zweiten Dosis", [("notes", "Impfbescheinigung")], lang="de")

    # --- attached to mails: a scan sent on ------------------------------------------------------
    name = "Aushang_Ablesung.pdf"
    out.home.append(
        Mail(
            berlin(2025, 11, 3, 9, 14),
            INGRID,
            [ME],
            "Aushang zur Kenntnis",
            "Sehr geehrter Herr Hoffmann,\n\nanbei der Aushang zur Kenntnis.\n\nMit freundlichen Grüßen\nI. Baumann",
            charset="iso-8859-1",
            attachments=[
                (
                    name,
                    "application/pdf",
                    _scan_pdf(
                        [
                            [
                                "# Hausverwaltung Baumann",
                                "Karl-Marx-Straße 101, 12043 Berlin",
                                "",
                                "# Ankündigung der Ablesung",
                                "Sehr geehrte Mieterinnen und Mieter der Weserstraße 41,",
                                "am Dienstag, 18.11.2025, zwischen 8 und 12 Uhr werden die Heizkostenverteiler und "
                                "Wasserzähler abgelesen (Firma Techem).",
                                "Bitte sorgen Sie dafür, dass alle Heizkörper und das Bad zugänglich sind.",
                                "Falls Sie verhindert sind: Ersatztermin am 25.11.2025 von 14 bis 18 Uhr, "
                                "Anmeldung unter Tel. 030 6891 4420.",
                                "",
                                "Ingrid Baumann",
                            ]
                        ],
                        "Aushang",
                        rng,
                    ),
                )
            ],
        )
    )
    q("scanned", "when are the meters read in my building?", [("mail", _att(name))], lang="en>de")
    q("scanned", "Ersatztermin Ablesung Heizung", [("mail", _att(name))], lang="de")
    q(
        "scanned",
        "which number do I call if I can't be home for the meter reading?",
        [("mail", _att(name))],
        lang="en>de",
    )

    name = "Scan_Rezept_Oma.pdf"
    out.home.append(
        Mail(
            berlin(2025, 11, 23, 17, 45),
            MUM,
            [ME],
            "Omas Apfelkuchen",
            "Hallo Jan,\n\nhier das Rezept von Oma, ich hab's eingescannt. Viel Spaß beim Backen!\n\nMama",
            attachments=[
                (
                    name,
                    "application/pdf",
                    _scan_pdf(
                        [
                            [
                                "# Omas versunkener Apfelkuchen",
                                "",
                                "Zutaten: 125 g Butter, 125 g Zucker, 1 Päckchen Vanillezucker, 3 Eier, 200 g Mehl, "
                                "2 TL Backpulver, 4 säuerliche Äpfel (Boskoop)",
                                "",
                                "Butter, Zucker und Vanillezucker schaumig rühren, die Eier einzeln unterrühren. "
                                "Mehl und Backpulver mischen und unterheben.",
                                "Den Teig in eine gefettete Springform (26 cm) geben. Äpfel schälen, vierteln, "
                                "mehrmals einritzen und in den Teig drücken.",
                                "Bei 180 Grad Ober- und Unterhitze 45 Minuten backen.",
                                "Mit Puderzucker bestäuben. Schmeckt am nächsten Tag noch besser!",
                            ]
                        ],
                        "Rezept",
                        rng,
                    ),
                )
            ],
        )
    )
    q("scanned", "how long does grandma's apple cake bake, and how hot?", [("mail", _att(name))], lang="en>de")
    q("scanned", "welche Äpfel nimmt man für Omas Apfelkuchen?", [("mail", _att(name))], lang="de")

    name = "DELE_B2_calificaciones.pdf"
    out.home.append(
        Mail(
            berlin(2025, 7, 28, 11, 5),
            ("Instituto Cervantes Berlín", "examenes.berlin@cervantes.es"),
            [ME],
            "DELE B2 – convocatoria de mayo 2025",
            "Estimado candidato:\n\nle adjuntamos el documento con sus calificaciones. El diploma se le "
            "enviará por correo postal.\n\nAtentamente,\nDepartamento de Exámenes",
            charset="iso-8859-1",
            attachments=[
                (
                    name,
                    "application/pdf",
                    _scan_pdf(
                        [
                            [
                                "# Instituto Cervantes",
                                "Diploma de Español como Lengua Extranjera (DELE), nivel B2",
                                "Convocatoria: mayo de 2025, centro de examen Berlín",
                                "",
                                "Candidato: Jan Hoffmann · Inscripción n.º 2025-BER-03318",
                                "",
                                "Comprensión de lectura y auditiva: 20,40 / 25",
                                "Expresión e interacción escritas: 17,50 / 25",
                                "Expresión e interacción orales: 21,00 / 25",
                                "",
                                "Calificación final: APTO (78,40 puntos)",
                            ]
                        ],
                        "DELE",
                        rng,
                    ),
                )
            ],
        )
    )
    q("scanned", "did I pass the DELE B2, and with how many points?", [("mail", _att(name))], lang="en>es")
    q("scanned", "¿qué nota saqué en la expresión escrita del DELE?", [("mail", _att(name))], lang="es")
    q("scanned", "número de inscripción del DELE B2", [("mail", _att(name))], lang="es")

    name = "faire-part.pdf"
    out.home.append(
        Mail(
            berlin(2025, 3, 2, 11, 20),
            CAMILLE,
            [ME],
            "Ça y est !!",
            "Jan !!\n\nOn se marie ! Le faire-part scanné est en pièce jointe, la version papier arrive par "
            "la poste.\n\nBisous,\nCamille",
            attachments=[
                (
                    name,
                    "application/pdf",
                    _scan_pdf(
                        [
                            [
                                "",
                                "",
                                "# Camille & Julien",
                                "ont la joie de vous annoncer leur mariage",
                                "le samedi 12 juillet 2025 au Domaine des Tilleuls, Chaponost.",
                                "",
                                "Merci de confirmer votre présence avant le 1er juin 2025",
                                "par SMS au 06 71 42 88 19 ou sur notre site.",
                                "",
                                "Liste de mariage : voyage de noces au Japon, cagnotte en ligne",
                                "sur camille-et-julien.fr, code invité TILLEULS25.",
                            ]
                        ],
                        "Faire-part",
                        rng,
                    ),
                )
            ],
        )
    )
    q(
        "scanned",
        "by when did Camille and Julien want us to confirm for the wedding?",
        [("mail", _att(name))],
        lang="en>fr",
    )
    q("scanned", "liste de mariage Camille et Julien", [("mail", _att(name))], lang="fr")


# ============================================================================ screenshots


def _screenshots(out: Inside) -> None:
    q = out.q

    def shot(name: str, mtime: datetime, rows, **kw) -> str:
        out.files.append((f"notes/Screenshots/{name}", _screenshot(rows, **kw), mtime))
        return f"Picture {name}"

    lisbon = shot(
        "Bildschirmfoto 2024-10-11 um 19.02.44.png",
        datetime(2024, 10, 11, 17, 2, 44, tzinfo=UTC),
        [
            ("h", "Check-in instructions"),
            ("s", "Casa Alfama · hosted by Rui"),
            ("", ""),
            ("t", "Wi-Fi network: CasaAlfama_5G"),
            ("t", "Password: fado&pasteis2024"),
            ("", ""),
            ("t", "Key box code: 3917 (left of the blue door)"),
            ("t", "Check-out by 11:00, leave the keys on the table"),
        ],
        bar="Messages – Airbnb",
    )
    q("screenshot", "what was the wifi password at the flat in Lisbon?", [("notes", lisbon)])
    q("screenshot", "key box code for the Alfama apartment", [("notes", lisbon)])
    q("screenshot", "what time was check-out at the Airbnb in Lisbon?", [("notes", lisbon)])

    hangzhou = shot(
        "Bildschirmfoto 2025-09-21 um 09.41.10.png",
        datetime(2025, 9, 21, 7, 41, 10, tzinfo=UTC),
        [
            ("h", "Booking confirmed"),
            ("t", "West Lake Courtyard Guesthouse, Hangzhou"),
            ("s", "Beishan Road 18, Xihu District"),
            ("", ""),
            ("t", "Booking number: 1628 5530 9184   PIN: 4417"),
            ("t", "Check-in: Mon 6 Oct 2025, from 14:00"),
            ("t", "Check-out: Thu 9 Oct 2025, until 12:00"),
            ("t", "Total: CNY 1,386 (pay at the property)"),
        ],
        bar="booking.com",
    )
    q("screenshot", "booking number of the guesthouse in Hangzhou", [("notes", hangzhou)])
    q("screenshot", "how much will the Hangzhou guesthouse cost, and do I pay in advance?", [("notes", hangzhou)])

    redis = shot(
        "Bildschirmfoto 2025-11-20 um 15.27.52.png",
        datetime(2025, 11, 20, 14, 27, 52, tzinfo=UTC),
        [
            ("m", "$ kubectl -n billing logs billing-api-7c9f6d-x2kq --tail=4"),
            ("m", "Error: connect ECONNREFUSED 10.42.3.17:6379"),
            ("m", "  at TCPConnectWrap.afterConnect (node:net:1607:16)"),
            ("m", "redis: connection pool exhausted (max=50)"),
            ("m", "$ kubectl -n billing get pods | grep redis"),
            ("m", "redis-cache-0   0/1   CrashLoopBackOff   7   14m"),
        ],
        dark=True,
        bar="Terminal — zsh",
        width=760,
    )
    q("screenshot", "screenshot of billing-api failing to connect to redis", [("notes", redis)])
    q("screenshot", "ECONNREFUSED 6379 billing", [("notes", redis)])
    q("screenshot", "which pod was in CrashLoopBackOff when the billing api lost its cache?", [("notes", redis)])

    transfer = shot(
        "Bildschirmfoto 2026-01-16 um 08.12.03.png",
        datetime(2026, 1, 16, 7, 12, 3, tzinfo=UTC),
        [
            ("h", "Überweisung ausgeführt"),
            ("", ""),
            ("t", "Empfänger: Marco Lehmann"),
            ("t", "Betrag: 30,00 €"),
            ("t", "Verwendungszweck: Mixed-Cup Startgeld Jan + Sophie"),
            ("t", "Ausgeführt am 16.01.2026"),
        ],
        bar="Banking",
    )
    q("screenshot", "Überweisung an Marco fürs Startgeld", [("notes", transfer)], lang="de")
    q("screenshot", "did I pay the tournament entry fee, and how much?", [("notes", transfer)], lang="en>de")

    esim = shot(
        "Bildschirmfoto 2025-09-24 um 18.30.12.png",
        datetime(2025, 9, 24, 16, 30, 12, tzinfo=UTC),
        [
            ("h", "Your eSIM is ready"),
            ("t", "China 10 GB · 30 days"),
            ("", ""),
            ("s", "Manual installation"),
            ("t", "SM-DP+ address: smdp.esimgo.io"),
            ("t", "Activation code: K2-1Q8T7-9XVP3Z"),
            ("t", "Works with VPN-free access to Google and WhatsApp"),
        ],
        bar="eSIM",
    )
    q("screenshot", "activation code for the eSIM for the China trip", [("notes", esim)])
    q("screenshot", "wie installiere ich die eSIM für China von Hand?", [("notes", esim)], lang="de>en")

    # --- attached to mails --------------------------------------------------------------------
    name = "Screenshot 2025-11-20 at 14.22.31.png"
    out.work.append(
        Mail(
            berlin(2025, 11, 20, 14, 25),
            TOM,
            [ME_WORK],
            "billing-api 502s since 14:10",
            "Jan, see screenshot. Any idea? I'm looking at the ingress now.\n\nTom",
            attachments=[
                (
                    name,
                    "image/png",
                    _screenshot(
                        [
                            ("h", "FIRING: BillingApiHigh5xx"),
                            ("s", "service billing-api · cluster prod-fra-1 · since 14:10"),
                            ("", ""),
                            ("t", "502 Bad Gateway: upstream connect error or disconnect/reset"),
                            ("t", "before headers. reset reason: connection termination"),
                            ("", ""),
                            ("t", "error rate 23.4 % (threshold 5 %)"),
                        ],
                        bar="Grafana – Alerting",
                    ),
                )
            ],
        )
    )
    q("screenshot", "what error rate did the billing alert show in Tom's screenshot?", [("mail", _att(name))])
    q("screenshot", "upstream connect error reset reason connection termination", [("mail", _att(name))])
    q("screenshot", "which cluster was the BillingApiHigh5xx alert firing in?", [("mail", _att(name))])

    name = "IMG_2291.PNG"
    out.home.append(
        Mail(
            berlin(2025, 12, 8, 19, 3),
            MUM,
            [ME],
            "Neue Nummer von Tante Gisela",
            "Hallo Jan,\n\nGisela hat eine neue Handynummer, siehe Bild. Ruf sie doch mal an!\n\nMama",
            attachments=[
                (
                    name,
                    "image/png",
                    _screenshot(
                        [
                            ("h", "Gisela Hoffmann-Weber"),
                            ("", ""),
                            ("s", "mobil"),
                            ("t", "+49 172 5550 3318"),
                            ("s", "privat"),
                            ("t", "0511 4471 220"),
                            ("s", "Adresse"),
                            ("t", "Lindener Marktplatz 6, 30449 Hannover"),
                        ],
                        width=560,
                        bar="Kontakte",
                    ),
                )
            ],
        )
    )
    q("screenshot", "what's aunt Gisela's new mobile number?", [("mail", _att(name))], lang="en>de")
    q("screenshot", "Tante Gisela Adresse in Hannover", [("mail", _att(name))], lang="de")
    q("screenshot", "Giselas Festnetznummer", [("mail", _att(name))], lang="de")

    name = "IMG_0412.PNG"
    out.home.append(
        Mail(
            berlin(2025, 7, 8, 22, 40),
            CAMILLE,
            [ME],
            "Le code pour l'immeuble",
            "Pour vendredi soir, si tu arrives avant nous !\n\nBises",
            attachments=[
                (
                    name,
                    "image/png",
                    _screenshot(
                        [
                            ("h", "Appart Lyon"),
                            ("", ""),
                            ("t", "Digicode : 47B21"),
                            ("t", "Interphone : DURAND-MOREAU"),
                            ("t", "3e étage, porte gauche"),
                            ("t", "La clé est chez la voisine, Mme Petit (2e)"),
                        ],
                        width=560,
                        bar="Notes",
                    ),
                )
            ],
        )
    )
    q("screenshot", "what's the door code for Camille's building in Lyon?", [("mail", _att(name))], lang="en>fr")
    q("screenshot", "chez qui est la clé de l'appartement de Camille ?", [("mail", _att(name))], lang="fr")


# ============================================================================ photos


# (file, taken, UTC offset, lat, lon, camera, scene)
_IPHONE = ("Apple", "iPhone 13")
_FUJI = ("FUJIFILM", "X-T30")
_PHOTOS = [
    ("IMG_3871.JPG", "2024:10:11 17:42:10", "+01:00", 38.7114, -9.1305, _IPHONE, "town/dusk"),  # Alfama
    ("IMG_3902.JPG", "2024:10:12 11:05:33", "+01:00", 38.6916, -9.2160, _IPHONE, "sea/day"),  # Belém: Alges
    ("IMG_3925.JPG", "2024:10:13 19:20:02", "+01:00", 38.7134, -9.1446, _IPHONE, "town/dusk"),  # Bairro Alto
    ("IMG_5530.JPG", "2025:06:17 13:48:51", "+01:00", 38.7100, -9.1380, _IPHONE, "town/day"),  # Baixa
    ("IMG_5541.JPG", "2025:06:17 20:55:12", "+01:00", 38.7075, -9.1365, _IPHONE, "sea/dusk"),  # Praça do Comércio
    ("IMG_5602.JPG", "2025:06:21 16:10:40", "+02:00", 48.1374, 11.5755, _IPHONE, "town/day"),  # Marienplatz
    ("IMG_5618.JPG", "2025:06:22 11:30:05", "+02:00", 48.1351, 11.5762, _IPHONE, "town/day"),  # Viktualienmarkt
    ("DSCF0412.JPG", "2025:03:15 14:00:21", "+01:00", 39.4697, -0.3774, _FUJI, "town/day"),  # mascletà
    ("DSCF0455.JPG", "2025:03:16 18:40:09", "+01:00", 39.4167, -0.3333, _FUJI, "sea/dusk"),  # El Palmar: Alfafar
    ("DSCF0501.JPG", "2025:03:17 23:10:44", "+01:00", 39.4800, -0.3830, _FUJI, "town/night"),  # a falla
    ("DSCF1120.JPG", "2025:07:11 20:15:30", "+02:00", 45.7623, 4.8220, _FUJI, "town/dusk"),  # Fourvière
    ("DSCF1187.JPG", "2025:07:12 16:02:11", "+02:00", 45.7100, 4.7420, _FUJI, "mountain/day"),  # Chaponost
    ("IMG_6120.JPG", "2025:09:30 19:30:18", "+08:00", 31.2400, 121.4900, _IPHONE, "town/night"),  # the Bund
    ("IMG_6244.JPG", "2025:10:04 05:49:02", "+08:00", 30.1420, 118.1650, _IPHONE, "mountain/dawn"),  # Shixin Peak
    ("IMG_6310.JPG", "2025:10:07 10:15:47", "+08:00", 30.2741, 120.1551, _IPHONE, "town/day"),  # Hangzhou
    ("IMG_6342.JPG", "2025:10:07 15:22:31", "+08:00", 30.2230, 120.1200, _IPHONE, "mountain/day"),  # Longjing: Xihu
]


def _photos(out: Inside, rng: random.Random) -> None:
    q = out.q
    mtime = datetime(2025, 10, 20, 20, 0, tzinfo=UTC)  # the day the phone was backed up
    p: dict[str, str] = {}
    for name, taken, offset, lat, lon, (make, model), look in _PHOTOS:
        folder = "notes/Fotos/Fuji" if make == "FUJIFILM" else "notes/Fotos/iPhone"
        out.files.append((f"{folder}/{name}", _photo(rng, taken, offset, lat, lon, make, model, look), mtime))
        p[name[:-4]] = f"Photo {name},"
    n = lambda *names: [("notes", p[x]) for x in names]  # noqa: E731

    attached = ["20250315_135512.jpg", "20250315_141208.jpg"]
    out.home.append(
        Mail(
            berlin(2025, 3, 19, 23, 2),
            LUCIA,
            [ME],
            "Fotos 📸",
            "¡Jan! Aquí van mis fotos del sábado, ¡qué día!\n\nUn beso,\nLucía",
            cte="8bit",
            attachments=[
                (f, "image/jpeg", _photo(rng, t, "+01:00", 39.4699, -0.3763, "samsung", "Galaxy S23", "town/day"))
                for f, t in zip(attached, ("2025:03:15 13:55:12", "2025:03:15 14:12:08"))
            ],
        )
    )
    lucia = [("mail", _att(f)) for f in attached]

    q(
        "photo",
        "photos from Lisbon in October 2024",
        n("IMG_3871", "IMG_3902", "IMG_3925"),
        where={"place": {"contains": "Lisbon"}},
        after="2024-10-01",
        before="2024-11-01",
        distractors=n("IMG_5530", "IMG_5541"),
    )
    q("photo", "Fotos vom Urlaub in Lissabon im Oktober 2024", n("IMG_3871", "IMG_3902", "IMG_3925"), lang="de")
    q("photo", "photos I took in Lisbon in June 2025", n("IMG_5530", "IMG_5541"))
    q(
        "photo",
        "Fotos aus Portugal",
        n("IMG_3871", "IMG_3902", "IMG_3925", "IMG_5530", "IMG_5541"),
        where={"country": "PT"},
        lang="de",
    )
    q("photo", "Fotos aus München", n("IMG_5602", "IMG_5618"), where={"city": "Munich"}, lang="de")
    q("photo", "pictures from my weekend in Munich in June", n("IMG_5602", "IMG_5618"))
    q("photo", "photos from the Fallas in Valencia", n("DSCF0412", "DSCF0501") + lucia)
    q(
        "photo",
        "fotos de Valencia de marzo de 2025",
        n("DSCF0412", "DSCF0455", "DSCF0501"),
        where={"place": {"contains": "Valencia"}},
        after="2025-03-01",
        before="2025-04-01",
        lang="es",
    )
    q("photo", "the photos Lucía sent me from the mascletà", lucia)
    q(
        "photo",
        "pictures from my Fuji camera",
        n("DSCF0412", "DSCF0455", "DSCF0501", "DSCF1120", "DSCF1187"),
        where={"camera": {"contains": "X-T30"}},
    )
    q("photo", "photos de Lyon", n("DSCF1120"), where={"city": "Lyon"}, lang="fr")
    q(
        "photo",
        "photos from Camille's wedding day",
        n("DSCF1187"),
        where={"format": "image"},
        after="2025-07-12",
        before="2025-07-13",
        distractors=n("DSCF1120"),
    )
    q("photo", "photos taken in France in July 2025", n("DSCF1120", "DSCF1187"), where={"country": "FR"})
    q("photo", "photos from Shanghai at night", n("IMG_6120"))
    q("photo", "上海外滩的照片", n("IMG_6120"), lang="zh")
    q("photo", "sunrise photos from the top of Huangshan", n("IMG_6244"))
    q("photo", "photos from Hangzhou", n("IMG_6310", "IMG_6342"))
    q("photo", "杭州的照片", n("IMG_6310", "IMG_6342"), lang="zh")
    q(
        "photo",
        "photos from the China trip",
        n("IMG_6120", "IMG_6244", "IMG_6310", "IMG_6342"),
        where={"country": "CN"},
        after="2025-09-28",
        before="2025-10-16",
    )
    q("photo", "fotos de España", n("DSCF0412", "DSCF0455", "DSCF0501"), lang="es")
    q(
        "photo",
        "photos from 7 October 2025",
        n("IMG_6310", "IMG_6342"),
        where={"format": "image"},
        after="2025-10-07",
        before="2025-10-08",
        distractors=n("IMG_6244"),
    )
