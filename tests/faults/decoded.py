"""Text as the tables hold it, decoded: what a grep of raw bytes cannot see.

LanceDB compresses its text columns, so a removed source's passages left in a table need not
appear in any file's bytes. This reads every LanceDB dataset under a folder the way Lance itself
does, at every version on disk, deleted rows included (``include_deleted_rows``: rows a deletion
file hides but the data file still holds), and then every ``.lance`` file on its own (data files
no version names any more, index files), plus Arrow IPC files (search's row copies), whose buffers
may be compressed too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.compute as pc
from lance.file import LanceFileReader


def holding(root: Path, needle: str) -> list[str]:
    """Where under ``root`` a decoded text value holds ``needle`` (any letter case): a dataset at a
    version (``chunks.lance@v3``), or a single file (``chunks.lance/data/….lance``)."""
    found = []
    for dataset in _datasets(root):
        name = os.path.relpath(dataset, root)
        for version in _versions(dataset):
            scan = lance.dataset(str(dataset), version=version).scanner(with_row_id=True, include_deleted_rows=True)
            if _holds(scan.to_table(), needle):
                found.append(f"{name}@v{version}")
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and _file_holds(path, needle):
            found.append(os.path.relpath(path, root))
    return found


def in_bytes(root: Path, needle: str) -> list[str]:
    """Files under root whose bytes hold needle, as UTF-8 or in any letter case."""
    variants = {v.encode() for v in (needle, needle.lower(), needle.upper())}
    out = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if any(v in data for v in variants):
                out.append(os.path.relpath(path, root))
    return out


def _datasets(root: Path) -> Iterator[Path]:
    """Folders that are Lance datasets (they keep their manifests in ``_versions``)."""
    for versions in sorted(root.rglob("_versions")):
        if versions.is_dir():
            yield versions.parent


def _versions(dataset: Path) -> list[int]:
    return [int(v["version"]) for v in lance.dataset(str(dataset)).versions()]


def _file_holds(path: Path, needle: str) -> bool:
    if path.suffix == ".lance":
        return _holds(LanceFileReader(str(path)).read_all().to_table(), needle)
    if path.suffix == ".arrow":
        with pa.memory_map(str(path)) as source:
            return _holds(pa.ipc.open_file(source).read_all(), needle)
    return False


def _holds(table: pa.Table, needle: str) -> bool:
    """Whether any string in the table, nested ones too, contains ``needle`` in any letter case."""
    return any(_strings_hold(column, needle) for column in table.columns)


def _strings_hold(array: pa.ChunkedArray | pa.Array, needle: str) -> bool:
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return bool(pc.any(pc.match_substring(array, needle, ignore_case=True)).as_py())
    if pa.types.is_struct(kind):
        flat = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
        return any(_strings_hold(flat.field(i), needle) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        flat = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
        return _strings_hold(flat.flatten(), needle)
    return False
