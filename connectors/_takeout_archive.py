"""The files of a Google Takeout export, loose or in its archives, and what the takeout connector
leaves to others: the export's parts are walked here, recognised by
:mod:`connectors.takeout`.

- **Members** (:func:`members`): a Takeout is one or several archives (``takeout-…-001.zip``,
  ``-002.zip``…, or ``.tgz`` parts when the user chose that format) or their extracted
  ``Takeout/`` folder. An archive is read member by member, in memory, never extracted; a member
  is opened as a stream, so its first bytes tell what it is before the rest is read (a
  multi-gigabyte Location History is never loaded to learn that it is not a Keep note).
- **Product folders** (:func:`place`): what lies under ``Takeout/`` is one folder per Google
  product, named in the account's language ("Keep" is "Google Notizen" in German, Chrome's
  ``History.json`` is ``Verlauf.json``): folder names tell where a file belongs, never what it
  is. Files directly under ``Takeout/`` are the export's own index page
  (``archive_browser.html``, localised) and are not data.
- **What is not read** (:class:`Unread`, :func:`summary`): counted per folder while reading
  and reported once per product folder (never once per file: a Takeout holds thousands), with a
  hint where another connector reads it (an mbox: the mail connector; ``.ics``: calendar).
"""

from __future__ import annotations

import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from ragbag.connectors._exports import MAX_MEMBER_BYTES
from ragbag.core.records import ReadError
from ragbag.text.unreadable import one_line

ARCHIVES = (".zip", ".tgz", ".tar.gz")
CANDIDATES = (".json", ".html", ".htm")  # the only suffixes a readable file has
TAKEOUT = "Takeout"
_EXAMPLES = 3
# Where another connector reads what this one does not: suffix → (what it is, the hint).
_ELSEWHERE = {
    ".mbox": ("an mbox mailbox", "read it with `ragbag add mail NAME FILE.mbox` (extracted from the archive first)"),
    ".ics": ("calendars", "read them with `ragbag add calendar NAME PATH` (it reads Takeout archives too)"),
}


@dataclass
class Member:
    """One file of an export: ``path`` inside it (posix; the file's own name for a loose file),
    ``uri`` for reports (``zip!/member`` for an archive's), its size and an open stream."""

    path: str
    uri: str
    size: int
    stream: IO[bytes]


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVES)


def is_candidate(name: str) -> bool:
    return name.lower().endswith(CANDIDATES)


def members(file: Path) -> Iterator[Member | ReadError]:
    """Each file of the archive ``file`` (name order for a zip, stored order for a tar), with
    a ReadError for an archive that cannot be opened (a truncated download) or a member that
    cannot be (then reading goes on with the next)."""
    uri = str(file.absolute())
    if file.name.lower().endswith(".zip"):
        yield from _zip_members(file, uri)
    else:
        yield from _tar_members(file, uri)


def _zip_members(file: Path, uri: str) -> Iterator[Member | ReadError]:
    try:
        zf = zipfile.ZipFile(file)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        yield ReadError(uri, f"unreadable zip (truncated or corrupt?): {one_line(exc)}")
        return
    with zf:
        for info in sorted(zf.infolist(), key=lambda i: i.filename):
            if info.is_dir() or _junk(info.filename):
                continue
            member = f"{uri}!/{info.filename}"
            try:
                stream = zf.open(info)
            except Exception as exc:  # noqa: BLE001 — encrypted, unknown compression…: this member alone
                yield ReadError(member, f"unreadable zip member: {one_line(exc)}")
                continue
            with stream:
                yield Member(info.filename, member, info.file_size, stream)


def _tar_members(file: Path, uri: str) -> Iterator[Member | ReadError]:
    try:
        tf = tarfile.open(file, "r:*")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        yield ReadError(uri, f"unreadable archive (truncated or corrupt?): {one_line(exc)}")
        return
    with tf:
        try:
            for info in tf:
                if not info.isfile() or _junk(info.name):
                    continue
                stream = tf.extractfile(info)
                if stream is not None:
                    yield Member(info.name, f"{uri}!/{info.name}", info.size, stream)
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            yield ReadError(uri, f"archive damaged part way (truncated download?): {one_line(exc)}")


def _junk(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return name.startswith("__MACOSX/") or base.startswith("._")


def read_member(member: Member, head: bytes) -> bytes:
    """The whole of a member whose first bytes ``head`` were read already; one larger than
    :data:`MAX_MEMBER_BYTES` is refused (zip bombs)."""
    if member.size > MAX_MEMBER_BYTES:
        raise ValueError(f"larger than {MAX_MEMBER_BYTES >> 20} MB, skipped")
    return head + member.stream.read()


def place(path: str) -> tuple[str, str | None]:
    """(folder, product) of an export's file at ``path``: the folder relative to ``Takeout/``
    when the path passes through one (else to the export's top), and the product folder it
    belongs to. The product is None for Takeout's own index page (files directly under
    ``Takeout/``) and "" for files at the top of a folder that is no Takeout."""
    parts = PurePosixPath(path).parts
    under = TAKEOUT in parts[:-1]
    if under:
        parts = parts[parts.index(TAKEOUT) + 1 :]
    folder = "/".join(parts[:-1])
    if len(parts) > 1:
        return folder, parts[0]
    return folder, None if under else ""


@dataclass
class Unread:
    """The files of one folder (or product) that were not read: how many, the first few names,
    and the suffixes another connector reads."""

    count: int = 0
    names: list[str] = field(default_factory=list)
    suffixes: list[str] = field(default_factory=list)

    def add(self, name: str, count: int = 1, suffixes: list[str] | None = None) -> None:
        self.count += count
        if len(self.names) < _EXAMPLES:
            self.names.append(name)
        found = suffixes if suffixes is not None else [PurePosixPath(name).suffix.lower()]
        self.suffixes = sorted(set(self.suffixes) | {s for s in found if s in _ELSEWHERE})

    def merge(self, other: Unread) -> None:
        for name in other.names:
            self.add(name, 0, other.suffixes)
        self.count += other.count
        self.suffixes = sorted(set(self.suffixes) | set(other.suffixes))

    def state(self) -> list:
        return [self.count, self.names, self.suffixes]

    @classmethod
    def of(cls, state: list) -> Unread:
        return cls(int(state[0]), list(state[1]), list(state[2]))


def note_unread(unread: dict[str, Unread], path: str) -> None:
    """Count the file at ``path`` (inside its export) as not read, in its folder."""
    folder, product = place(path)
    if product is not None:
        unread.setdefault(folder, Unread()).add(PurePosixPath(path).name)


def summary(root: Path, unread: dict[str, Unread], claimed: set[str]) -> list[ReadError]:
    """One ReadError per product folder holding files no reader took, folders in ``claimed``
    (a Keep notes folder: its pictures and recordings are the notes' attachments, its
    ``Labels.txt`` their labels) left out."""
    products: dict[str, Unread] = {}
    for folder, found in sorted(unread.items()):
        if folder not in claimed:
            products.setdefault(folder.split("/", 1)[0], Unread()).merge(found)
    errors = []
    for product, found in products.items():
        shown = ", ".join(found.names)
        more = ", …" if found.count > len(found.names) else ""
        why = "; ".join(f"{_ELSEWHERE[s][0]}: {_ELSEWHERE[s][1]}" for s in found.suffixes)
        why = why or "the takeout connector reads Chrome's history and bookmarks and Keep's notes only"
        label = product or root.name
        errors.append(
            ReadError(
                f"{root.absolute()}#{product}" if product else str(root.absolute()),
                f"{label}: {found.count} file{'s' if found.count != 1 else ''} not read ({shown}{more}): {why}",
            )
        )
    return errors
