"""The isolation boundary every connector reads through: nothing one file or one record holds can
fail a source build.

Parsers of real-world formats fail in ways no list of exception types foresees (an
``AttributeError`` deep inside icalendar on a doubled TZID line, a ``ValueError`` for a file
time in the year 14645, a ``RecursionError`` on nested parts). So the boundary catches any
``Exception``, not a list: :func:`each_file` around the reading of one file (or zip member,
or database), :func:`each_record` around the making of one record inside it. The failure
becomes a :class:`ReadError` naming the file or record and why (the exception's type and
message on one line), and reading goes on with the next one. Records a file yielded before it
failed are kept.

The same boundary makes every record storable (:func:`storable`): strings without lone
surrogates, metadata that JSON and Arrow can hold, text of at most ``MAX_TEXT_CHARS`` (a longer
one is cut, and the cut is reported on the record's uri).

``KeyboardInterrupt`` and ``SystemExit`` are not ``Exception`` and still stop the build: a user
or the fault suite killing a build must not be read as a bad file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from ragbag.core.records import Document, ReadError
from ragbag.text.storable import MAX_TEXT_CHARS, storable_text, storable_value
from ragbag.text.unreadable import Unreadable, one_line

T = TypeVar("T")


def reason(exc: BaseException) -> str:
    """The one-line why of a failed file or record: an :class:`Unreadable`'s own message (it is
    written for users), else the exception's type and message (a parser's bug says where)."""
    if isinstance(exc, Unreadable):
        return one_line(exc)
    if isinstance(exc, MemoryError):
        return "MemoryError: too large to read"
    if isinstance(exc, RecursionError):
        return "RecursionError: nested too deeply"
    return f"{type(exc).__name__}: {one_line(exc)}"


def each_file(uri: str, read: Callable[[], Iterable[T]]) -> Iterator[T | ReadError]:
    """The items ``read()`` yields for the file at ``uri``, each Document made storable; if it
    raises, a ReadError for ``uri`` and the file ends there (what came before is kept)."""
    try:
        items = iter(read())
    except Exception as exc:  # noqa: BLE001 — the boundary: any failure is this file's
        yield ReadError(storable_text(uri), reason(exc))
        return
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001
            yield ReadError(storable_text(uri), reason(exc))
            return
        yield from _checked(item)


def each_record(uri: str, make: Callable[..., T], *args: Any) -> T | ReadError:
    """``make(*args)``, one record of a file; any failure is a ReadError for the record's ``uri``."""
    try:
        return make(*args)
    except Exception as exc:  # noqa: BLE001
        return ReadError(storable_text(uri), reason(exc))


def storable(doc: Document) -> tuple[Document, ReadError | None]:
    """``doc`` with every string repaired and bounded (see :mod:`ragbag.text.storable`), plus the
    report of a text cut at ``MAX_TEXT_CHARS``, if it was."""
    cut = None
    if len(doc.text) > MAX_TEXT_CHARS:
        cut = ReadError(
            storable_text(doc.uri),
            f"text cut at {MAX_TEXT_CHARS:,} of {len(doc.text):,} characters: the rest is not indexed",
        )
    doc.text = storable_text(doc.text, MAX_TEXT_CHARS)
    doc.title = storable_text(doc.title)
    doc.uri = storable_text(doc.uri)
    doc.native_id = storable_text(doc.native_id)
    doc.authors = [storable_text(str(a)) for a in doc.authors]
    doc.metadata = storable_value(doc.metadata)
    return doc, cut


def _checked(item: Any) -> Iterator[Any]:
    """A Document made storable, then its cut report if any; any other item as it is. A record
    carried with its stamp (``(document, stamp)``, the export connectors' shape) too."""
    if isinstance(item, Document):
        doc, cut = storable(item)
        yield doc
        if cut is not None:
            yield cut
    elif isinstance(item, tuple) and item and isinstance(item[0], Document):
        doc, cut = storable(item[0])
        yield (doc, *item[1:])
        if cut is not None:
            yield cut
    else:
        yield item
