"""A visited web page as a document: one shape for a browser profile's history (``browser``) and
Chrome's history synced into Google Takeout (``takeout``), so both read, cite and filter alike:
the title, the readable URL, one line of visit facts, the description; ``url domain title
visit_count first_visit last_visit browser profile`` as metadata."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import unquote, urlsplit

from ragbag.core.records import Document

SCHEMES = ("http", "https")


def page_document(
    source: str,
    connector: str,
    url: str,
    title: str,
    count: int,
    first_at: datetime,
    last_at: datetime,
    browser: str,
    profile: str,
    where: str,
    desc: str = "",
) -> Document:
    """A visited page as a document. ``where`` names the history in the text ("Chrome (Default
    profile)")."""
    title, desc = " ".join(title.split()), desc.strip()
    domain = domain_of(url)
    readable = " ".join(unquote(url, errors="replace").split())
    facts = (
        f"{domain}: visited {count} time{'s' if count != 1 else ''} in {where},"
        f" first on {first_at:%Y-%m-%d}, last on {last_at:%Y-%m-%d}."
    )
    text = "\n".join(p for p in (title, readable, facts, desc) if p) + "\n"
    return Document(
        source=source,
        connector=connector,
        native_id=f"{browser}/{profile}/{url}",
        uri=url,
        title=title or readable,
        text=text,
        created_at=first_at,
        updated_at=last_at,
        metadata={
            "url": url,
            "domain": domain,
            "title": title,
            "visit_count": count,
            "first_visit": first_at.isoformat(),
            "last_visit": last_at.isoformat(),
            "browser": browser,
            "profile": profile,
        },
    )


def web_url(url: str) -> bool:
    """Whether a history keeps ``url``: http(s) pages only."""
    scheme, sep, _ = url.partition(":")
    return bool(sep) and scheme.lower() in SCHEMES


def domain_of(url: str) -> str:
    """The host without ``www.`` (a page's ``domain``, a bookmark's)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    return host[4:] if host.startswith("www.") else host
