"""Settings in ``config.yaml``: which keys exist, their defaults, and the checks of values this
layer can judge on its own.

A setting that names something a higher layer owns (``embedding.model`` names a model of the
registry in ``ragbag.models``, ``graph.profile`` a profile of ``ragbag.index``) is checked by the
application layer before it is written (``ragbag.apps.settings``), so this module needs nothing
above ``core``.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragbag.core.errors import RagbagError

# The embedding model a home uses until ``embedding.model`` names another (the registry of
# models is ``ragbag.models.embedding``). Mixed-language homes are the normal case (a German
# bill, a Chinese chat, an English question), so the default is multilingual; it also ranks the
# English sets at least as well (benchmarks/README.md, "Languages"), and all-MiniLM-L6-v2 stays
# a choice for English-only homes.
DEFAULT_MODEL = "multilingual-e5-small"

# Settings config.yaml may hold (dotted keys).
SETTABLE = {
    "embedding.model",
    "graph.profile",
    "graph.budget",
    "llm.provider",
    "llm.model",
    "llm.base_url",
    "storage.lance_uri",
    "storage.keep_versions",
    "history.versions",
    "history.days",
    "build.early_publish",
    "build.embed_cluster",
}
# Superseded table versions stay this long by default: a search that loaded an index just before
# a publish still reads the versions it pinned (published versions stay regardless).
KEEP_VERSIONS = "1h"
# A document's earlier texts stay as versions (``--as-of``, ``ragbag history``): at most this many
# versions of a document in all (the current one included), none superseded longer ago than this
# many days. 0 versions keeps no history; per source with ``ragbag add --history-versions/-days``.
HISTORY_VERSIONS = 5
HISTORY_DAYS = 180
# A first build with at least this many passages to embed publishes keyword search before it
# embeds, then vectors in slices as they come (see ``ragbag.pipeline.early``); 0 never does.
EARLY_PUBLISH = 2000


def graph_budget(value: str) -> float:
    """``graph.budget``: the share of its raw text a compact index plans to fit (0 = no limit)."""
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0 <= share <= 1:
        raise RagbagError(f"graph.budget {value!r}: a share of the raw text between 0 and 1 (0.05 = 5 %; 0 = no limit)")
    return share


def retention(value: str) -> timedelta:
    """``storage.keep_versions``: how long superseded LanceDB table versions stay (a duration:
    ``90s``, ``30m``, ``1h``, ``7d``; ``0`` keeps only what published indexes pin)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", str(value))
    if m is None:
        raise RagbagError(f"storage.keep_versions {value!r}: a duration such as 30m, 1h or 7d (0 = none)")
    unit = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]
    seconds = float(m[1]) * unit
    if seconds > 3650 * 86400:
        raise RagbagError(f"storage.keep_versions {value!r}: at most ten years")
    return timedelta(seconds=seconds)


# Object-store URIs LanceDB connects to (s3+ddb: S3 with the DynamoDB commit store, for several
# concurrent writers — docs/scale-out.md §3). Credentials come from the environment, never a URI.
OBJECT_STORE_SCHEMES = ("s3", "s3+ddb", "gs", "az")
_OBJECT_URI = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<rest>.*)$", re.IGNORECASE)


def lance_location(value: str) -> str:
    """Validate a ``storage.lance_uri``: "" (the default, ``$RAGBAG_HOME/lance``), a local path
    (made absolute) or ``s3://``, ``s3+ddb://``, ``gs://``, ``az://`` bucket[/prefix]."""
    value = value.strip()
    if not value:
        return ""
    m = _OBJECT_URI.match(value)
    if m is None:
        return str(Path(value).expanduser().resolve())
    scheme, rest = m["scheme"].lower(), m["rest"]
    schemes = ", ".join(f"{s}://" for s in OBJECT_STORE_SCHEMES)
    if scheme not in OBJECT_STORE_SCHEMES:
        raise RagbagError(f"storage.lance_uri {value!r}: use a local path or a {schemes} URI")
    path, _, query = rest.partition("?")
    bucket = path.split("/", 1)[0]
    if "@" in bucket or "#" in rest:
        raise RagbagError(
            f"storage.lance_uri {value!r}: no credentials in the URI; "
            "object-store keys come from the environment (docs/scale-out.md §3)"
        )
    if not bucket:
        raise RagbagError(f"storage.lance_uri {value!r}: name a bucket ({scheme}://BUCKET/PREFIX)")
    if scheme == "s3+ddb":  # the DynamoDB commit store's table is named in the URI, nothing else
        if not re.fullmatch(r"ddbTableName=[A-Za-z0-9_.-]{3,255}", query):
            raise RagbagError(f"storage.lance_uri {value!r}: s3+ddb needs ?ddbTableName=TABLE")
        return f"{scheme}://{path.rstrip('/')}?{query}"
    if query or "?" in rest:
        raise RagbagError(
            f"storage.lance_uri {value!r}: no query in the URI; "
            "object-store settings and keys come from the environment (docs/scale-out.md §3)"
        )
    return f"{scheme}://{path.rstrip('/')}"


def is_object_store(uri: str) -> bool:
    """Whether a lance location is an object-store URI rather than a local path."""
    return bool(_OBJECT_URI.match(uri))


def check(key: str, value: str) -> str:
    """The value to store for ``key``, normalised; a one-line error for an unknown key or a value
    this layer can judge."""
    if key not in SETTABLE:
        raise RagbagError(f"unknown setting {key!r}; settable: {', '.join(sorted(SETTABLE))}")
    if key == "graph.budget":
        return str(graph_budget(value))
    if key == "storage.lance_uri":
        return lance_location(value)
    if key == "storage.keep_versions":
        retention(value)
    if key.startswith("history.") or key == "build.early_publish":
        return str(whole_number(key, value))
    if key == "build.embed_cluster":
        return embed_cluster(value)
    return value


def embed_cluster(value: str) -> str:
    """``build.embed_cluster``: ``local:N`` (N Dask workers on this machine), a scheduler's
    address ``tcp://HOST:PORT``, or "" (the embed stage encodes itself)."""
    value = value.strip()
    if not value:
        return ""
    if value.startswith("local:"):
        n = value.removeprefix("local:")
        if n.isdigit() and 1 <= int(n) <= 256:
            return f"local:{int(n)}"
    elif value.startswith(("tcp://", "tls://")) and len(value) > len("tcp://"):
        return value
    raise RagbagError(f"build.embed_cluster {value!r}: local:N (N workers here) or a scheduler address tcp://HOST:PORT")


def whole_number(key: str, value: Any) -> int:
    """``history.versions``, ``history.days``, ``build.early_publish``: a whole number, 0 or more."""
    try:
        n = int(str(value).strip())
    except ValueError:
        n = -1
    if n < 0:
        raise RagbagError(f"{key} {value!r}: a whole number, 0 or more")
    return n
