"""Obsidian vaults, differentially: ragbag's notes against two independent readings.

**Obsidian itself** (obsidian-tasks' ``tests/Obsidian/__test_data__``): for each note of its
sample vault, the JSON the Tasks plugin's authors saved from a running Obsidian: the note's
``fileContents``, its ``cachedMetadata`` (``frontmatter``, ``links``, ``embeds``,
``frontmatterLinks``), ``getAllTags`` (property and inline tags) and ``resolveLinkToPath``
(what ``metadataCache.getFirstLinkpathDest`` made of each link); and, for the whole vault,
``metadataCache.resolvedLinks``/``unresolvedLinks``. Each such JSON is compared with ragbag's
reading of the sample vault it came from.

**A plain reading** of every other vault: notes are the non-hidden ``.md`` files with text;
properties by PyYAML's own safe loader after a regular expression finds the ``---`` block; the
body parsed by markdown-it-py (CommonMark, a parser ragbag does not use for notes), whose text
tokens, outside code spans, code blocks and HTML, are searched for ``#tags`` (a tag character
decided from the character's Unicode category) and ``[[wikilinks]]``, and whose link and image
tokens give the markdown links; link paths are matched to the vault's files as Obsidian's help
and observed behaviour describe (exact path, the note's folder, the shortest path ending so).

Checks, as (agree, compared): ``count`` (per note, ragbag has its document), ``text`` (the
document's text is the note's text and its title the ``title`` property or file name),
``times`` (per note with a ``created``/``date`` property YAML reads as a date, ``created_at``
is that day), and outside the run's table ``tags``, ``links`` (per note: the same files
linked, the same link paths unresolved; per link for Obsidian's ``resolveLinkToPath``) and
``properties`` (per scalar property Obsidian lists).
"""

from __future__ import annotations

import functools
import json
import os
import posixpath
import re
import unicodedata
from datetime import UTC, date, datetime
from pathlib import Path
from urllib.parse import unquote

import yaml
from markdown_it import MarkdownIt

from tests.differential.common import PUBLIC, Outcome, ragbag_read, rel

CONNECTOR = "obsidian"
HERE = PUBLIC / "obsidian"
TASKS = HERE / "obsidian-tasks"
TASKS_VAULT = TASKS / "resources__sample_vaults__Tasks-Demo"

_LEGACY_TAGS = (
    "the property is one string of comma-separated tags (`tags: a, b`), the form older Obsidian"
    " versions wrote and read as two tags; the Obsidian that saved this cache (typed properties,"
    " 1.9) reads no tag from it. ragbag keeps the older reading: the person meant two tags."
)
_EMPTY_TARGET = (
    "`[[|]]` and `[[|alias]]` have no target: Obsidian's cache records their whole inside (`|`,"
    " `|alias`) as a link path that names nothing; ragbag, like Obsidian's help, reads the path"
    " before the bar, which is empty: no link."
)
EXPLAINED: dict[str, str] = {
    "public/obsidian/obsidian-export/tests__testdata__input/filter-by-tags": (
        "`tags: [no, no-export]`: PyYAML (the reference) reads YAML 1.1, where `no` is the boolean"
        " false, so it has one tag; Obsidian reads YAML 1.2, where `no` is text, and so does ragbag:"
        " the note is tagged `no` and `no-export`."
    ),
    "public/obsidian/obsidian-tasks/tests__Obsidian____test_data____yaml_tags_with_two_values_on_one_line.json": (
        _LEGACY_TAGS
    ),
    "public/obsidian/obsidian-tasks/tests__Obsidian____test_data____link_in_task_wikilink.json": _EMPTY_TARGET,
    "public/obsidian/obsidian-tasks/tests__Obsidian____test_data____metadataCache__unresolvedLinks.json": (
        _EMPTY_TARGET
    ),
    "public/obsidian/obsidian-tasks/tests__Obsidian____test_data____metadataCache__resolvedLinks.json": (
        "Obsidian's dump lists no link from 'How To/Find tasks in notes with particular tag.md' to"
        " 'Test Data/yaml_all_property_types_populated.md', whose text has `[[yaml_all_property_types_populated]]`"
        " (line 27): the dump is older than that line (it also lacks four notes the vault has now,"
        " 'Manual Testing/Nested Backlinks.md' among them). The name is unique in the vault."
    ),
}


def units() -> list[Path]:
    vaults = [TASKS_VAULT]
    vaults += sorted(p for p in (HERE / "obsidian-export" / "tests__testdata__input").iterdir() if p.is_dir())
    for project in ("obsidiantools", "obsidian-dataview", "markdown-oxide", "kepano-obsidian"):
        vaults += sorted(p for p in (HERE / project).iterdir() if p.is_dir())
    return vaults + sorted(TASKS.glob("tests__Obsidian____test_data____*.json"))


def compare(unit: Path) -> Outcome:
    if unit.suffix == ".json":
        return _compare_obsidian(unit)
    return _compare_plain(unit)


@functools.lru_cache(maxsize=4)
def _read(vault: Path) -> tuple[dict, int]:
    docs, errors = ragbag_read(CONNECTOR, vault)
    return {d.native_id: d for d in docs}, len(errors)


def _project(unit: Path) -> str:
    return unit.relative_to(HERE).parts[0]


# --- Obsidian's own cache -----------------------------------------------------------------------


def _compare_obsidian(unit: Path) -> Outcome:
    docs, errors = _read(TASKS_VAULT)
    data = json.loads(unit.read_text(encoding="utf-8"))
    if "filePath" not in data:  # metadataCache.resolvedLinks / unresolvedLinks of the whole vault
        return _compare_vault_links(unit, data, docs, errors)
    path, cache = data["filePath"], data["cachedMetadata"]
    doc = docs.get(path)
    out = Outcome(rel(unit), _project(unit), 1, int(doc is not None), errors)
    out.checks["count"] = (int(doc is not None), 1)
    if doc is None:
        out.disagreements.append(f"{path}: no document")
        return out
    same_text = doc.text == data["fileContents"].replace("\r\n", "\n")
    out.checks["text"] = (int(same_text), 1)
    if not same_text:
        out.disagreements.append(f"{path}: text differs from Obsidian's fileContents")
    want = {t.lstrip("#").casefold() for t in data.get("getAllTags") or []}
    got = {t.casefold() for t in doc.metadata["tags"]}
    out.checks["tags"] = (int(want == got), 1)
    if want != got:
        out.disagreements.append(f"{path}: tags {sorted(got)}, Obsidian {sorted(want)}")
    _check_links(out, path, cache, data.get("resolveLinkToPath") or {}, doc)
    _check_properties(out, path, cache.get("frontmatter") or {}, doc.metadata)
    return out


def _check_links(out: Outcome, path: str, cache: dict, resolved: dict, doc) -> None:
    """Per link Obsidian resolved (``resolveLinkToPath``): ragbag links the same file, or has the
    same path unresolved."""
    meta = doc.metadata
    linked = set(meta["links"]) | set(meta["attachments"])
    agree = total = 0
    for ref in cache.get("links", []) + cache.get("embeds", []) + cache.get("frontmatterLinks", []):
        link = ref["link"]
        if link not in resolved:
            continue
        total += 1
        target = resolved[link]
        if target == path or (target is None and link.split("#", 1)[0] in meta["unresolved"]) or target in linked:
            agree += 1
        elif target is None:
            out.disagreements.append(f"{path}: [[{link}]] is an unresolved link for Obsidian, not for ragbag")
        else:
            out.disagreements.append(f"{path}: [[{link}]] names {target} for Obsidian, not in ragbag's links")
    out.checks["links"] = (agree, total)


def _check_properties(out: Outcome, path: str, want: dict, meta: dict) -> None:
    agree = total = 0
    for name, value in want.items():
        if name in ("tags", "tag", "aliases", "alias", "title") or isinstance(value, dict):
            continue
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            continue
        total += 1
        got = meta.get(name, meta.get(f"property_{name}"))
        if got == value:
            agree += 1
        else:
            out.disagreements.append(f"{path}: property {name} = {got!r}, Obsidian {value!r}")
    out.checks["properties"] = (agree, total)


def _compare_vault_links(unit: Path, data: dict, docs: dict, errors: int) -> Outcome:
    unresolved = "unresolved" in unit.name
    notes = sorted(set(data) & set(docs))
    out = Outcome(rel(unit), _project(unit), len(data), len(docs), errors)
    agree = 0
    for note in notes:
        meta = docs[note].metadata
        want = set(data[note]) if unresolved else set(data[note]) - {note}
        got = set(meta["unresolved"]) if unresolved else set(meta["links"]) | set(meta["attachments"])
        if want == got:
            agree += 1
        else:
            out.disagreements.append(f"{note}: ragbag only {sorted(got - want)}, Obsidian only {sorted(want - got)}")
    out.checks["links"] = (agree, len(notes))
    return out


# --- the plain reading -------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.S)
_WIKI = re.compile(r"\[\[(.+?)\]\]")
# text_join off: an escaped character stays a token of its own (``\[\[#tag`` is no link)
_MD = MarkdownIt("commonmark").enable("table").disable("text_join")
_FOOTNOTE = re.compile(r"^\[\^[^\]\n]+\]:", re.M)  # Obsidian's footnotes, no CommonMark link definitions


def _is_tag_char(c: str) -> bool:
    if c.isspace():
        return False
    if c in "_-/":
        return True
    if c.isascii():
        return c.isalnum()
    return not unicodedata.category(c).startswith("P") and not 0x2000 <= ord(c) <= 0x206F


def _tags(text: str) -> list[str]:
    out = []
    for i, c in enumerate(text):
        if c != "#" or (i and _is_tag_char(text[i - 1])):
            continue
        j = i + 1
        while j < len(text) and _is_tag_char(text[j]):
            j += 1
        tag = text[i + 1 : j]
        if tag and not tag.replace("/", "").isdigit():
            out.append(tag)
    return out


def _note(text: str) -> dict:
    """A note's title-relevant properties, tags and link paths, read without ragbag's code."""
    m = _FRONTMATTER.match(text)
    props: dict = {}
    body = text
    if m:
        body = text[m.end() :]
        try:
            loaded = yaml.safe_load(m.group(1) or "")
            props = loaded if isinstance(loaded, dict) else {}
        except (yaml.YAMLError, ValueError):
            props = {}
    tags = []
    value = props.get("tags", props.get("tag"))
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, (str, int)) and not isinstance(item, bool):
            tags += [t.lstrip("#") for t in re.split(r"[,\s]+", str(item)) if t.lstrip("#")]
    tags = [t for t in tags if not t.replace("/", "").isdigit()]
    paths: list[str] = []
    for item in _strings(props):
        paths += [_wiki_path(w) for w in _WIKI.findall(item)]
    for token in _MD.parse(_FOOTNOTE.sub("", body)):
        if token.type != "inline":
            continue
        text_parts = []
        for child in token.children or []:
            if child.type in ("text", "softbreak", "hardbreak"):
                text_parts.append(child.content if child.type == "text" else "\n")
            elif child.type == "text_special":  # an escaped character: no syntax, but a
                text_parts.append("|" if child.content == "|" else "\0")  # wikilink's \| (help)
            elif child.type in ("link_open", "image"):
                href = child.attrs.get("href" if child.type == "link_open" else "src")
                if isinstance(href, str) and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", href):
                    paths.append(unquote(href).split("#", 1)[0].strip())
                text_parts.append("\0")
            else:
                text_parts.append("\0")
        joined = "".join(text_parts)
        wikis = list(_WIKI.finditer(joined))
        paths += [_wiki_path(w.group(1)) for w in wikis]
        tags += _tags(_WIKI.sub(lambda w: "\0" * len(w.group(0)), joined))
    seen: dict[str, str] = {}
    for tag in tags:
        seen.setdefault(tag.casefold(), tag)
    return {"props": props, "tags": set(seen), "paths": [p for p in paths if p]}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _wiki_path(inner: str) -> str:
    target = inner.split("|", 1)[0].rstrip("\\")
    return target.split("#", 1)[0].strip()


def _resolve(link: str, source: str, files: list[str]) -> str | None:
    def norm(p: str) -> str:
        return unicodedata.normalize("NFC", p).lower()

    link = link.strip()
    folder = posixpath.dirname(source)
    if link.startswith(("./", "../")):
        names = [posixpath.normpath(posixpath.join(folder, link))]
        names.append(names[0] + ".md")
        return next((f for n in names for f in files if norm(f) == norm(n)), None)
    link = link.lstrip("/")
    names = [link] if norm(link).endswith(".md") else [link, link + ".md"]
    for n in names:
        for f in files:
            if norm(f) == norm(n):
                return f
    for n in names:
        for f in files:
            if folder and norm(f) == norm(folder + "/" + n):
                return f
    for n in names:
        hits = sorted((f for f in files if norm(f).endswith("/" + norm(n))), key=lambda f: (len(f), f))
        if hits:
            return hits[0]
    return None


def _vault_files(vault: Path) -> list[str]:
    out = []
    for folder, dirs, names in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if not name.startswith("."):
                out.append((Path(folder) / name).relative_to(vault).as_posix())
    return sorted(out)


def _day(value) -> date | None:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).date()
    if isinstance(value, date):
        return value
    return None


def _compare_plain(vault: Path) -> Outcome:
    docs, errors = _read(vault)
    files = _vault_files(vault)
    notes = {}
    for f in files:
        if f.lower().endswith(".md"):
            text = (vault / f).read_bytes().decode("utf-8").replace("\r\n", "\n")
            if text.strip():
                notes[f] = text
    out = Outcome(rel(vault), _project(vault), len(notes), len(docs), errors)
    counted = texts = tagged = linked = timed = dated = 0
    for path, text in notes.items():
        doc = docs.get(path)
        if doc is None:
            out.disagreements.append(f"{path}: no document")
            continue
        counted += 1
        ref = _note(text)
        title = ref["props"].get("title")
        title = " ".join(str(title).split()) if isinstance(title, (str, int, float)) and str(title).strip() else None
        want_title = title or posixpath.basename(path)[:-3]
        if doc.text == text and doc.title == want_title:
            texts += 1
        else:
            out.disagreements.append(f"{path}: text or title ({doc.title!r}, reference {want_title!r}) differ")
        got_tags = {t.casefold() for t in doc.metadata["tags"]}
        if got_tags == ref["tags"]:
            tagged += 1
        else:
            out.disagreements.append(f"{path}: tags {sorted(got_tags)}, reference {sorted(ref['tags'])}")
        want_links: set[str] = set()
        want_unresolved: set[str] = set()
        for p in ref["paths"]:
            target = _resolve(p, path, files)
            if target is None:
                want_unresolved.add(p)
            elif target != path:
                want_links.add(target)
        meta = doc.metadata
        got_links = set(meta["links"]) | set(meta["attachments"])
        if got_links == want_links and set(meta["unresolved"]) == want_unresolved:
            linked += 1
        else:
            out.disagreements.append(
                f"{path}: links ragbag only {sorted(got_links - want_links)}, reference only"
                f" {sorted(want_links - got_links)}; unresolved {sorted(meta['unresolved'])}, reference"
                f" {sorted(want_unresolved)}"
            )
        created = next((ref["props"][k] for k in ("created", "date") if k in ref["props"]), None)
        day = _day(created)
        if day is not None:
            dated += 1
            if doc.created_at is not None and doc.created_at.date() == day:
                timed += 1
            else:
                out.disagreements.append(f"{path}: created {doc.created_at}, reference {day}")
    out.disagreements += [f"{p}: only in ragbag" for p in docs if p not in notes]
    out.checks = {
        "count": (counted, max(len(notes), len(docs))),
        "text": (texts, len(notes)),
        "times": (timed, dated),
        "tags": (tagged, len(notes)),
        "links": (linked, len(notes)),
    }
    return out
