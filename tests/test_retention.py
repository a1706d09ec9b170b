"""Table versions search no longer needs are cleaned up after each build (`storage.keep_versions`)."""

from __future__ import annotations

import pytest

from conftest import cli, cli_json, write
from ragbag import query
from ragbag.store import PUBLISHED, Store


def _versions(home) -> dict[str, int]:
    store = Store(home.lance_uri)
    return {name: len(store.table(name).list_versions()) for name in PUBLISHED}


@pytest.mark.slow(seconds=45)
def test_old_versions_go_and_every_source_stays_searchable(home, tmp_path):
    a = write(tmp_path / "a", {"a.md": "# Harbour\n\nThe lighthouse keeper logs the tide every dawn.\n"})
    b = write(tmp_path / "b", {"b.md": "# Bread\n\nFeed the sourdough starter twice a day.\n"})
    cli("add", "files", "a", str(a))
    cli("add", "files", "b", str(b))
    cli("config", "set", "storage.keep_versions", "0")
    cli("build")
    for i in range(2):  # two refreshes of `a`; `b` is untouched and pinned to older versions
        write(a, {f"n{i}.md": f"# Note {i}\n\nKayak booking KX{i:04d}.\n"})
        (report,) = cli_json("build", "a")
        assert report["status"] == "success"
    # Kept: the newest version and the ones a publication pins (each source republished onto
    # the newest when it was older than the retention), nothing in between.
    assert all(n <= 2 for n in _versions(home).values()), _versions(home)
    query._loaded.clear()
    assert query.search("sourdough starter", home=home, k=1, mode="keyword").iloc[0]["source"] == "b"
    assert query.search("KX0001", home=home, k=1, mode="keyword").iloc[0]["source"] == "a"

    cli("config", "set", "storage.keep_versions", "1h")  # the default: recent versions stay
    before = _versions(home)
    write(a, {"n9.md": "# Note 9\n\nKayak booking KX0009.\n"})
    cli("build", "a")
    assert _versions(home)["chunks"] > before["chunks"]


def test_a_retention_is_a_duration():
    from ragbag.errors import RagbagError
    from ragbag.home import retention

    assert retention("90s").total_seconds() == 90 and retention("2h").total_seconds() == 7200
    assert retention("0").total_seconds() == 0 and retention("1.5d").total_seconds() == 129600
    for bad in ("", "soon", "-1h", "1w", "nan", "99999999d"):
        with pytest.raises(RagbagError):
            retention(bad)
