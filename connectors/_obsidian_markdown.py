"""One Obsidian note read as Obsidian reads it: its properties (the YAML frontmatter), its tags,
and the links and embeds it makes. Which file a link names is :mod:`connectors._obsidian_links`'
job; the document is :mod:`connectors.obsidian`'s.

- **Properties** are a YAML block that opens the note: a first line ``---`` and a closing line
  ``---``. An unclosed block is no block (the note's text, as Obsidian shows it). The YAML is
  read as YAML 1.2 reads it, as Obsidian does: only ``true``/``false`` are booleans
  (``no``, ``on``, a country code ``NO`` stay text) and ``1:30`` is text, not ninety
  (PyYAML alone follows YAML 1.1). A block that is not valid YAML, or not a mapping, gives no
  properties and a one-line ``error``: the note is still a note (Obsidian shows it, and its
  properties as invalid).
- **Tags**: the ``tags`` property (and its deprecated ``tag``), a list, or a string of comma-
  or space-separated tags as older Obsidian versions wrote them; and ``#tag`` in the text:
  ``#`` after anything but a tag character, then tag characters: letters, digits (not only
  digits: ``#1984`` is no tag), ``_``, ``-``, ``/`` for nesting (``#project/alpha``), or any
  other character that is neither a space nor punctuation. ``# Heading`` is a heading; ``C#``,
  an escaped ``\\#``, a URL's ``#part``, ``[[#Heading]]`` and ``[x](#part)`` are no tags, ``(#idea)`` is one (as
  in Obsidian's own index). Tags are compared without their ``#`` and without case, as
  Obsidian does; the first spelling met is kept.
- **Links**: ``[[Note]]``, ``[[Note|shown text]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``,
  ``[[Note\\|alias]]`` (a table cell's escaped bar), embeds ``![[picture.png]]``, markdown
  links and images ``[text](Other%20note.md)`` / ``[text](<Other note.md>)`` (decoded),
  and wikilinks in property values (``related: "[[Note]]"``). A link's path is what comes
  before its first ``#``; one with no path (``[[#Heading]]``) points into the note itself and
  is not a link to another file. URLs (``https:``, ``mailto:``, ``obsidian:``) are not links
  to vault files.
- **Code, math and comments hide syntax**: nothing inside fenced code blocks (in a list item or
  a callout too), inline code, ``$…$``/``$$…$$`` math, a ``%%`` comment that opens a line (to
  its closing ``%%``) or ``<!-- … -->`` is a tag or a link, as in Obsidian's own index (a shell
  comment ``# x`` in a code block, a ``#fff`` colour in CSS). A ``%%…%%`` inside a line hides
  nothing from that index, and so hides nothing here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from urllib.parse import unquote

import yaml

from ragbag.text.unreadable import one_line

# --- properties -----------------------------------------------------------------------------

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Yaml12Loader(_BaseLoader):
    """PyYAML's safe loader with YAML 1.2's booleans and integers (see the module doc)."""


_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL, _INT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Yaml12Loader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)


@dataclass
class Frontmatter:
    """The property block of a note: ``end`` is where the body starts (0: no block)."""

    end: int = 0
    properties: dict[str, Any] = field(default_factory=dict)
    error: str = ""


_DELIMITER = re.compile(r"---[ \t]*(?:\n|\Z)")


def frontmatter_end(text: str) -> int:
    """Where the property block of ``text`` ends (after its closing ``---`` line), 0 if none."""
    if not _DELIMITER.match(text):
        return 0
    start = text.index("\n") + 1 if "\n" in text else len(text)
    pos = start
    while pos < len(text):
        m = _DELIMITER.match(text, pos)
        if m:
            return m.end()
        nl = text.find("\n", pos)
        if nl == -1:
            return 0
        pos = nl + 1
    return 0


def frontmatter(text: str) -> Frontmatter:
    """The note's properties, or an error saying why its block is none (see the module doc)."""
    end = frontmatter_end(text)
    if not end:
        return Frontmatter()
    inner = text[text.index("\n") + 1 : end]
    inner = inner[: inner.rfind("---")]
    try:
        data = yaml.load(inner, Loader=_Yaml12Loader)  # noqa: S506 — a safe loader (SafeLoader's subclass)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 2} of the note)" if mark is not None else ""
        return Frontmatter(end, error=f"invalid YAML properties: {one_line(exc.problem or exc.context)}{where}")
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        return Frontmatter(end, error=f"invalid YAML properties: {one_line(exc)}")
    if data is None:
        return Frontmatter(end)
    if not isinstance(data, dict):
        return Frontmatter(end, error=f"the properties are a YAML {type(data).__name__}, not name: value pairs")
    return Frontmatter(end, {str(k): v for k, v in data.items()})


def property_named(properties: dict[str, Any], *names: str, loose: bool = True) -> Any:
    """The value of the first property named one of ``names`` (lower case, words separated by a
    space). ``loose``: written in any case and with ``_``, ``-`` or spaces between words
    (``Created_At``, ``date-created``); else exactly, as Obsidian reads ``tags`` and
    ``aliases`` (a ``TAGS`` property holds no tags there)."""
    if not loose:
        return next((properties[n] for n in names if n in properties), None)
    found: dict[str, str] = {}
    for k in properties:
        found.setdefault(re.sub(r"[\s_-]+", " ", k.strip().casefold()), k)
    for name in names:
        if name in found:
            return properties[found[name]]
    return None


def string_list(value: Any, split_spaces: bool) -> list[str]:
    """A property that Obsidian reads as a list of strings: a YAML list, or one string of
    comma-separated items (and space-separated ones for tags); numbers count as text."""
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if item is None or isinstance(item, (dict, list, bool)):
            continue
        text = str(item)
        parts = re.split(r"[,\s]+" if split_spaces else r",", text)
        out.extend(p.strip() for p in parts if p.strip())
    return out


def plain(value: Any) -> Any:
    """A property value as JSON holds it: dates as ISO text, everything else unchanged."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


# --- what the text hides ----------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})")
_HIDDEN = re.compile(
    r"(?P<code>(?<!`)(`+)(?!`)[^\n]*?(?<!`)\2(?!`))"
    r"|<!--.*?(?:-->|\Z)"
    r"|(?<![^\n])[ \t]*%%.*?(?:%%|\Z)"
    r"|\$\$.*?\$\$"
    r"|\$[^\s$](?:[^$\n]*?[^\s$\\])?\$(?!\d)",
    re.S,
)


def visible(body: str) -> str:
    """``body`` with code, math and comments blanked (newlines kept, so offsets and lines stay
    where they were): what is left is where tags and links can be."""
    spans: list[tuple[int, int]] = []
    fence = ""
    start = pos = 0
    for line in body.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end() :].strip():
                spans.append((start, pos + len(line)))
                fence = ""
        elif m and not (m.group(1)[0] == "`" and "`" in line[m.end() :]):
            fence, start = m.group(1), pos
        pos += len(line)
    if fence:  # an unclosed fence runs to the end of the note
        spans.append((start, len(body)))
    text = _blank(body, spans)
    return _blank(text, [m.span() for m in _HIDDEN.finditer(text)])


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    out, pos = [], 0
    for s, e in spans:
        out.append(text[pos:s])
        out.append(re.sub(r"[^\n]", " ", text[s:e]))
        pos = e
    out.append(text[pos:])
    return "".join(out)


# --- tags -------------------------------------------------------------------------------------

# A tag character: anything but whitespace and punctuation ("_", "-", "/" are tag characters;
# Unicode's general and supplemental punctuation blocks count as punctuation). A tag is "#" and
# tag characters, after anything that is not one ("(#idea)" is a tag, "C#" and "a/#b" are not).
_TAG_CHAR = r"[^\s!-,.:-@\[-\^`{-~\u2000-\u206f\u2e00-\u2e7f]"
_TAG = re.compile(rf"(?<!{_TAG_CHAR})(?<!\\)#({_TAG_CHAR}+)")
_TAG_CHARS = re.compile(rf"{_TAG_CHAR}+")
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://\S+")


def inline_tags(shown: str) -> list[str]:
    """The ``#tags`` of a note's visible text (:func:`visible`), without ``#``, in order; a
    link's target (``[[#Heading]]``, ``[x](#part)``) and a URL's fragment are none."""
    spans = [m.span() for m in _WIKILINK.finditer(shown)] + [m.span(3) for m in _MDLINK.finditer(shown)]
    spans += [m.span() for m in _URL.finditer(shown)]
    text = _blank(shown, _merged(spans))
    return [m.group(1) for m in _TAG.finditer(text) if not m.group(1).replace("/", "").isdigit()]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def property_tags(value: Any) -> list[str]:
    """The tags of a ``tags`` property: items without their ``#``; an item that is no tag (a
    bare number) is dropped, as Obsidian drops it."""
    out = []
    for item in string_list(value, split_spaces=True):
        tag = item.lstrip("#")
        if tag and _TAG_CHARS.fullmatch(tag) and not tag.replace("/", "").isdigit():
            out.append(tag)
    return out


def unique_tags(tags: list[str]) -> list[str]:
    """Tags once each, compared without case; the first spelling met is kept."""
    seen: dict[str, str] = {}
    for tag in tags:
        seen.setdefault(tag.casefold(), tag)
    return list(seen.values())


# --- links ------------------------------------------------------------------------------------

# Inside: no line break, no "[[" and no "]]" ("[[Sq]uare]]" is the note "Sq]uare", as in
# Obsidian). Each pattern here can only start where the last one could not go on, so a line of
# a million "[" costs what its length costs, never its square.
_WIKILINK = re.compile(r"(!?)\[\[((?:[^\[\]\n]|\[(?!\[)|\](?!\]))*)\]\]")
_MDLINK = re.compile(
    r"(!?)\[([^\[\]\n]*)\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?\s*\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    """A link as written: ``path`` (decoded, before the first ``#``), ``embed`` (``![[…]]``,
    ``![…](…)``), ``kind`` ("wikilink", "markdown", "property")."""

    path: str
    embed: bool
    kind: str


def wikilink_path(inner: str) -> str:
    """The path of a wikilink's inside: before the display text's ``|`` (a table's ``\\|``
    too) and the subpath's ``#``."""
    target = inner.split("|", 1)[0]
    if target.endswith("\\"):
        target = target[:-1]
    return target.split("#", 1)[0].strip()


def links(shown: str) -> list[Link]:
    """The links of a note's visible text (:func:`visible`), in order: wikilinks and embeds,
    markdown links and images to anything that is not a URL."""
    found: list[tuple[int, Link]] = []
    for m in _WIKILINK.finditer(shown):
        found.append((m.start(), Link(wikilink_path(m.group(2)), bool(m.group(1)), "wikilink")))
    for m in _MDLINK.finditer(shown):
        dest = m.group(3)
        if dest.startswith("<"):
            dest = dest[1:-1]
        dest = dest.strip()
        if not dest or _SCHEME.match(dest):
            continue
        found.append((m.start(), Link(unquote(dest.split("#", 1)[0]).strip(), bool(m.group(1)), "markdown")))
    return [link for _, link in sorted(found, key=lambda pair: pair[0])]


def property_links(properties: dict[str, Any]) -> list[Link]:
    """Wikilinks written in property values (``up: "[[Index]]"``, ``related: ["[[A]]"]``)."""
    out: list[Link] = []

    def visit(value: Any) -> None:
        if isinstance(value, str):
            out.extend(Link(wikilink_path(m.group(2)), False, "property") for m in _WIKILINK.finditer(value))
        elif isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)

    visit(properties)
    return out
