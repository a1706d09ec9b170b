"""The code connector: a repository walked as git sees it, cut along definitions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragbag.connectors import code
from ragbag.core.records import Document, ReadError, Span
from ragbag.models.embedding import token_counter

GREETER_PY = '''"""Greeting helpers."""
import functools
import os

DEFAULT = os.environ.get("GREETING", "Hello")


# Greeter keeps a name and says things to it.
class Greeter:
    """Greets one person, politely or loudly, as many times as asked."""

    punctuation = "!"

    def __init__(self, name: str, greeting: str = DEFAULT) -> None:
        self.name = name
        self.greeting = greeting

    def greet(self, times: int = 1) -> str:
        """Say the greeting, repeated."""
        return " ".join(f"{self.greeting}, {self.name}{self.punctuation}" for _ in range(times))

    @property
    def shout(self) -> str:
        return self.greet().upper()


@functools.lru_cache(maxsize=None)
def cached_total(values: tuple[int, ...]) -> int:
    """Sum once, remember forever."""
    return sum(v * v for v in values if v % 2 == 0) + len(values)


if __name__ == "__main__":
    print(Greeter("world").greet(2))
'''

SHAPES_TS = """import { log } from "./log";

export interface Shape {
  area(): number;
  name: string;
}

/** A circle, centred at the origin. */
export class Circle implements Shape {
  name = "circle";
  constructor(private readonly radius: number) {}

  area(): number {
    return Math.PI * this.radius * this.radius;
  }
}

export function describe(shape: Shape): string {
  log(shape.name);
  return `${shape.name} with area ${shape.area().toFixed(2)}`;
}

export const double = (n: number): number => n * 2;
type Id = string;
"""

MAIN_GO = """package main

import "fmt"

// Greeter greets by name.
type Greeter struct {
\tName string
}

// Greet returns the greeting.
func (g *Greeter) Greet() string {
\treturn fmt.Sprintf("Hello, %s", g.Name)
}

func main() {
\tfmt.Println((&Greeter{Name: "gopher"}).Greet())
}
"""

LIB_RS = """use std::fmt;

/// A greeter.
#[derive(Debug, Clone)]
pub struct Greeter {
    name: String,
}

impl Greeter {
    pub fn new(name: &str) -> Self {
        Greeter { name: name.to_string() }
    }

    pub fn greet(&self) -> String {
        format!("Hello, {}!", self.name)
    }
}

impl fmt::Display for Greeter {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.greet())
    }
}
"""

HELLO_JAVA = """package demo;

import java.util.List;

/** Says hello to a list of people. */
public class Hello {
    private final List<String> names;

    public Hello(List<String> names) {
        this.names = names;
    }

    @Override
    public String toString() {
        return "Hello " + String.join(", ", names);
    }

    public static void main(String[] args) {
        System.out.println(new Hello(List.of("a", "b")));
    }
}
"""

UTIL_JS = """const path = require("path");

function joinAll(parts) {
  return parts.reduce((acc, p) => path.join(acc, p), "");
}

class Cache {
  constructor() { this.items = new Map(); }
  get(key) { return this.items.get(key); }
}

module.exports = { joinAll, Cache };
"""

APP_TSX = """export function App({ who }: { who: string }) {
  return <div className="app">Hello {who}</div>;
}
"""


@pytest.fixture(scope="module")
def count():
    return token_counter("all-MiniLM-L6-v2")  # the chunker tests were sized to its token counts


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setattr(code, "MAX_BYTES", 4000)
    files = {
        "greeter.py": GREETER_PY,
        "web/shapes.ts": SHAPES_TS,
        "web/App.tsx": APP_TSX,
        "web/util.js": UTIL_JS,
        "main.go": MAIN_GO,
        "src/lib.rs": LIB_RS,
        "src/Hello.java": HELLO_JAVA,
        "Makefile": "test:\n\tpytest -q\n",
        "pyproject.toml": '[project]\nname = "demo"\n',
        "README.md": "# Demo\n\nA tiny repository.\n",
        "pkg/__init__.py": "",
        "pkg/core.py": "def core():\n    return 1\n",
        ".gitignore": "build/\n*.log\n",
        "pkg/.gitignore": "generated.py\n/local/\n!keep.log\n",
        "build/out.py": "IGNORED = 1\n",
        "debug.log": "ignored log\n",
        "pkg/keep.log": "kept by negation\n",
        "pkg/generated.py": "IGNORED = 2\n",
        "pkg/sub/generated.py": "IGNORED = 3\n",
        "pkg/local/x.py": "IGNORED = 4\n",
        "generated.py": "KEPT = 5  # the nested rule is relative to pkg/\n",
        "local/y.py": "KEPT = 6\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".git/config": "[core]\n",
        ".github/workflows/ci.yml": "on: push\n",
        "big.txt": "x" * 5000,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    return tmp_path


def read_repo(root: Path) -> tuple[dict[str, Document], dict[str, ReadError]]:
    docs, errors = {}, {}
    for rec in code.read(root, "repo"):
        if isinstance(rec, ReadError):
            errors[Path(rec.uri).relative_to(root).as_posix()] = rec
        else:
            docs[rec.native_id] = rec
    return docs, errors


def texts(doc: Document, spans: list[Span]) -> list[str]:
    return [doc.text[s.start : s.end] for s in spans]


def symbols(span: Span) -> list[str]:
    return span.metadata["symbol"].split(", ")


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_walk_honours_gitignore_binaries_and_size(repo):
    docs, errors = read_repo(repo)
    assert list(docs) == sorted(docs)
    assert set(docs) == {
        ".github/workflows/ci.yml",
        ".gitignore",
        "Makefile",
        "README.md",
        "generated.py",
        "greeter.py",
        "local/y.py",
        "main.go",
        "pkg/.gitignore",
        "pkg/core.py",
        "pkg/keep.log",
        "pyproject.toml",
        "src/Hello.java",
        "src/lib.rs",
        "web/App.tsx",
        "web/shapes.ts",
        "web/util.js",
    }
    assert set(errors) == {"logo.png", "big.txt"}
    assert errors["logo.png"].error == "binary file skipped"
    assert errors["big.txt"].error == "larger than 4000 bytes (5000 bytes), skipped"
    assert errors["big.txt"].uri == str((repo / "big.txt").absolute())


def test_document_fields_and_languages(repo):
    docs, _ = read_repo(repo)
    doc = docs["greeter.py"]
    assert doc.text == GREETER_PY and doc.title == "greeter.py" and doc.connector == "code"
    assert doc.uri == str((repo / "greeter.py").absolute())
    assert doc.updated_at is not None and doc.updated_at.utcoffset().total_seconds() == 0
    assert doc.metadata == {
        "path": "greeter.py",
        "language": "python",
        "ext": "py",
        "size": len(GREETER_PY.encode()),
        "lines": GREETER_PY.count("\n"),
    }
    json.dumps(doc.metadata)
    languages = {rel: d.metadata["language"] for rel, d in docs.items()}
    assert languages["web/shapes.ts"] == languages["web/App.tsx"] == "typescript"
    assert languages["web/util.js"] == "javascript"
    expected = {
        "main.go": "go",
        "src/lib.rs": "rust",
        "src/Hello.java": "java",
        "Makefile": "make",
        "pyproject.toml": "toml",
        "README.md": "markdown",
        "generated.py": "python",
    }
    assert {rel: languages[rel] for rel in expected} == expected
    assert languages[".github/workflows/ci.yml"] == "yaml"


def test_python_methods_get_their_own_symbols_when_the_class_is_too_big(repo, count):
    docs, _ = read_repo(repo)
    doc = docs["greeter.py"]
    spans = code.spans(doc, count, 64)
    by_symbol: dict[str, Span] = {}
    for sp in spans:  # first chunk of each symbol
        for sym in symbols(sp):
            by_symbol.setdefault(sym, sp)

    greet = by_symbol["Greeter.greet"]
    chunk = doc.text[greet.start : greet.end]
    assert "def greet(self, times: int = 1) -> str:" in chunk
    assert '"""Say the greeting, repeated."""' in chunk
    first, last = greet.metadata["line_start"], greet.metadata["line_end"]
    assert first <= line_of(doc.text, "def greet") <= last
    assert "method" in greet.metadata["kind"]

    shout = by_symbol["Greeter.shout"]  # a decorated method starts at its decorator
    assert doc.text[shout.start : shout.end].startswith("    @property\n    def shout")
    assert shout.metadata["line_start"] == line_of(doc.text, "@property")

    cached = by_symbol["cached_total"]
    cached_text = doc.text[cached.start : cached.end]
    assert cached_text.startswith("@functools.lru_cache(maxsize=None)\ndef cached_total")
    assert cached.metadata["line_start"] == line_of(doc.text, "@functools")
    assert cached.metadata["kind"] == "function"

    header = by_symbol["Greeter"]  # the leading comment travels with the class
    assert doc.text[header.start : header.end].startswith("# Greeter keeps a name")
    assert header.metadata["line_start"] == line_of(doc.text, "# Greeter keeps")

    glue = spans[0]
    assert glue.metadata["symbol"] == "" and glue.metadata["kind"] == "module"
    assert doc.text[glue.start : glue.end].startswith('"""Greeting helpers."""\nimport functools')
    assert 'print(Greeter("world").greet(2))' in doc.text[spans[-1].start : spans[-1].end]


def test_a_class_that_fits_stays_whole(repo, count):
    docs, _ = read_repo(repo)
    doc = docs["src/Hello.java"]
    (span,) = code.spans(doc, count, 254)
    assert span.metadata == {"symbol": "Hello", "kind": "class", "line_start": 1, "line_end": 21}
    assert texts(doc, [span]) == [HELLO_JAVA.rstrip()]


@pytest.mark.parametrize(
    "rel, symbol, kind, needle",
    [
        ("web/shapes.ts", "Shape", "interface", "export interface Shape {"),
        ("web/shapes.ts", "Circle.area", "method", "  area(): number {\n    return Math.PI"),
        ("web/shapes.ts", "describe", "function", "export function describe(shape: Shape)"),
        ("web/shapes.ts", "double", "function", "export const double"),
        ("web/shapes.ts", "Id", "type", "type Id = string;"),
        ("web/App.tsx", "App", "function", '<div className="app">Hello {who}</div>'),
        ("web/util.js", "joinAll", "function", "function joinAll(parts) {"),
        ("web/util.js", "Cache", "class", "class Cache {"),
        ("main.go", "Greeter", "struct", "// Greeter greets by name.\ntype Greeter struct {"),
        ("main.go", "Greeter.Greet", "method", "// Greet returns the greeting.\nfunc (g *Greeter)"),
        ("main.go", "main", "function", "func main() {"),
        ("src/lib.rs", "Greeter", "struct", "/// A greeter.\n#[derive(Debug, Clone)]\npub struct"),
        ("src/lib.rs", "Greeter.greet", "method", "    pub fn greet(&self) -> String {"),
        ("src/lib.rs", "Greeter.fmt", "method", "    fn fmt(&self, f: &mut fmt::Formatter)"),
        ("src/Hello.java", "Hello.toString", "method", "    @Override\n    public String toString"),
        ("src/Hello.java", "Hello.main", "method", "    public static void main(String[] args)"),
        ("src/Hello.java", "Hello.Hello", "constructor", "    public Hello(List<String> names) {"),
    ],
)
def test_symbols_across_languages(repo, count, rel, symbol, kind, needle):
    docs, _ = read_repo(repo)
    doc = docs[rel]
    spans = code.spans(doc, count, 40)
    (span,) = [s for s in spans if symbol in symbols(s) and needle in doc.text[s.start : s.end]]
    assert kind in span.metadata["kind"].split(", ")
    assert span.metadata["line_start"] <= line_of(doc.text, needle) <= span.metadata["line_end"]


@pytest.mark.parametrize("max_tokens", [16, 64, 254])
def test_every_chunk_fits_and_no_line_is_lost(repo, count, max_tokens):
    docs, _ = read_repo(repo)
    for rel, doc in docs.items():
        spans = code.spans(doc, count, max_tokens)
        assert spans, rel
        lines = doc.text.split("\n")
        covered: set[int] = set()
        previous_end = 0
        for span in spans:
            chunk = doc.text[span.start : span.end]
            assert count(chunk) <= max_tokens, (rel, chunk)
            assert chunk.strip() and chunk == chunk.rstrip() and span.start >= previous_end
            previous_end = span.end
            first, last = span.metadata["line_start"], span.metadata["line_end"]
            assert first == doc.text.count("\n", 0, span.start) + 1
            assert last == first + chunk.count("\n")
            assert {"symbol", "kind"} <= set(span.metadata)
            covered.update(range(first, last + 1))
        for number, line in enumerate(lines, 1):
            if line.strip():
                assert number in covered, (rel, number, line)
        # Every non-blank character appears, in order, across the chunks.
        joined = "".join("".join(texts(doc, spans)).split())
        assert joined == "".join(doc.text.split()), rel


def test_other_languages_use_sections_or_line_windows(repo, count):
    docs, _ = read_repo(repo)
    (toml,) = code.spans(docs["pyproject.toml"], count, 254)
    assert toml.metadata == {"line_start": 1, "line_end": 2, "symbol": "", "kind": "lines"}
    (md,) = code.spans(docs["README.md"], count, 254)
    assert md.metadata["kind"] == "section" and md.metadata["line_start"] == 1


def test_parse_failure_falls_back_to_line_windows(repo, count, monkeypatch):
    docs, _ = read_repo(repo)

    def broken(grammar):
        raise OSError("grammar missing")

    monkeypatch.setattr(code, "_language", broken)
    spans = code.spans(docs["greeter.py"], count, 64)
    assert spans and {s.metadata["kind"] for s in spans} == {"lines"}
    assert "".join("".join(texts(docs["greeter.py"], spans)).split()) == "".join(GREETER_PY.split())


def test_single_file_and_missing_path(repo):
    (doc,) = code.read(repo / "src" / "lib.rs", "repo")
    assert doc.native_id == "lib.rs" and doc.metadata["language"] == "rust"
    (err,) = code.read(repo / "missing", "repo")
    assert isinstance(err, ReadError) and "no such file" in err.error


def test_unlistable_folder_is_reported(repo, monkeypatch):
    real = os.scandir

    def scandir(path="."):
        if Path(path).name == "web":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    docs, errors = read_repo(repo)
    assert not any(rel.startswith("web/") for rel in docs) and "greeter.py" in docs
    assert errors["web"].error == "unreadable: Permission denied"
