"""Pictures to be read by OCR and EXIF: scans (an A4 letter drawn with dust, saved as an image-only
PDF), screenshots (PNG) and phone photos (a drawn scene in a JPEG with the EXIF a phone writes).

Text is drawn with a TrueType font found at run time (DejaVu or Liberation, else the font Pillow
ships), so the pictures are the same on one machine and readable on any. They stay small (at most
800 pixels a side) so that reading a home's pictures costs few OCR passes.
"""

from __future__ import annotations

import io
import random
import time
from typing import Any

from ragbag_evalsets.formats import FIXED

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


def font_files() -> list[str]:
    """The file each style of text is drawn with on this machine: what the pictures' bytes depend on."""
    return [getattr(_font(16, style), "path", "Pillow's bundled font") for style in _FONTS]


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


def scan_pdf(pages: list[list[str]], title: str, rng: random.Random) -> bytes:
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


def screenshot(rows: list[tuple[str, str]], width: int = 720, dark: bool = False, bar: str = "") -> bytes:
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


def photo(
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
