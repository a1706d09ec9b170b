"""How long what builds published stays on disk, and removing a source altogether.

A source's publication pins the LanceDB table versions it was built from; every table version
after the oldest pin must stay. Retention (``storage.keep_versions``) moves publications that
have not been rebuilt for that long onto the newest versions (a republish: the same index, new
pins) so the older table versions can go. Removing a source deletes its rows, its index files
and its read cursor; purging also rewrites the tables so that none of its bytes stay.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta

from ragbag.core.home import Home, Source
from ragbag.index import published
from ragbag.index.store import SOURCE_TABLES, Store
from ragbag.pipeline import changes, cursor, screen
from ragbag.text.ocr import source_cache_folders


def retain(store: Store, home: Home, just_published: Source) -> None:
    """After a publish: drop the table versions no index needs any more (``storage.keep_versions``).

    A source's publication pins the versions it was built from, and every version after the
    oldest pin must stay; so a source not rebuilt for longer than the retention is moved to
    the newest versions first, when its rows there are the ones it was built from.
    """
    keep = home.keep_versions
    stale = datetime.now(UTC) - keep
    for name, other in home.sources().items():
        # Only the date here (republish checks the index before it touches it).
        pinned = published.pinned_at(home.index_dir(other.connector, name))
        if pinned is None:
            continue  # never built, or damaged: its next build publishes afresh
        if name != just_published.name and pinned < stale:
            republish(store, home, other)
    store.prune(keep)


def republish(store: Store, home: Home, source: Source) -> bool:
    """Publish a source's current index again, pinned to the newest table versions, when its
    rows there are exactly those it was built from (False, and nothing done, otherwise: a
    build of it is under way or was killed, and its next build publishes)."""
    manifest = published.published_manifest(home, source, store)
    if manifest is None or not store.unchanged_since(source.name, manifest["versions"]):
        return False
    version = published.copy_current(home.index_dir(source.connector, source.name))
    versions = store.publish(source.name)
    pinned = {**manifest, "versions": versions, "pinned_at": datetime.now(UTC).isoformat(timespec="seconds")}
    published.write_manifest(version, pinned)
    published.swap_current(version)
    return True


def remove(store: Store, home: Home, source: Source) -> None:
    """Delete a source's rows from every table, its index files, its read cursor, its OCR cache and
    the list of the secrets found in it."""
    store.delete_source(source.name)
    shutil.rmtree(home.index_dir(source.connector, source.name), ignore_errors=True)
    cursor.path(home, source).unlink(missing_ok=True)
    for folder in source_cache_folders(source.name, home.tmp_dir):  # text read from its pictures
        shutil.rmtree(folder, ignore_errors=True)
    changes.forget(home, source)
    screen.forget(home, source.name)


def purge(store: Store, home: Home, source: Source) -> list[str]:
    """Remove a source so that none of its bytes stay on disk: its rows, the cached vectors of
    texts only it had, the data files and table versions that held them, its index files and
    cursor. Every other source is republished on the rewritten tables; those that cannot be
    (a build of them under way) are returned: their pinned versions still hold the removed
    text until their next build."""
    store.forget_vectors(source.name)
    remove(store, home, source)
    return _scrub(store, home, source.name)


def purge_excluded(store: Store, home: Home, source: Source) -> list[str]:
    """After a build of ``source`` dropped what its exclusion rules now name (rows and versions,
    ``pipeline.ingest``): the bytes left of it go too — cached vectors no chunk uses, the data
    files and table versions that held the rows, the index versions the build superseded and the
    text its pictures were read into. Returns the other sources that could not be republished
    (as :func:`purge`)."""
    store.forget_unused_vectors()
    for folder in source_cache_folders(source.name, home.tmp_dir):
        shutil.rmtree(folder, ignore_errors=True)
    held = _scrub(store, home)
    published.drop_superseded(home.index_dir(source.connector, source.name))
    return held


def _scrub(store: Store, home: Home, removed: str | None = None) -> list[str]:
    """Rewrite every table so no data file holds a deleted row, republish the other sources on the
    new versions (all but ``removed``), and drop every older version; returns the sources that could not be republished
    (a build of them under way: their pinned versions stay until their next build)."""
    for name in (*SOURCE_TABLES, "embedding_cache"):
        store.rewrite(name)
    store.compact(fragments_over=0)
    held = [
        name
        for name, other in sorted(home.sources().items())
        if name != removed and published.published_manifest(home, other) and not republish(store, home, other)
    ]
    store.prune(timedelta(0), purge=True)
    return held
