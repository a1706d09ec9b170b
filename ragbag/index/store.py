"""The LanceDB store: documents, chunks and embeddings of every source, scoped by source.

All sources share one table per stage; every write is scoped to one source (``source = …``)
so that partitions never overwrite each other. Stages reconcile against what is stored
(diff by id and content hash), so a killed write is finished by the next build. What search
reads is pinned: publishing a source tags the table versions its index was built from
(``pub-<source>``), and readers check out those tags — a half-written build is never visible.

The database is a local directory or an object-store URI (``storage.lance_uri``: s3://, gs://,
az://); object-store settings and keys come from the environment, as object_store reads them
(``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_ALLOW_HTTP`` …), and are never written down.

Long because it is the one owner of LanceDB: every table's schema, scoped write, version pin,
lookup and compaction goes through it, so nothing else imports lancedb.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ragbag.core.cache import LRU
from ragbag.core.errors import RagbagError
from ragbag.core.rows import ChunkRow, DocumentRow, columns
from ragbag.index.lancedb_import import import_lancedb

TS = pa.timestamp("us", tz="UTC")


def _arrow_schema(row: type) -> pa.Schema:
    """A table's Arrow schema from its row type (``ragbag.core.rows``): the one definition."""
    out = []
    for name, (hint, col) in columns(row).items():
        if col.storage:
            kind = getattr(pa, col.storage)()
        elif hint == datetime | None:
            kind = TS
        elif hint == list[str]:
            kind = pa.list_(pa.string())
        elif hint is str:
            kind = pa.string()
        else:
            raise TypeError(f"{row.__name__}.{name}: no Arrow type for {hint}")
        out.append((name, kind))
    return pa.schema(out)


SCHEMAS: dict[str, pa.Schema] = {
    "documents": _arrow_schema(DocumentRow),
    "chunks": _arrow_schema(ChunkRow),
    "embeddings": pa.schema(
        [
            ("chunk_id", pa.string()),
            ("source", pa.string()),
            ("content_hash", pa.string()),
            ("model", pa.string()),
            ("vector", pa.list_(pa.float32())),
        ]
    ),
    "embedding_cache": pa.schema([("key", pa.string()), ("vector", pa.list_(pa.float32()))]),
}
# A document's superseded texts (``ragbag.pipeline.history``): the documents table holds each
# document's current version, this one its earlier ones (and the last of a deleted document).
SCHEMAS["document_versions"] = SCHEMAS["documents"]
PUBLISHED = ("documents", "chunks", "embeddings")
# Every table a source has rows in (the history is read at its newest version, never pinned).
SOURCE_TABLES = (*PUBLISHED, "document_versions")
# What a source's rows are compared by when its publication is moved to a newer table version.
_IDENTITY = {
    "documents": ["doc_id", "content_hash"],
    "chunks": ["chunk_id", "content_hash"],
    "embeddings": ["chunk_id", "content_hash", "model"],
}
_BATCH = 500
# A source with at most this many rows in a table has them held whole between reads (``Store.rows``),
# the last eight tables read in a process (a build's stages each open the store anew).
HELD_ROWS = 5_000
_HELD: LRU[tuple[str, str, str, int], pa.Table] = LRU(8)
_TOO_MANY = pa.table({})
_PIN_MARGIN = timedelta(seconds=60)  # see Store.prune
_NEVER = timedelta(days=36500)  # a cleanup horizon no version reaches: compaction alone
# The data files a table may hold before a publish merges them (``Store.compact``): each refresh
# appends one or two, and merging rewrites the whole table.
FRAGMENTS_KEPT = 8


def lit(value: str) -> str:
    """A SQL string literal with quotes escaped: values are bound, never pasted raw."""
    return "'" + value.replace("'", "''") + "'"


def _in(column: str, values: list[str]) -> str:
    return f"{column} IN ({', '.join(lit(v) for v in values)})"


# The environment variables object_store reads for each backend (its ``from_env``): every
# AWS_* / GOOGLE_* / AZURE_* variable, lower-cased, is a storage option; unknown ones are ignored.
_ENV_PREFIXES = {"s3": ("AWS_",), "s3+ddb": ("AWS_",), "gs": ("GOOGLE_",), "az": ("AZURE_",)}
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


def storage_options(uri: str, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Object-store options for a LanceDB URI, from the environment; {} for a local path."""
    m = _SCHEME.match(uri)
    prefixes = _ENV_PREFIXES.get(m[1].lower(), ()) if m else ()
    env = os.environ if environ is None else environ
    return {k.lower(): v for k, v in env.items() if k.startswith(prefixes) and v} if prefixes else {}


class Store:
    def __init__(self, location: str | Path, *, writer: bool = False):
        """Connect to the LanceDB database at ``location``: a local directory (``home.lance_dir``)
        or an object-store URI (``home.lance_uri``). ``writer``: the store of a build's step,
        which holds the home's writers' lock while the store lives, so no other process changes
        a table meanwhile; each table is opened once (a step reads and writes its tables dozens
        of times, and each open reads the table's newest manifest) and sees every write made
        through it. Any other store opens a table at each use and sees other processes' writes."""
        lancedb = import_lancedb()
        self._held: dict[str, Any] | None = {} if writer else None
        self.uri = str(location)
        self.remote = bool(_SCHEME.match(self.uri))
        self.dir = None if self.remote else Path(location)  # the local directory, if it is one
        options = storage_options(self.uri)
        endpoint = next((options[k] for k in ("aws_endpoint_url", "aws_endpoint") if k in options), "")
        if endpoint.startswith("http://") and options.get("aws_allow_http", "").lower() not in ("true", "1"):
            raise RagbagError(f"{self.uri}: the endpoint {endpoint} is plain http; set AWS_ALLOW_HTTP=true to allow it")
        self.db = lancedb.connect(self.uri, storage_options=options) if options else lancedb.connect(self.uri)

    def table(self, name: str):
        """The table at its newest version, to read and write (a writer's store: its held one)."""
        if self._held is not None and name in self._held:
            return self._held[name]
        table = self._open(name)
        if self._held is not None:
            self._held[name] = table
        return table

    def _open(self, name: str):
        """The table newly opened: one of its own, which a checkout may move to an old version."""
        try:
            table = self.db.open_table(name)
        except ValueError:
            return self.db.create_table(name, schema=SCHEMAS[name], exist_ok=True)
        if (self.uri, name) not in _CURRENT:
            _add_missing_columns(table, SCHEMAS[name])
            _CURRENT.add((self.uri, name))
        return table

    def rows(self, name: str, source: str, columns: list[str] | None = None) -> pa.Table:
        """Every current row of one source (optionally only some columns). A build reads its
        source's rows a dozen times between two writes (each stage, each check), and a LanceDB
        scan costs milliseconds however few rows it finds: a source of at most ``HELD_ROWS``
        rows in a table is read whole once per table version, and read again from that copy
        while the table stays at that version (a version never changes)."""
        table, where = self.table(name), f"source = {lit(source)}"
        key = (self.uri, name, source, table.version)
        held = _HELD.get(key)
        if held is None:  # one scan tells whether the source is small: at most one row more
            first = _scan(table, where, None, limit=HELD_ROWS + 1)
            held = first if first.num_rows <= HELD_ROWS else _TOO_MANY
            _HELD.put(key, held)
        if held is _TOO_MANY:
            return _scan(table, where, columns)
        return held if columns is None else held.select(columns)

    def without_vectors(self, source: str) -> set[str]:
        """Chunk ids of a source whose embedding row holds no vector (a compact source's)."""
        tbl = self.table("embeddings")
        return set(
            _scan(tbl, f"source = {lit(source)} AND vector IS NULL", ["chunk_id"]).column("chunk_id").to_pylist()
        )

    def add(self, name: str, data: pa.Table) -> None:
        if data.num_rows:
            tbl = self.table(name)
            for start in range(0, data.num_rows, 20_000):
                tbl.add(data.slice(start, 20_000).cast(SCHEMAS[name]))

    def delete_keys(self, name: str, key: str, values: Iterable[str], source: str | None = None) -> None:
        values = list(values)
        tbl = self.table(name)
        scope = f"source = {lit(source)} AND " if source is not None else ""
        for start in range(0, len(values), _BATCH):
            tbl.delete(scope + _in(key, values[start : start + _BATCH]))

    def lookup(self, name: str, key: str, values: list[str], columns: list[str]) -> pa.Table:
        """Rows whose key is among values, fetched in batches."""
        tbl = self.table(name)
        parts = [_scan(tbl, _in(key, values[s : s + _BATCH]), columns) for s in range(0, len(values), _BATCH)]
        return pa.concat_tables(parts) if parts else SCHEMAS[name].empty_table().select(columns)

    def delete_source(self, source: str) -> None:
        """Remove a source from every table (its history too) and drop its publication tags."""
        for name in SOURCE_TABLES:
            tbl = self.table(name)
            tbl.delete(f"source = {lit(source)}")
            if _tag(source) in tbl.tags.list():
                tbl.tags.delete(_tag(source))

    def publish(self, source: str) -> dict[str, int]:
        """Tag the current version of each table as what search reads for this source."""
        versions = {}
        for name in PUBLISHED:
            tbl = self.table(name)
            versions[name] = tbl.version
            if _tag(source) in tbl.tags.list():
                tbl.tags.update(_tag(source), tbl.version)
            else:
                tbl.tags.create(_tag(source), tbl.version)
        return versions

    def published_rows(self, name: str, source: str, version: int, columns: list[str] | None = None) -> pa.Table:
        """A source's rows as of the version its index was published from."""
        tbl = self._open(name)
        tbl.checkout(version)
        if columns:  # a version written before a column was added has none of it
            columns = [c for c in columns if c in tbl.schema.names]
        return _scan(tbl, f"source = {lit(source)}", columns)

    def missing_pin(self, source: str, versions: dict[str, int]) -> str | None:
        """Why a publication's pinned table versions cannot be read (None: they can): a table
        deleted and made anew may well have a version of that number holding other rows, so the
        source's tag must vouch for it (a tag ahead of it is a publish between its two steps)."""
        for name in PUBLISHED:
            version = versions[name]
            try:
                table = self.db.open_table(name)
                tag = table.tags.list().get(_tag(source))
                pinned = tag["version"] if tag else None
                if pinned is None or pinned < version:
                    raise ValueError(f"it is not tagged {_tag(source)} at that version")
                table.checkout(version)
            except ValueError as e:  # LanceDB's "not found" / "no longer exists", or the tag
                return f"the {name} table's version {version} is gone: {e}"
        return None

    def versions(self) -> dict[str, int]:
        return {name: self.table(name).version for name in PUBLISHED}

    # -- what stays on disk ------------------------------------------------------------------

    def unchanged_since(self, source: str, versions: dict[str, int]) -> bool:
        """Whether a source's rows now are exactly its rows at ``versions`` (its publication):
        then its publication may move to the newest table versions without a rebuild."""
        for name in PUBLISHED:
            cols = _IDENTITY[name]
            tbl = self._open(name)
            now = _scan(tbl, f"source = {lit(source)}", cols)
            tbl.checkout(versions[name])
            then = _scan(tbl, f"source = {lit(source)}", cols)
            if now.num_rows != then.num_rows or now.sort_by([(c, "ascending") for c in cols]) != then.sort_by(
                [(c, "ascending") for c in cols]
            ):
                return False
        return True

    def forget_vectors(self, source: str) -> int:
        """Drop the cached vectors of texts only this source had (a removed source's texts
        must not stay behind as embeddings); returns how many went."""
        emb = self.table("embeddings")
        mine = _scan(emb, f"source = {lit(source)}", ["content_hash", "model"]).to_pylist()
        if not mine:
            return 0
        hashes = sorted({r["content_hash"] for r in mine})
        shared = (
            set(
                self.lookup("embeddings", "content_hash", hashes, ["content_hash", "source"])
                .filter(pa.compute.not_equal(pa.compute.field("source"), source))
                .column("content_hash")
                .to_pylist()
            )
            if hashes
            else set()
        )
        keys = sorted({f"{r['model']}:{r['content_hash']}" for r in mine if r["content_hash"] not in shared})
        self.delete_keys("embedding_cache", "key", keys)
        return len(keys)

    def forget_unused_vectors(self) -> int:
        """Drop the cached vectors of texts no chunk of any source holds now (what a source no
        longer indexes on purpose must not stay behind as embeddings); returns how many went."""
        used = {
            f"{r['model']}:{r['content_hash']}"
            for r in self.table("embeddings").to_arrow().select(["content_hash", "model"]).to_pylist()
        }
        keys = [k for k in self.table("embedding_cache").to_arrow().column("key").to_pylist() if k not in used]
        self.delete_keys("embedding_cache", "key", keys)
        return len(keys)

    def rewrite(self, name: str) -> None:
        """Write the table's current rows into new data files: a delete only marks rows, and
        compaction leaves a file holding few deleted rows as it is, so the bytes of removed rows
        stay on disk until every file that held them is replaced."""
        tbl = self.table(name)
        data = tbl.to_arrow()
        if data.num_rows:  # an empty table references no data file: nothing to replace
            tbl.add(data.cast(SCHEMAS[name]), mode="overwrite")

    def compact(self, keep: timedelta | None = None, fragments_over: int = FRAGMENTS_KEPT) -> None:
        """Merge the small data files builds append into larger ones (a new version; nothing is
        deleted), in each table of more than ``fragments_over`` of them or, given the retention
        ``keep``, with versions older than that, which the cleanup after this publish may delete
        (the publications it moves no longer pin them). Run before a publish
        tags versions: LanceDB cleans only along with a compaction, and one run by that cleanup
        would make a version newer than the tags. A compaction rewrites every row of the files it
        merges, the whole table when one big file holds most of it: a refresh appends a file or
        two and leaves them until there are more than ``fragments_over``; a removal (0) merges
        them all."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for name in (*SOURCE_TABLES, "embedding_cache"):
                table = self.table(name)
                if table.stats()["fragment_stats"]["num_fragments"] <= fragments_over and (
                    keep is None or not _older_than(table, keep)
                ):
                    continue
                try:
                    table.optimize(cleanup_older_than=_NEVER)
                except RuntimeError as e:
                    if not _conflict(e):
                        raise  # another writer compacted at the same moment: the next publish does it

    def prune(self, keep: timedelta, purge: bool = False) -> dict[str, bool]:
        """Delete table versions search no longer needs: those older than ``keep`` and older than
        every published (tagged) version. ``purge`` (a removal) also deletes files no version
        references. Returns, per table, whether everything older than ``keep`` could go (False:
        a publication pins an older version, which stays with every version after it). A table
        with no version to delete is left as it is (LanceDB's cleanup would compact it)."""
        done = {}
        for name in (*SOURCE_TABLES, "embedding_cache"):
            tbl = self.table(name)
            older_than, anything = _cleanup(tbl, keep)
            if not anything and not purge:
                done[name] = older_than == keep
                continue
            with warnings.catch_warnings():  # "cleanup_older_than=0 removes every version": meant
                warnings.simplefilter("ignore", UserWarning)
                try:
                    tbl.optimize(cleanup_older_than=older_than, delete_unverified=purge)
                    done[name] = older_than == keep
                except RuntimeError as e:
                    if "tagged version" not in str(e) and not _conflict(e):
                        raise
                    done[name] = False  # a compaction outlasted the margin, or another writer
                    # committed meanwhile (scale-out pools of several): the next build cleans
        return done


def _older_than(table, keep: timedelta) -> bool:
    """Whether a version of ``table`` but its newest is older than ``keep``."""
    horizon = datetime.now(UTC) - keep
    return any(when < horizon for when in _history(table).values())


def _cleanup(table, keep: timedelta) -> tuple[timedelta, bool]:
    """How old a version of ``table`` must be for the cleanup to delete it (``keep``, or older
    than the oldest published version but the newest: LanceDB refuses to delete a tagged one,
    so stop short of it, with a margin for a compaction the same call runs first), and whether
    any is."""
    history = _history(table)
    pins = [history[t["version"]] for t in table.tags.list().values() if t["version"] in history]
    now = datetime.now(UTC)
    older_than = max(keep, now - min(pins) + _PIN_MARGIN) if pins else keep
    return older_than, any(when < now - older_than for when in history.values())


def _history(table) -> dict[int, datetime]:
    """When each version of ``table`` but its newest was made (the newest is never deleted)."""
    newest = table.version
    return {v["version"]: _utc(v["timestamp"]) for v in table.list_versions() if v["version"] != newest}


# Tables this process found with every column of their schema: a table never loses one, so each
# is looked at once a process, not at every open (a build opens each table in each stage).
_CURRENT: set[tuple[str, str]] = set()


def _add_missing_columns(table, schema: pa.Schema) -> None:
    """Columns a newer ragbag added to a table (the version columns), added to a table an older
    one made: null in its existing rows, which readers take as "version 1, always valid"."""
    names = set(table.schema.names)
    missing = [f for f in schema if f.name not in names]
    if missing:
        try:
            table.add_columns(missing)
        except RuntimeError as e:
            if not _conflict(e):  # another process added them at the same moment
                raise


def _conflict(error: RuntimeError) -> bool:
    """Whether LanceDB refused a commit because another writer's commit came first."""
    text = str(error)
    return "commit conflict" in text.lower() or "preempted" in text


def _utc(stamp: datetime) -> datetime:
    """LanceDB lists version times as naive local times."""
    return stamp.astimezone(UTC)


def _tag(source: str) -> str:
    return f"pub-{source}"


_U64_MAX = 2**64 - 1


def pins_on_disk(lance_dir: Path, source: str, versions: dict[str, int]) -> str | None:
    """``missing_pin`` read from the files themselves, without importing LanceDB (whose import
    costs more than a no-change check of every source): the source's tag in each table vouches
    for the pinned version and that version's manifest is there, under either of Lance's
    namings (``N.manifest``, or ``u64::MAX - N`` since its V2 layout). None: they are."""
    for name in PUBLISHED:
        version, table = versions[name], lance_dir / f"{name}.lance"
        try:
            pinned = json.loads((table / "_refs" / "tags" / f"{_tag(source)}.json").read_text()).get("version")
        except (OSError, ValueError, AttributeError):
            pinned = None
        if not isinstance(pinned, int) or pinned < version:
            return f"the {name} table is not tagged {_tag(source)} at version {version}"
        if not any((table / "_versions" / f"{n}.manifest").is_file() for n in (version, _U64_MAX - version)):
            return f"the {name} table's version {version} is gone"
    return None


def _scan(tbl, where: str, columns: list[str] | None, limit: int | None = None) -> pa.Table:
    q = tbl.search().where(where)
    if columns:
        q = q.select(columns)
    return q.limit(limit).to_arrow()
