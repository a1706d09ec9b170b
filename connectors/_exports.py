"""Export files: the snapshots an application writes of a user's data (chat exports, calendar
``.ics`` files, Takeout zips), found, opened and read incrementally. Shared by the export
connectors (wechat, chatgpt, claude, calendar).

- **Finding exports** (:func:`export_files`): a file or a folder (walked like the files
  connector: sorted, hidden folders pruned, links leaving the folder reported instead of
  followed unless the source sets ``follow_links_outside``, see :mod:`connectors._walk`); zips
  are read member by member in memory (:func:`zip_members`), never extracted, never written.
- **Incremental reading with duplicates** (:func:`read_exports`): the cursor holds, per export
  file, its size and mtime and the native ids it produced with a "stamp" (the record's last
  update). An unchanged file is not opened: its ids come back as ``Seen``. Exports are full
  snapshots, so a folder of monthly exports holds the same record many times: the copy with the
  newest stamp wins (ties: the file whose name sorts last), and when the winning copy is in an
  unchanged file that did not win last time, that file is read after all.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ragbag.connectors._isolate import each_file
from ragbag.connectors._walk import visible_files
from ragbag.core.records import Cursor, Document, ReadError, Seen
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable, one_line

MAX_MEMBER_BYTES = 1024 * 1024 * 1024  # a zip member this big is refused (zip bombs)


def export_files(
    path: Path, wanted: Callable[[str], bool], follow_outside: bool = False, exclude: Sequence[str] = ()
) -> tuple[list[tuple[Path, str]], list[ReadError]]:
    """(file, key) for ``path`` itself or for every file under it whose name ``wanted`` accepts;
    the key (the path relative to ``path``) names the file in the cursor. ``follow_outside``:
    whether links leaving ``path`` are followed (the source's ``follow_links_outside``);
    ``exclude``: the source's path globs, never opened (``connectors._walk.excluded_paths``)."""
    path = Path(path)
    if path.is_file():
        return [(path, path.name)], []
    if not path.is_dir():
        return [], [ReadError(str(path.absolute()), "no such file or directory")]
    errors: list[ReadError] = []
    found = visible_files(path, errors, wanted, follow_outside, exclude)
    return found, errors


def zip_members(file: Path, wanted: Callable[[str], bool]) -> Iterator[tuple[str, bytes] | ReadError]:
    """(uri, bytes) of each member whose base name ``wanted`` accepts, in name order; a zip that
    cannot be opened (truncated download) or a member that cannot be inflated is a ReadError."""
    uri = str(file.absolute())
    try:
        zf = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        yield ReadError(uri, f"unreadable zip (truncated or corrupt?): {one_line(exc)}")
        return
    with zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            name = info.filename
            base = name.rsplit("/", 1)[-1]
            if info.is_dir() or name.startswith("__MACOSX/") or base.startswith("._") or not wanted(base):
                continue
            member = f"{uri}!/{name}"
            if info.file_size > MAX_MEMBER_BYTES:
                yield ReadError(member, f"member larger than {MAX_MEMBER_BYTES >> 20} MB, skipped")
                continue
            try:
                yield member, zf.read(info)
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
                yield ReadError(member, f"unreadable zip member: {one_line(exc)}")


def load_json(data: bytes) -> Any:
    """Parse an export's JSON whatever its encoding (BOMs, UTF-16, a legacy code page);
    raises Unreadable with a one-line reason."""
    if not data.strip():
        raise Unreadable("empty file")
    text = decode(data)[0]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise Unreadable("invalid JSON: nested too deeply") from None


Record = tuple[Document, float]  # a document and its stamp (newest copy wins)
Parser = Callable[[Path, str], Iterable["Record | ReadError"]]


def read_exports(
    files: Sequence[tuple[Path, str]],
    parse: Parser,
    cursor: dict | None,
    version: str,
    depends: Callable[[str], str] | None = None,
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Documents of changed export files, ``Seen`` for the records of unchanged ones, every
    record once (newest stamp wins), then the new cursor. ``version`` names what the documents
    were rendered with: a cursor of another version is ignored (everything is read again).
    ``depends(key)`` fingerprints what else a file's documents are made from (a change reads
    the file again)."""
    previous = cursor or {}
    same = bool(previous) and previous.get("version") == version
    old_files: dict[str, dict] = previous.get("files", {}) if same else {}
    old_winners: dict[str, str] = previous.get("winners", {}) if same else {}
    stats: dict[str, list] = {}  # key → [size, mtime_ns(, depends)]
    paths: dict[str, Path] = {}
    for file, key in files:
        try:
            st = file.stat()
        except OSError as exc:
            yield ReadError(str(file.absolute()), f"unreadable: {exc.strerror or exc}")
            continue
        stats[key] = [st.st_size, st.st_mtime_ns] + ([depends(key)] if depends else [])
        paths[key] = file

    parsed: dict[str, dict[str, Record]] = {}
    errors: dict[str, list[ReadError]] = {}

    def load(key: str) -> None:
        records: dict[str, Record] = {}
        errors[key] = []
        # The isolation boundary: whatever one export file holds fails that file alone.
        for item in each_file(str(paths[key].absolute()), lambda: parse(paths[key], key)):
            if isinstance(item, ReadError):
                errors[key].append(item)
                continue
            doc, stamp = item
            if doc.native_id not in records or stamp >= records[doc.native_id][1]:
                records[doc.native_id] = (doc, stamp)
        parsed[key] = records

    def candidates(key: str) -> dict[str, float]:
        if key in parsed:
            return {i: s for i, (_, s) in parsed[key].items()}
        return old_files[key]["ids"]

    todo = [k for k in stats if old_files.get(k, {}).get("stat") != stats[k]]
    while True:
        for key in todo:
            load(key)
        winners: dict[str, tuple[float, str]] = {}
        for key in stats:
            for native_id, stamp in candidates(key).items():
                if native_id not in winners or (stamp, key) >= winners[native_id]:
                    winners[native_id] = (stamp, key)
        # A winning copy in an unread file is only vouched for if that file won last time too.
        todo = sorted({k for i, (_, k) in winners.items() if k not in parsed and old_winners.get(i) != k})
        if not todo:
            break

    state: dict[str, dict] = {}
    for key in stats:
        if key in parsed:
            for doc, _ in parsed[key].values():
                if winners[doc.native_id][1] == key:
                    yield doc
            yield from errors[key]
            file_uri = str(paths[key].absolute())
            if any(e.uri == file_uri for e in errors[key]):
                continue  # a file that could not be read at all is tried again next time
            state[key] = {"stat": stats[key], "ids": candidates(key), "errors": [[e.uri, e.error] for e in errors[key]]}
        else:
            for native_id in old_files[key]["ids"]:
                if winners[native_id][1] == key:
                    yield Seen(native_id)
            yield from (ReadError(uri, error) for uri, error in old_files[key]["errors"])
            state[key] = old_files[key]
    yield Cursor({"version": version, "files": state, "winners": {i: k for i, (_, k) in winners.items() if k in state}})
