"""The published index of a source: what search reads, and the one owner of its on-disk layout.

A source's index directory holds numbered versions and a ``current`` symlink naming the one
search reads::

    current -> vN              swapped in one rename (``swap_current``): a reader sees the old
                               version or the new one, never half of either
    vN/manifest.json           what the version was built from, with the table versions it pins
    vN/chunk_ids.json          the index's rows in order: row i of bm25/ is node i of graph/
    vN/.chunk_ids.sha256       chunk_ids.json's hash when it was published (its seal)
    vN/bm25/                   the keyword index (bm25s's layout, written and read by ``bm25`` with
                               numpy alone) and each text's tokens, for the next version to reuse
    vN/graph/                  the proximity graph
    vN/rows.arrow              the chunks' fields search shows, row i = chunk_ids[i] (Arrow IPC)
    vN/vectors.npy             their vectors, row i = chunk_ids[i] (a fast source; none: compact)
    vN/people.json             how many rows name each person in their people fields (search's
                               directory of names, without reading every record)
    vN/spellings.json          those names' spellings in Latin letters, for the names that have
                               any (the directory's, without a spelling library in a search)
    vN/.superseded             in a replaced version: its mtime is when it was replaced

The build writes a version and swaps ``current``; search, the agent's tools, the checks and the
CLI read it through this module, so none of them has to import the build to find its files.
LanceDB stays the store of record; ``rows.arrow`` and ``vectors.npy`` are copies of the pinned
rows written at publish, so a search opens a source by mapping two files, without importing
LanceDB (whose import alone is most of a cold search). A version published before they existed
is read from the tables it pins.
A version found incomplete or inconsistent is a ``DamagedIndex`` that names the source.

Long because it is the one owner of the published layout: every file of a version is written,
sealed, swapped in, read and checked for damage here, and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc  # noqa: F401  (pa.ipc)

from ragbag.core.errors import DamagedIndex
from ragbag.core.home import Home, Source
from ragbag.core.rows import ChunkRow, columns
from ragbag.core.settings import DEFAULT_MODEL
from ragbag.index import graph
from ragbag.index.store import PUBLISHED as PUBLISHED_TABLES
from ragbag.index.store import Store

CURRENT = "current"
MANIFEST = "manifest.json"
CHUNK_IDS = "chunk_ids.json"
BM25_DIR = "bm25"
GRAPH_DIR = "graph"
ROWS = "rows.arrow"
VECTORS = "vectors.npy"
PEOPLE = "people.json"
SPELLINGS = "spellings.json"  # the counted names' spellings in Latin letters (those that have any)
LANGUAGES = "languages.json"  # each row's language, and each language's sum of vectors and count
ALIGNED = "aligned.npy"  # each row's vector by the encoder aligned across languages (float16)
# The chunks' columns ``ROWS`` holds: what search shows and filters on, and what reranking and a
# compact source's recomputing read (content_hash, index_text).
ROW_FIELDS = tuple(name for name, (_, col) in columns(ChunkRow).items() if col.published)
# A version a publish superseded stays readable this long: a search that followed ``current``
# just before the swap is still reading its files (a big source's load takes seconds). A later
# publish deletes it after that; a reader slower still re-reads ``current`` (``ragbag.search.snapshot.load``).
SUPERSEDED_GRACE_S = 120.0
SUPERSEDED = ".superseded"  # in a version directory: its mtime is when it was superseded
_SEAL = ".chunk_ids.sha256"  # in a version directory: chunk_ids.json's hash when it was published


# -- reading ---------------------------------------------------------------------------------


def current_link(base: Path) -> Path:
    """The ``current`` symlink of a source's index directory ``base``."""
    return base / CURRENT


def current_version(base: Path, source: str) -> str | None:
    """The version directory ``current`` names (None when the source was never published)."""
    try:
        return os.readlink(current_link(base))
    except FileNotFoundError:
        return None
    except OSError:
        raise DamagedIndex(source, f"{current_link(base)} is not a link to a version") from None


def home_model(home: Home) -> str:
    """The embedding model a home indexes and queries with: ``embedding.model`` from config.yaml,
    else the model its published indexes were built with, else the default. A home built before
    the default model changed keeps its model (and its index) until the user chooses another,
    instead of being refused as stale."""
    configured = home.get_config("embedding.model")
    if configured:
        return str(configured)
    for manifest in sorted(home.index_root.glob(f"*/*/{CURRENT}/{MANIFEST}")):
        try:
            model = json.loads(manifest.read_text()).get("model")
        except (OSError, ValueError):
            continue
        if model:
            return str(model)
    return DEFAULT_MODEL


def published_manifest(home: Home, source: Source, store: Store | None = None) -> dict[str, Any] | None:
    """The manifest of what search reads for this source; None when it was never built or its
    published index is damaged: a damaged index is never "unchanged", so the next publish
    replaces it (``published`` says what is wrong). ``store``: an open one to check with."""
    try:
        return published(home, source, store)
    except DamagedIndex:
        return None


def published(home: Home, source: Source, store: Store | None = None) -> dict[str, Any] | None:
    """The manifest of the source's published index once its files and the table versions it
    pins are checked to be there (None: never built). A ``DamagedIndex`` says what is not."""
    base = home.index_dir(source.connector, source.name)
    key = current_version(base, source.name)
    if key is None:
        return None
    manifest, _ = check_version(base / key, source.name)
    _check_tables(store or Store(home.lance_uri), manifest, source.name)
    return manifest


def check_version(directory: Path, source: str) -> tuple[dict[str, Any], list[str]]:
    """A published version's manifest and chunk ids (the index's rows in order), once the files
    search reads are there and agree; cheap (no index is loaded), so status checks every source."""
    if not directory.is_dir():
        raise DamagedIndex(source, f"`current` points at {directory.name}, which is missing")
    manifest = _json_file(directory / MANIFEST, source)
    if not isinstance(manifest, dict) or not _manifest_complete(manifest):
        raise DamagedIndex(source, f"{MANIFEST} lacks the fields search needs")
    ids = _json_file(directory / CHUNK_IDS, source, sealed=True)
    if not isinstance(ids, list) or len(ids) != manifest["chunks"] or not all(isinstance(c, str) for c in ids):
        raise DamagedIndex(source, f"{CHUNK_IDS} does not list the {manifest['chunks']} chunks of {MANIFEST}")
    needed = [f"{BM25_DIR}/tokenizer.json"] if ids else []
    if "graph" in manifest:  # published since the graph stage exists
        needed.append(f"{GRAPH_DIR}/{graph.META}")
    if "people" in manifest:  # published since the names are counted at publish
        needed.append(PEOPLE)
    if manifest.get("rows"):  # published since search reads its own copy of the rows
        needed.append(ROWS)
        if manifest["rows"].get("vectors"):
            needed.append(VECTORS)
    if manifest.get("aligned"):  # published since rows have the aligned encoder's vectors
        needed.append(ALIGNED)
    for rel in needed:
        if not (directory / rel).is_file():
            what = rel if "/" not in rel else f"{rel.split('/')[0]}/"
            raise DamagedIndex(source, f"{what} of {directory.name} is missing or incomplete")
    if ids:
        _check_whole(directory / BM25_DIR, source)
    for name in (ROWS, VECTORS, ALIGNED):
        if name in needed:
            _check_file(directory / name, source)
    return manifest, ids


def current_chunk_ids(base: Path) -> list[str]:
    """The chunk ids ``current`` lists, unchecked ([] when the source was never published)."""
    current = current_link(base)
    return json.loads((current / CHUNK_IDS).read_text()) if current.exists() else []


def pinned_at(base: Path) -> datetime | None:
    """When the current version's table versions were pinned (its build, or its last
    republish), from its manifest alone; None when it was never built or cannot be read."""
    try:
        manifest = json.loads((current_link(base) / MANIFEST).read_text())
        return datetime.fromisoformat(manifest.get("pinned_at") or manifest["built_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def first_damage(home: Home) -> DamagedIndex | None:
    """The damage of the first registered source whose published index is damaged: what a
    failure that surfaced elsewhere (a tool reading index files itself) most likely was."""
    store = None
    for source in home.sources().values():
        try:
            if current_version(home.index_dir(source.connector, source.name), source.name) is None:
                continue
            store = store or Store(home.lance_uri)
            published(home, source, store)
        except DamagedIndex as e:
            return e
    return None


def dir_bytes(path: Path) -> int:
    """Bytes of the files under path, a hard-linked file (staged and published graph) once."""
    seen: dict[tuple[int, int], int] = {}
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


def _check_whole(folder: Path, source: str) -> None:
    """No array, Arrow or JSON file in ``folder`` is cut short (a crash or a full disk mid-copy)."""
    for path in sorted(folder.iterdir()):
        _check_file(path, source)


def _check_file(path: Path, source: str) -> None:
    """A published file is not cut short: arrays are mapped, not read, an Arrow file's footer is
    read and JSON is looked at only at its end, so this stays cheap."""
    try:
        if path.suffix == ".npy":
            np.load(path, mmap_mode="r")
        elif path.suffix == ".arrow":
            pa.ipc.open_file(pa.memory_map(str(path)))
        elif path.suffix == ".json":
            with path.open("rb") as f:
                f.seek(max(0, path.stat().st_size - 64))
                whole = f.read().rstrip()[-1:] in (b"}", b"]")
            if not whole:
                raise ValueError("cut short")
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        version = path.parent.parent if path.parent.name in (BM25_DIR, GRAPH_DIR) else path.parent
        raise DamagedIndex(
            source, f"{path.relative_to(version)} of {version.name} is unreadable (cut short?)"
        ) from None


def _json_file(path: Path, source: str, sealed: bool = False) -> Any:
    """A published JSON file, parsed; ``sealed``: it must still hash as it did when published."""
    try:
        raw = path.read_bytes()
        if sealed and _digest(raw) != _sealed_digest(path.parent, raw):
            raise DamagedIndex(source, f"{path.name} of {path.parent.name} differs from what was published")
        return json.loads(raw)
    except FileNotFoundError:
        raise DamagedIndex(source, f"{path.name} of {path.parent.name} is missing") from None
    except (OSError, ValueError):
        raise DamagedIndex(source, f"{path.name} of {path.parent.name} is unreadable (cut short?)") from None


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _sealed_digest(version: Path, raw: bytes) -> str:
    """The hash chunk_ids.json had when its version was published (a version published before
    seals existed vouches for whatever it holds)."""
    try:
        return (version / _SEAL).read_text().strip()
    except FileNotFoundError:
        return _digest(raw)


def _manifest_complete(manifest: dict[str, Any]) -> bool:
    versions = manifest.get("versions")
    return (
        isinstance(versions, dict)
        and all(isinstance(versions.get(t), int) for t in PUBLISHED_TABLES)
        and isinstance(manifest.get("chunks"), int)
        and isinstance(manifest.get("dim"), int)
        and isinstance(manifest.get("model"), str)
    )


def _check_tables(store: Store, manifest: dict[str, Any], source: str) -> None:
    missing = store.missing_pin(source, manifest["versions"])
    if missing:
        raise DamagedIndex(source, missing)


# -- writing ---------------------------------------------------------------------------------


def new_version(base: Path) -> Path:
    """Where a new version of the source's index is written (not created yet); nothing reads it
    until ``swap_current`` names it."""
    return base / f"v{int(time.time() * 1000)}"


def write_chunk_ids(version: Path, ids: list[str]) -> None:
    (version / CHUNK_IDS).write_text(json.dumps(ids))


def write_rows(version: Path, rows: pa.Table, vectors: np.ndarray | None) -> dict[str, Any]:
    """Write search's copy of the rows (``rows`` in chunk_ids order) and, for a fast source,
    their vectors; returns what the manifest records of them."""
    with pa.OSFile(str(version / ROWS), "wb") as sink, pa.ipc.new_file(sink, rows.schema) as writer:
        writer.write_table(rows)
    if vectors is not None:
        np.save(version / VECTORS, np.ascontiguousarray(vectors, dtype=np.float32))
    return {"count": rows.num_rows, "vectors": vectors is not None}


def write_people(version: Path, counts: dict[str, int]) -> None:
    (version / PEOPLE).write_text(json.dumps(counts, ensure_ascii=False, sort_keys=True))


def read_people(version: Path, source: str) -> dict[str, int] | None:
    """The names a version counted (``write_people``); None when it was published without them."""
    if not (version / PEOPLE).exists():
        return None
    counts = _json_file(version / PEOPLE, source)
    if not isinstance(counts, dict) or not all(isinstance(v, int) for v in counts.values()):
        raise DamagedIndex(source, f"{PEOPLE} of {version.name} is not a count of names")
    return counts


def write_languages(
    version: Path, rows: list[str | None], sums: dict[str, list[float]], counts: dict[str, int]
) -> None:
    """Each row's language (None: untold), in row order, and per language the sum of its rows'
    vectors and how many there are (none for a source that keeps no vectors)."""
    body = {"rows": rows, "sums": sums, "counts": counts}
    (version / LANGUAGES).write_text(json.dumps(body, sort_keys=True))


def read_languages(version: Path, source: str) -> dict[str, Any] | None:
    """What ``write_languages`` wrote; None when the version was published without it."""
    if not (version / LANGUAGES).exists():
        return None
    body = _json_file(version / LANGUAGES, source)
    if not isinstance(body, dict) or not all(isinstance(body.get(k), t) for k, t in _LANGUAGES_SHAPE.items()):
        raise DamagedIndex(source, f"{LANGUAGES} of {version.name} is not a table of languages")
    return body


_LANGUAGES_SHAPE = {"rows": list, "sums": dict, "counts": dict}


def write_spellings(version: Path, spellings: dict[str, list[list[str]]], rules: int) -> None:
    """``rules``: the version of the spelling rules that made them (a reader of other rules reads none)."""
    body = {"rules": rules, "names": spellings}
    (version / SPELLINGS).write_text(json.dumps(body, ensure_ascii=False, sort_keys=True))


def read_spellings(version: Path, source: str, rules: int) -> dict[str, list[list[str]]] | None:
    """The spellings a version wrote for its counted names (``write_spellings``): a name it
    counted and holds no spelling for has none; None when it was published without them, or
    spelled them by other rules than ``rules``."""
    if not (version / SPELLINGS).exists():
        return None
    body = _json_file(version / SPELLINGS, source)
    spelled = body.get("names") if isinstance(body, dict) else None
    if not isinstance(spelled, dict) or not all(
        isinstance(v, list) and all(isinstance(w, list) and all(isinstance(x, str) for x in w) for w in v)
        for v in spelled.values()
    ):
        raise DamagedIndex(source, f"{SPELLINGS} of {version.name} is not a list of spellings by name")
    return spelled if body.get("rules") == rules else None


def read_rows(version: Path, columns: list[str]) -> pa.Table | None:
    """Search's copy of a version's rows, memory-mapped (None: published before it existed)."""
    path = version / ROWS
    if not path.exists():
        return None
    table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    return table.select([c for c in columns if c in table.column_names])


def write_aligned(version: Path, vectors: np.ndarray) -> None:
    """Row i's vector by ``ragbag.models.aligned``, in row order, at half precision (a cosine
    loses under 10⁻³; the file is half the size)."""
    np.save(version / ALIGNED, np.ascontiguousarray(vectors, dtype=np.float16))


def read_aligned(version: Path, rows: int, source: str) -> np.ndarray | None:
    """What ``write_aligned`` wrote, memory-mapped; None when the version was published without it."""
    path = version / ALIGNED
    if not path.exists():
        return None
    try:
        found = np.load(path, mmap_mode="r")
    except (OSError, ValueError) as e:
        raise DamagedIndex(source, f"{ALIGNED} of {version.name} is unreadable ({e})") from None
    if found.ndim != 2 or found.shape[0] != rows or found.dtype != np.float16:
        raise DamagedIndex(source, f"{ALIGNED} of {version.name} does not hold a vector for each of its {rows} rows")
    return found


def read_vectors(version: Path) -> np.ndarray | None:
    """A fast version's vectors, memory-mapped (None: a compact one, or published before)."""
    path = version / VECTORS
    return np.load(path, mmap_mode="r") if path.exists() else None


def rows_in_order(table: pa.Table, ids: list[str]) -> pa.Table:
    """The rows of a chunks or embeddings table in the order of ``ids`` (the graph's node order);
    a ValueError when the table lacks some."""
    pos = {c: i for i, c in enumerate(table.column("chunk_id").to_pylist())}
    missing = sum(c not in pos for c in ids)
    if missing:
        raise ValueError(f"the table lacks {missing} of the {len(ids)} chunks the index names")
    return table.take(pa.array([pos[c] for c in ids], type=pa.int64()))


def vectors_in_order(table: pa.Table, ids: list[str], dim: int) -> np.ndarray:
    """The ``vector`` column of an embeddings table as one matrix, row i being chunk ``ids[i]``."""
    if not ids:
        return np.zeros((0, dim), dtype=np.float32)
    col = rows_in_order(table, ids).column("vector").combine_chunks()
    return np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(ids), dim)


def write_manifest(version: Path, manifest: dict[str, Any]) -> None:
    (version / MANIFEST).write_text(json.dumps(manifest, indent=1))


def link_tree(src: Path, dst: Path, skip: frozenset[str] = frozenset()) -> None:
    """Hard-link a directory's files (those not named in ``skip``) into a version: a staged
    index is published without a copy (copied only across devices)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.name in skip:
            continue
        try:
            os.link(f, dst / f.name)
        except OSError:
            shutil.copy2(f, dst / f.name)


def copy_current(base: Path) -> Path:
    """A new version holding the current one's files (hard links: no copy) but no manifest: the
    caller writes a new one (a link to the old manifest is replaced, never edited)."""
    version = new_version(base)
    shutil.copytree(current_link(base), version, copy_function=os.link)
    (version / MANIFEST).unlink()
    return version


def swap_current(version: Path) -> None:
    """Point ``current`` at the new version in one rename. The versions it supersedes are not
    deleted now: a search may have followed ``current`` a moment ago and still be reading
    them. Each is stamped when first superseded and deleted by a later swap once
    ``SUPERSEDED_GRACE_S`` has passed (removing the source deletes them all at once)."""
    base, name = version.parent, version.name
    if (version / CHUNK_IDS).exists():
        _seal(version)
    tmp = base / ".current.tmp"
    tmp.unlink(missing_ok=True)
    os.symlink(name, tmp)
    os.replace(tmp, current_link(base))
    now = time.time()
    for old in base.iterdir():
        if old.name == name or old.is_symlink() or not old.is_dir() or not old.name.startswith("v"):
            continue
        since = _superseded_at(old)
        if since is None:
            _mark_superseded(old)  # the version just replaced, or one a killed publish left
        elif now - since >= SUPERSEDED_GRACE_S:
            shutil.rmtree(old, ignore_errors=True)


def drop_superseded(base: Path) -> int:
    """Delete every version but the current one now, grace or not: what a purge removed must not
    stay in an older version (a search still reading one fails and is retried on ``current``)."""
    try:
        keep = os.readlink(current_link(base))
    except OSError:
        return 0
    dropped = 0
    for old in base.iterdir():
        if old.name != keep and not old.is_symlink() and old.is_dir() and old.name.startswith("v"):
            shutil.rmtree(old, ignore_errors=True)
            dropped += 1
    return dropped


def _seal(version: Path) -> None:
    """Record chunk_ids.json's hash: the index rows are in its order, and a copy of another
    version's (same length, other ids or order) would otherwise pass as sound."""
    tmp = version / f"{_SEAL}.tmp"
    tmp.write_text(_digest((version / CHUNK_IDS).read_bytes()))
    os.replace(tmp, version / _SEAL)  # a new file: a version made of hard links keeps its own


def _superseded_at(version: Path) -> float | None:
    try:
        return (version / SUPERSEDED).stat().st_mtime
    except OSError:
        return None


def _mark_superseded(version: Path) -> None:
    try:
        (version / SUPERSEDED).touch()
    except OSError:
        pass  # unwritable: it stays until `ragbag remove`, which is better than pulling it from a reader
