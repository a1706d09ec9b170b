"""Documents from a source repository, chunked along its syntax tree.

Walks the tree the way git sees it (``.git`` skipped, every ``.gitignore`` honoured relative to
its own folder) so build output and vendored junk never reach the index. Python, JavaScript,
TypeScript, Go, Rust and Java are cut at definitions with tree-sitter so a chunk is a function,
a class or a method and can be cited by symbol; everything else falls back to line windows.

Chunk metadata: ``symbol``, ``kind``, ``line_start``, ``line_end``. Pieces are a partition of the
file's lines (definitions plus the module-level "glue" between them, so no text is lost);
neighbouring pieces are then packed up to the token budget like prose is, and a merged chunk
lists every definition it holds: ``symbol`` is the names joined with ", " (glue adds no name) and
``kind`` likewise, e.g. ``"Greeter, Greeter.greet"`` / ``"class, method"``.

Long because the definition rules of the six tree-sitter grammars (what is a definition, its
name, where its body is) sit together, one table and one walk for all of them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial
from importlib import import_module
from pathlib import Path

from pathspec import GitIgnoreSpec

from ragbag.connectors._isolate import each_file
from ragbag.connectors._walk import Entry, excluded_paths, follows_outside, safe_to_open
from ragbag.connectors._walk import walk as walk_tree
from ragbag.core.dates import from_timestamp
from ragbag.core.records import Document, ReadError, Span
from ragbag.text.chunking import TokenCounter, line_spans, prose_spans, with_lines
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable, human_size

NAME = "code"
MAX_BYTES = 1024 * 1024
SKIP_DIRS = {".git", ".hg", ".svn"}
LANGUAGES = {
    "py": "python", "pyi": "python", "js": "javascript", "jsx": "javascript", "mjs": "javascript",
    "cjs": "javascript", "ts": "typescript", "tsx": "typescript", "mts": "typescript",
    "cts": "typescript", "go": "go", "rs": "rust", "java": "java", "md": "markdown",
    "markdown": "markdown", "rst": "rst", "txt": "text", "toml": "toml", "yaml": "yaml",
    "yml": "yaml", "json": "json", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp",
    "hpp": "cpp", "hh": "cpp", "cs": "csharp", "sh": "shell", "bash": "shell", "zsh": "shell",
    "rb": "ruby", "php": "php", "kt": "kotlin", "swift": "swift", "scala": "scala", "sql": "sql",
    "html": "html", "css": "css", "scss": "scss", "xml": "xml", "ini": "ini", "cfg": "ini",
    "proto": "protobuf", "lua": "lua", "r": "r",
}  # fmt: skip
NAMED_FILES = {
    "makefile": "make",
    "dockerfile": "dockerfile",
    "gemfile": "ruby",
    "rakefile": "ruby",
    "cmakelists.txt": "cmake",
}
_SHEBANGS = (("python", "python"), ("node", "javascript"), ("bash", "shell"), ("/sh", "shell"))
_PROSE = {"markdown", "rst", "text"}
_GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"), "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"), "java": ("tree_sitter_java", "language"),
}  # fmt: skip
# Named syntax nodes that are definitions, by the kind reported in chunk metadata.
_KINDS = {
    "function_definition": "function", "function_declaration": "function",
    "generator_function_declaration": "function", "function_signature": "function",
    "function_expression": "function", "arrow_function": "function", "function_item": "function",
    "function_signature_item": "function", "class_definition": "class",
    "class_declaration": "class", "abstract_class_declaration": "class", "class": "class",
    "method_definition": "method",
    "method_signature": "method", "abstract_method_signature": "method",
    "method_declaration": "method", "constructor_declaration": "constructor",
    "interface_declaration": "interface", "type_alias_declaration": "type", "type_item": "type",
    "type_declaration": "type", "enum_declaration": "enum", "enum_item": "enum",
    "internal_module": "namespace", "module": "namespace", "mod_item": "module",
    "struct_item": "struct", "union_item": "union", "trait_item": "trait", "impl_item": "impl",
    "macro_definition": "macro", "record_declaration": "record",
    "annotation_type_declaration": "annotation",
}  # fmt: skip
_CONTAINERS = {"class", "interface", "trait", "impl", "namespace", "module", "enum", "record"}
_LEADING = {"comment", "line_comment", "block_comment", "attribute_item"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "class", "generator_function"}
log = logging.getLogger(__name__)


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError]:
    """Every non-ignored text file under ``path`` (or ``path`` itself), in sorted order.

    Empty files (``__init__.py``) are skipped silently: they hold nothing to find. ``options``:
    the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`.
    """
    path = Path(path)
    errors: list[ReadError] = []
    if path.is_file():
        files = [(path, path.name)]
    elif path.is_dir():
        files = walk(path, errors, follow_outside=follows_outside(options), exclude=excluded_paths(options))
    else:
        yield ReadError(str(path.absolute()), "no such file or directory")
        return
    for file, rel in files:  # the isolation boundary: one file's failure is that file's ReadError
        yield from each_file(str(file.absolute()), partial(_read_file, file, rel, source))
    yield from errors


def walk(
    root: Path, errors: list[ReadError] | None = None, follow_outside: bool = False, exclude: Sequence[str] = ()
) -> list[tuple[Path, str]]:
    """(file, relative posix path) for the files git would not ignore, sorted by path; folders
    that cannot be listed and links or special files not read go to ``errors`` (links leaving
    ``root`` are followed only with ``follow_outside``: see :mod:`connectors._walk`). Like git,
    ignore rules see a link as a file, never as the folder it points to."""
    specs_of: dict[str, list] = {}  # folder rel ("" = root) -> the .gitignore rules in force

    def specs(folder: Path, base: str) -> list:
        if base not in specs_of:
            inherited = specs_of.get(base.rpartition("/")[0], []) if base else []
            ignore = folder / ".gitignore"
            if safe_to_open(ignore, root, follow_outside):
                try:
                    lines = ignore.read_text("utf-8", errors="replace").splitlines()
                    inherited = inherited + [(base + "/" if base else "", GitIgnoreSpec.from_lines(lines))]
                except OSError:
                    pass  # the walk reports it when it reaches the file
            specs_of[base] = inherited
        return specs_of[base]

    def keep(entry: Entry) -> bool:
        is_dir = entry.is_dir and not entry.is_link
        if is_dir and entry.name in SKIP_DIRS:
            return False
        return not _ignored(specs(entry.path.parent, entry.rel.rpartition("/")[0]), entry.rel, is_dir)

    return walk_tree(root, errors, keep=keep, follow_outside=follow_outside, exclude=exclude)


def _ignored(specs: list, rel: str, is_dir: bool) -> bool:
    """Git's rule: the deepest .gitignore with a matching pattern decides (negations included)."""
    ignored = False
    for base, spec in specs:
        result = spec.check_file(rel[len(base) :] + ("/" if is_dir else ""))
        if result.include is not None:
            ignored = result.include
    return ignored


def language_of(name: str, text: str) -> str:
    """Language by extension, then well-known file names, then the shebang line."""
    lower = name.lower()
    ext = lower.rsplit(".", 1)[1] if "." in lower.lstrip(".") else ""
    if lower in NAMED_FILES:
        return NAMED_FILES[lower]
    if ext in LANGUAGES:
        return LANGUAGES[ext]
    if text.startswith("#!"):
        first = text.split("\n", 1)[0]
        return next((lang for key, lang in _SHEBANGS if key in first), "shell")
    return ext or "text"


def _read_file(file: Path, rel: str, source: str) -> list[Document | ReadError]:
    record = _record(file, rel, source)
    return [] if record is None else [record]


def _record(file: Path, rel: str, source: str) -> Document | ReadError | None:
    uri = str(file.absolute())
    try:
        stat = file.stat()
        if stat.st_size > MAX_BYTES:
            limit = human_size(MAX_BYTES)
            return ReadError(uri, f"larger than {limit} ({stat.st_size} bytes), skipped")
        data = file.read_bytes()
    except OSError as exc:
        return ReadError(uri, f"unreadable: {exc.strerror or exc}")
    if b"\0" in data[:8192]:
        return ReadError(uri, "binary file skipped")
    try:
        text = decode(data)[0].replace("\r\n", "\n").replace("\r", "\n")
    except Unreadable as exc:
        return ReadError(uri, str(exc))
    if not text.strip():
        return None
    meta = {
        "path": rel,
        "language": language_of(file.name, text),
        "ext": file.suffix.lower().lstrip("."),
        "size": stat.st_size,
        "lines": text.count("\n") + (not text.endswith("\n")),
    }
    return Document(
        source=source,
        connector=NAME,
        native_id=rel,
        uri=uri,
        title=rel,
        text=text,
        updated_at=from_timestamp(stat.st_mtime),
        metadata=meta,
    )


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    """Definition-aligned chunks where a grammar exists, prose sections for docs, else lines."""
    language = doc.metadata.get("language", "")
    grammar = "tsx" if doc.metadata.get("ext") == "tsx" else language
    if grammar in _GRAMMARS:
        try:
            return _Cutter(doc.text, count, max_tokens).spans(grammar)
        except Exception:  # a grammar that will not load must not lose the file: use lines
            log.warning("syntax chunking failed for %s; using line windows", doc.uri, exc_info=True)
    if language in _PROSE:
        found = [with_lines(doc.text, s) for s in prose_spans(doc.text, count, max_tokens)]
        return [_label(s, "", "section") for s in found]
    return [_label(s, "", "lines") for s in line_spans(doc.text, count, max_tokens)]


def _label(span: Span, symbol: str, kind: str) -> Span:
    span.metadata.update(symbol=symbol, kind=kind)
    return span


@cache
def _language(grammar: str):
    from tree_sitter import Language

    module, function = _GRAMMARS[grammar]
    return Language(getattr(import_module(module), function)())


@dataclass
class _Piece:
    start: int  # character offsets into the text
    end: int
    symbols: list[str]
    kinds: list[str]


class _Cutter:
    """Cuts one document: rows of the syntax tree become character ranges of whole lines."""

    def __init__(self, text: str, count: TokenCounter, max_tokens: int) -> None:
        self.text, self.count, self.max_tokens = text, count, max_tokens
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def spans(self, grammar: str) -> list[Span]:
        from tree_sitter import Parser

        root = Parser(_language(grammar)).parse(self.text.encode("utf-8")).root_node
        rows = self._cover(root.named_children, 0, len(self.starts) - 1, "", "module")
        fitted = [part for piece in rows for part in self._fit(piece)]
        return [span for piece in self._merge(fitted) if (span := self._span(piece))]

    def _range(self, first: int, last: int) -> tuple[int, int]:
        end = self.starts[last + 1] if last + 1 < len(self.starts) else len(self.text)
        return self.starts[first], end

    def _fits(self, start: int, end: int) -> bool:
        return self.count(self.text[start:end]) <= self.max_tokens

    def _cover(self, nodes: list, lo: int, hi: int, owner: str, kind: str) -> list[_Piece]:
        """Pieces for rows lo..hi: each definition among ``nodes`` plus the glue around them,
        which belongs to ``owner`` (the enclosing class, or "" at module level)."""
        pieces, row = [], lo
        for first, last, symbol, sym_kind, node in _definitions(nodes, owner):
            first, last = max(first, row), min(last, hi)
            if first > last:
                continue
            pieces += self._glue(row, first - 1, owner, kind)
            pieces += self._expand(first, last, symbol, sym_kind, node)
            row = last + 1
        return pieces + self._glue(row, hi, owner, kind)

    def _glue(self, first: int, last: int, owner: str, kind: str) -> list[_Piece]:
        """The code between definitions; blank gaps are dropped so they lend no symbol."""
        start, end = self._range(first, last) if first <= last else (0, 0)
        return [_Piece(start, end, [owner], [kind])] if self.text[start:end].strip() else []

    def _expand(self, first: int, last: int, symbol: str, kind: str, node) -> list[_Piece]:
        """A definition that fits is one piece; an oversized class opens up into its members."""
        start, end = self._range(first, last)
        body = node.child_by_field_name("body") if kind in _CONTAINERS else None
        if self._fits(start, end) or body is None:
            return [_Piece(start, end, [symbol], [kind])]
        members = [
            m for c in body.named_children for m in (c.named_children if c.type == "enum_body_declarations" else [c])
        ]
        return self._cover(members, first, last, symbol, kind)

    def _fit(self, piece: _Piece) -> list[_Piece]:
        """Line windows for a piece still over budget, each keeping the piece's symbol."""
        if self._fits(piece.start, piece.end):
            return [piece]
        sub = self.text[piece.start : piece.end]
        return [
            _Piece(self._indent(piece.start + s.start), piece.start + s.end, piece.symbols, piece.kinds)
            for s in line_spans(sub, self.count, self.max_tokens)
        ]

    def _indent(self, start: int) -> int:
        """Give a window back the indentation line_spans trimmed off its first line."""
        while start > 0 and self.text[start - 1] in " \t":
            start -= 1
        return start

    def _merge(self, pieces: list[_Piece]) -> list[_Piece]:
        out: list[_Piece] = []
        for p in pieces:
            if out and self._fits(out[-1].start, p.end):
                last = out[-1]
                out[-1] = _Piece(last.start, p.end, last.symbols + p.symbols, last.kinds + p.kinds)
            else:
                out.append(p)
        return out

    def _span(self, piece: _Piece) -> Span | None:
        """Trim blank lines and trailing space (not the first line's indent); label the span."""
        chunk = self.text[piece.start : piece.end]
        if not chunk.strip():
            return None
        lead = len(chunk) - len(chunk.lstrip())
        lead = chunk.rfind("\n", 0, lead) + 1  # back to the start of the first non-blank line
        span = with_lines(self.text, Span(piece.start + lead, piece.start + len(chunk.rstrip())))
        named = [(s, k) for s, k in zip(piece.symbols, piece.kinds) if s]
        kinds = [k for _, k in named] or piece.kinds
        return _label(span, ", ".join(_unique(s for s, _ in named)), ", ".join(_unique(kinds)))


def _unique(items) -> list[str]:
    return list(dict.fromkeys(items))


def _definitions(nodes: list, owner: str) -> Iterator[tuple[int, int, str, str, object]]:
    """(first row, last row, symbol, kind, node) per definition, comments and attributes
    directly above it (no blank line between) included."""
    lead, prev_last = None, -1
    for node in nodes:
        first, last = node.start_point.row, _last_row(node)
        if node.type in _LEADING and first > prev_last:
            lead = (lead[0], last) if lead and first <= lead[1] + 1 else (first, last)
            continue
        found = _definition(node)
        if found:
            name, kind, inner = found
            start = lead[0] if lead and lead[1] + 1 >= first else first
            kind = "method" if owner and kind == "function" else kind
            yield start, last, f"{owner}.{name}" if owner else name, kind, inner
        lead, prev_last = None, last


def _last_row(node) -> int:
    """The last row holding the node's text (a node ending at column 0 ended on the row before)."""
    end = node.end_point
    return max(node.start_point.row, end.row - 1 if end.column == 0 else end.row)


def _unwrap(node):
    """The definition inside export/decorator/expression wrappers."""
    while True:
        if node.type == "decorated_definition":
            inner = node.child_by_field_name("definition")
        elif node.type == "export_statement":
            inner = node.child_by_field_name("declaration") or node.child_by_field_name("value")
        elif node.type in ("expression_statement", "ambient_declaration"):
            inner = node.named_children[0] if node.named_child_count == 1 else None
        else:
            return node
        if inner is None:
            return node
        node = inner


def _definition(node) -> tuple[str, str, object] | None:
    """(name, kind, node holding the body) when the node defines something, else None."""
    inner = _unwrap(node)
    if inner.type in ("lexical_declaration", "variable_declaration"):  # const f = () => ...
        decls = [c for c in inner.named_children if c.type == "variable_declarator"]
        value = decls[0].child_by_field_name("value") if len(decls) == 1 else None
        if value is None or value.type not in _FUNCTION_VALUES:
            return None
        return _text(decls[0].child_by_field_name("name")), "class" if value.type == "class" else "function", value
    kind = _KINDS.get(inner.type) if inner.is_named else None
    if kind is None:
        return None
    if inner.type == "type_declaration":  # Go: type ( A int; B struct{...} )
        specs = [c for c in inner.named_children if c.type in ("type_spec", "type_alias")]
        types = {(c.child_by_field_name("type") or c).type for c in specs}
        if len(types) == 1:
            kind = {"struct_type": "struct", "interface_type": "interface"}.get(types.pop(), kind)
        return ", ".join(_text(c.child_by_field_name("name")) for c in specs), kind, inner
    if inner.type == "impl_item":  # Rust: methods are named after the type, not the trait
        return re.sub(r"<.*", "", _text(inner.child_by_field_name("type"))), kind, inner
    name = _text(inner.child_by_field_name("name")) or "default"
    receiver = inner.child_by_field_name("receiver") if inner.type == "method_declaration" else None
    if receiver is not None:  # Go: func (g *Greeter) Greet() -> Greeter.Greet
        found = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*\)\s*$", _text(receiver))
        name = f"{found.group(1)}.{name}" if found else name
    return name, kind, inner


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""
