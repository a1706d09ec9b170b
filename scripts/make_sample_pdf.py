"""Write sample/docs/heat-pump-manual.pdf: the sample data's one PDF (visual citations, README).

The text is the project's own (a made-up owner's notes for a heat pump, no real product), set in
the standard Helvetica fonts every PDF reader has, so the file embeds no font and is a few KB.
The bytes are the same on every run. Run from the repository root:
``.venv/bin/python scripts/make_sample_pdf.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from ragbag_evalsets.formats.pdf import pdf_file

OUT = Path("sample/docs/heat-pump-manual.pdf")
TITLE = "Heat pump: owner's notes"
# Per page: ("h", heading) or ("p", paragraph).
PAGES = [
    [
        ("t", TITLE),
        (
            "p",
            "These notes cover the air-to-water heat pump that heats the house and its hot water: where "
            "its parts are, what to look after, and what is normal. The outdoor unit stands on the north "
            "side of the house, on a concrete plinth with 30 centimetres of clearance on every side. The "
            "indoor unit, with the hot water cylinder, is in the utility room next to the washing machine.",
        ),
        ("h", "Looking after the outdoor unit"),
        (
            "p",
            "Keep leaves, snow and garden furniture away from the fins: the unit draws air through them "
            "all winter, and a blocked coil makes it work harder for the same heat. Brush the fins gently "
            "from top to bottom with a soft brush in autumn, never with a pressure washer, which bends "
            "them. The condensate runs out of a drain under the unit; if ice builds up around it in a "
            "hard frost, pour warm (not boiling) water over the drain and check it again the next day.",
        ),
        ("h", "Filter and strainer"),
        (
            "p",
            "Clean the magnetic filter on the return pipe every six months, in March and September: "
            "close both valves, unscrew the cap, rinse the magnet under the tap and refit it. Then "
            "open the valves again and top the system up to 1.5 bar on the pressure gauge with the "
            "filling loop under the cylinder. The strainer in front of the indoor unit is rinsed once "
            "a year, before the heating season starts. A pressure below 0.8 bar stops the pump: top "
            "it up as above, and if it drops again within a week, call the installer.",
        ),
        ("h", "Sounds and what they mean"),
        (
            "p",
            "A low hum from the outdoor unit is the compressor; it is loudest at full power on the "
            "coldest mornings. Clicking from the indoor unit when hot water starts is the three-way valve "
            "switching over. Gurgling in the radiators means air in the system: bleed them from the top "
            "floor down, starting with the radiator furthest from the indoor unit, and top up the "
            "pressure afterwards. A rattle from the outdoor unit is usually a twig caught in the fan guard.",
        ),
        ("h", "Defrost cycle"),
        (
            "p",
            "In cold, damp weather the outdoor unit defrosts itself every 40 to 90 minutes: the fan "
            "stops, steam rises from the fins and the radiators cool for about five minutes. This is "
            "normal and needs no action. Several defrosts an hour in dry weather are not normal: "
            "check that the fins are clean and that nothing blocks the air flow around the unit.",
        ),
    ],
    [
        ("h", "Settings that work"),
        (
            "p",
            "Heating curve 0.6 with a room influence of 3 keeps the living room at 21 degrees without "
            "overshooting. Hot water is heated to 48 degrees at night, on the cheap tariff between 01:00 "
            "and 05:00; once a week the legionella programme raises it to 60 degrees, on Sunday at 02:00. "
            "Holiday mode keeps the house at 15 degrees and turns the hot water off; it is set from the "
            "menu under Programmes, with the date of return.",
        ),
        ("h", "Service and warranty"),
        (
            "p",
            "The installer, Nordvarme ApS, services the unit every second spring. The last service was in "
            "April 2025: refrigerant pressure normal, condensate drain cleared, expansion vessel topped up. "
            "The warranty on the compressor runs until March 2031, as long as the services are done on "
            "time; the service book is in the folder on the utility room shelf.",
        ),
    ],
]
FONTS = {"t": ("F2", 18, 26), "h": ("F2", 12, 18), "p": ("F1", 10.5, 14)}  # font, size, leading
WRAP = 92  # characters a body line: Helvetica 10.5 pt averages ~5 pt a character, within 468 pt


def page_stream(blocks: list[tuple[str, str]]) -> bytes:
    ops, y = ["BT"], 740.0
    for kind, text in blocks:
        font, size, leading = FONTS[kind]
        if kind != "t" and y < 740:
            y -= 8  # space above a heading or paragraph
        ops.append(f"/{font} {size} Tf")
        for line in textwrap.wrap(text, WRAP) if kind == "p" else [text]:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"1 0 0 1 72 {y:.1f} Tm ({escaped}) Tj")
            y -= leading
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def build() -> bytes:
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(len(PAGES)))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(PAGES)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    ]
    for n, blocks in enumerate(PAGES):
        stream = page_stream(blocks)
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>" % (6 + 2 * n)
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objs.append(f"<< /Title ({TITLE}) /Producer (ragbag scripts/make_sample_pdf.py) >>".encode())
    return pdf_file(objs, f" /Info {len(objs)} 0 R")


if __name__ == "__main__":
    OUT.write_bytes(build())
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
