"""Plain text from formatted documents: an HTML page's main text (files, mail bodies, calendar
descriptions) and a PDF's pages."""

from __future__ import annotations

import io
import re

from bs4 import BeautifulSoup, Comment, NavigableString

from ragbag.text.unreadable import Unreadable, one_line

PAGE_BREAK = "\f"  # between a PDF's pages, so chunks can cite the pages they come from
_DROP_TAGS = ["script", "style", "nav", "header", "footer", "aside", "noscript", "form", "svg", "template", "iframe"]
_BLOCK_TAGS = [
    "p",
    "div",
    "section",
    "article",
    "main",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "blockquote",
    "pre",
    "figure",
    "figcaption",
    "hr",
    "details",
]


def html_text(html: str) -> tuple[str, str]:
    """(title, main text) of a page: headings become '#' lines so prose chunking cuts at them."""
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_DROP_TAGS + ["title", "head"]):
        if _is_noise(tag):
            tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    articles = soup.find_all("article")
    root = soup.find("main") or (articles[0] if len(articles) == 1 else None) or soup.body or soup
    for node in root.find_all(string=True):
        if not node.find_parent("pre"):
            node.replace_with(NavigableString(re.sub(r"\s+", " ", str(node))))
    for tag in root.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        heading = tag.get_text(" ", strip=True)
        if not title and tag.name == "h1":
            title = heading
        tag.replace_with(f"\n\n{'#' * int(tag.name[1])} {heading}\n\n" if heading else "")
    for tag in root.find_all("br"):
        tag.replace_with("\n")
    for tag in root.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    text = re.sub(r"[ \t]*\n\n[ \t]*", "\n\n", root.get_text())
    text = re.sub(r"[ \t]+\n", "\n", text)
    return title, re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _is_noise(tag) -> bool:
    """Page furniture, unless it wraps the content itself (ASP.NET puts the whole body in a
    <form>) or belongs to it (an article's own <header> holds its title)."""
    if tag.decomposed or tag.find(["main", "article"]):
        return False
    if tag.name in ("header", "footer") and tag.find_parent(["main", "article"]):
        return False
    return tag.name != "form" or not tag.find(["p", "h1", "h2"])


def pdf_text(data: bytes, meta: dict, budget: int | None = None) -> tuple[str, str]:
    """(title, text) of a PDF, one form feed between pages (``meta["pages"]``: their number); any
    parser failure raises :class:`Unreadable`. Extraction stops once ``budget`` characters
    (default: :data:`ragbag.text.storable.MAX_TEXT_CHARS`) are read, mid-page if need be: a small
    PDF can draw the same text millions of times (a form reused, a text operator repeated), and
    its text would otherwise fill memory; ``meta["cut_at_page"]`` then says where it stopped."""
    from pypdf import PdfReader

    from ragbag.text.storable import MAX_TEXT_CHARS

    left = [MAX_TEXT_CHARS if budget is None else budget]
    pieces: list[str] = []

    def count(text: str, *_args) -> None:
        pieces.append(text)
        left[0] -= len(text)
        if left[0] < 0:
            raise _Spent

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF")
        pages = []
        for number, page in enumerate(reader.pages, 1):
            pieces.clear()
            try:
                pages.append((page.extract_text(visitor_text=count) or "").replace(PAGE_BREAK, "\n"))
            except _Spent:
                pages.append("".join(pieces).replace(PAGE_BREAK, "\n"))
                meta["cut_at_page"] = number
                break
        info = reader.metadata
        title = real_title(str(info.get("/Title") or "")) if info else ""
    except Unreadable:
        raise
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise Unreadable(f"unreadable PDF: {one_line(exc)}") from None
    meta["pages"] = len(pages)
    return title, PAGE_BREAK.join(rejoin_hyphens(page) for page in pages)


# A line broken after a hyphen inside a word: "infor-" / "mation", "WTU-" / "448172-K".
_HYPHEN_BREAK = re.compile(r"(\w)-[ \t]*\n[ \t]*(\w)")


def rejoin_hyphens(text: str) -> str:
    """A page's words broken across lines at a hyphen, made whole: a syllable break between
    lower-case letters loses its hyphen ("infor-|mation" → "information", "Steuer-|nummer" →
    "Steuernummer"); any other keeps it ("WTU-|448172-K" → "WTU-448172-K", "E-|Mail",
    "Baden-|Württemberg"), so an identifier is one token again."""

    def join(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        soft = left.isalpha() and left.islower() and right.isalpha() and right.islower()
        return left + right if soft else f"{left}-{right}"

    return _HYPHEN_BREAK.sub(join, text)


# Titles that tools write into a PDF's metadata instead of one: a file name ("note_pdf.html",
# "Microsoft Word - Brief.docx"), a placeholder ("Untitled", "Document1").
_FILE_NAME = re.compile(r"\.(html?|docx?|odt|rtf|txt|pdf|xlsx?|pptx?|tmp|indd|ps|dvi|tex|md|pages)$", re.I)
_PLACEHOLDER = re.compile(r"^(untitled|document\d*|title|no title|unbenannt|sans titre|microsoft word)$", re.I)


def real_title(raw: str) -> str:
    """A PDF's metadata title when it names the document, else "" (the caller uses the file's
    name): "Microsoft Word - " and similar producer prefixes are dropped, and a file name or a
    placeholder is no title."""
    title = " ".join(raw.replace("\x00", " ").split())
    title = re.sub(r"^(microsoft (word|powerpoint|excel)|untitled) - ", "", title, flags=re.I)
    if not title or _FILE_NAME.search(title) or _PLACEHOLDER.match(title):
        return ""
    return title


class _Spent(Exception):
    """A PDF's text budget is spent: extraction stops."""
