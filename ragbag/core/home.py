"""$RAGBAG_HOME: where sources are registered and every index lives.

Everything ragbag writes goes under one owner-only directory, because it holds people's mail
and chats. ``sources.yaml`` is rewritten atomically (temp file + rename) so a crash mid-write
never loses the registry.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from ragbag.core.errors import RagbagError
from ragbag.core.leases import alive
from ragbag.models.embedding import DEFAULT_MODEL, spec

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# DAGSTER_HOME's instance config: no telemetry; every pool (the assets use one, ragbag_lance,
# for the LanceDB tables all sources share) runs one step at a time across all runs.
_DAGSTER_YAML = "telemetry:\n  enabled: false\nconcurrency:\n  pools:\n    default_limit: 1\n"
# Settings config.yaml may hold (dotted keys); embedding.model is validated against the registry.
SETTABLE = {
    "embedding.model",
    "graph.profile",
    "graph.budget",
    "llm.provider",
    "llm.model",
    "llm.base_url",
    "storage.lance_uri",
    "storage.keep_versions",
}
# Superseded table versions stay this long by default: a search that loaded an index just before
# a publish still reads the versions it pinned (published versions stay regardless).
KEEP_VERSIONS = "1h"


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


@dataclass
class Source:
    name: str
    connector: str
    path: str
    options: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"connector": self.connector, "path": self.path}
        if self.options:
            d["options"] = self.options
        return d


class Home:
    """One ragbag home directory and the files in it."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        raw = root or os.environ.get("RAGBAG_HOME") or "~/.ragbag"
        self.root = Path(raw).expanduser().resolve()

    def ensure(self) -> Home:
        """Create the home (0700) with a telemetry-off Dagster home inside it; the first call in
        a process takes group and other permissions off what is already there."""
        self.check_root()
        dirs = [self.root, self.dagster_home, self.index_root, self.state_dir, self.tmp_dir]
        if self.lance_is_local:  # an object store needs no directory made
            dirs.append(self.lance_dir)
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        if _application:
            private_process(self)  # the temporaries' folder exists now
        if self.root not in _tightened:
            _tightened.add(self.root)
            clear_stale_temporaries(self.tmp_dir)
            tighten(self.root)
            if self.lance_is_local and not self.lance_dir.is_relative_to(self.root):
                tighten(self.lance_dir)
        self._ensure_dagster_yaml(self.dagster_home / "dagster.yaml")
        return self

    def check_root(self) -> None:
        """$RAGBAG_HOME must be (or become) a folder: a file there would otherwise surface as a
        NotADirectoryError from whichever command touches it first."""
        for path in (self.root, *self.root.parents):
            if path.exists():
                if not path.is_dir():
                    where = "is a file" if path == self.root else f"lies under {path}, a file"
                    raise RagbagError(f"RAGBAG_HOME {self.root} {where}, not a folder: point RAGBAG_HOME at a folder")
                return

    @property
    def tmp_dir(self) -> Path:
        """Temporaries and caches (SQLite copies, jieba's dictionary cache): private, like the
        rest of the home, and cleared of what dead processes left behind."""
        return self.root / "tmp"

    @staticmethod
    def _ensure_dagster_yaml(path: Path) -> None:
        """Telemetry off and one writer at a time, also in a dagster.yaml written by an older
        ragbag or edited by the user (their other settings are kept)."""
        wanted = yaml.safe_load(_DAGSTER_YAML)
        current = (_read_yaml(path) or {}) if path.exists() else {}
        merged = {**current, **{k: v for k, v in wanted.items() if k not in current}}
        if merged != current or not path.exists():
            write_private(path, yaml.safe_dump(merged, sort_keys=False))

    @property
    def sources_file(self) -> Path:
        return self.root / "sources.yaml"

    @property
    def config_file(self) -> Path:
        return self.root / "config.yaml"

    @property
    def lance_uri(self) -> str:
        """Where the LanceDB tables live: ``storage.lance_uri`` (a local path or an s3:// gs://
        az:// URI), else ``$RAGBAG_HOME/lance``. What ``Store`` connects to."""
        value = self.get_config("storage.lance_uri")
        return str(value) if value else str(self.root / "lance")

    @property
    def lance_is_local(self) -> bool:
        return not _OBJECT_URI.match(self.lance_uri)

    @property
    def lance_dir(self) -> Path:
        """The LanceDB directory on the local disk; for code that reads its files directly.
        A one-line error when ``storage.lance_uri`` puts the tables in an object store."""
        if not self.lance_is_local:
            raise RagbagError(f"the LanceDB tables are at {self.lance_uri} (storage.lance_uri), not on the local disk")
        return Path(self.lance_uri)

    @property
    def index_root(self) -> Path:
        return self.root / "index"

    @property
    def state_dir(self) -> Path:
        """Per-source read cursors of incremental connectors."""
        return self.root / "state"

    @property
    def lease_dir(self) -> Path:
        """The leases of running build steps (see ragbag.core.leases)."""
        return self.state_dir / "leases"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    @property
    def keep_versions(self) -> timedelta:
        return retention(str(self.get_config("storage.keep_versions") or KEEP_VERSIONS))

    def index_dir(self, connector: str, source: str) -> Path:
        return self.index_root / connector / source

    # -- configuration -------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return _read_yaml(self.config_file) or {}

    @property
    def model(self) -> str:
        """The embedding model this home indexes and queries with."""
        name = (self.config().get("embedding") or {}).get("model") or self._built_model() or DEFAULT_MODEL
        spec(name)  # validate early with a clear message
        return name

    def _built_model(self) -> str | None:
        """The model of what is already published, when config.yaml names none: a home built
        before the default model changed keeps its model (and its index) until the user
        chooses another, instead of being refused as stale."""
        for manifest in sorted(self.index_root.glob("*/*/current/manifest.json")):
            try:
                return json.loads(manifest.read_text()).get("model")
            except (OSError, ValueError):
                continue
        return None

    def set_config(self, key: str, value: str) -> None:
        """Set a dotted key (``embedding.model``) in config.yaml, validating what ragbag reads."""
        if key == "embedding.model":
            spec(value)
        elif key == "graph.profile":
            from ragbag.index.graph import PROFILES

            if value not in PROFILES:
                raise RagbagError(f"graph.profile {value!r}: use one of {', '.join(PROFILES)}")
        elif key == "graph.budget":
            value = str(graph_budget(value))
        elif key == "storage.lance_uri":
            value = lance_location(value)
        elif key == "storage.keep_versions":
            retention(value)
        elif key not in SETTABLE:
            raise RagbagError(f"unknown setting {key!r}; settable: {', '.join(sorted(SETTABLE))}")
        config = self.config()
        node = config
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise RagbagError(f"{self.config_file}: {part!r} is not a mapping")
        node[leaf] = value
        self.ensure()
        write_private(self.config_file, yaml.safe_dump(config, sort_keys=True))

    def get_config(self, key: str) -> Any:
        node: Any = self.config()
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node

    # -- sources -------------------------------------------------------------------------
    def sources(self) -> dict[str, Source]:
        raw = _read_yaml(self.sources_file) or {}
        entries = raw.get("sources") or {}
        if not isinstance(entries, dict):
            raise RagbagError(f"{self.sources_file}: 'sources' must be a mapping of name -> source")
        out = {}
        for name, d in entries.items():
            if not isinstance(d, dict) or "connector" not in d or "path" not in d:
                raise RagbagError(f"{self.sources_file}: source {name!r} needs 'connector' and 'path'")
            out[str(name)] = Source(str(name), d["connector"], str(d["path"] or ""), d.get("options") or {})
        return out

    def source(self, name: str) -> Source:
        try:
            return self.sources()[name]
        except KeyError:
            raise RagbagError(f"no source named {name!r}; see `ragbag list`") from None

    def add_source(
        self,
        name: str,
        connector: str,
        path: str,
        known: Collection[str],
        options: dict | None = None,
    ) -> Source:
        """Register a source; every check runs before anything is written.

        ``known`` is the connector registry, passed in so the engine never imports connectors.
        """
        if connector not in known:
            raise RagbagError(f"unknown connector {connector!r}; choose one of: {', '.join(known)}")
        if not _NAME.match(name):
            raise RagbagError(f"invalid source name {name!r}: use letters, digits, '.', '_' or '-' (max 64)")
        if path:  # "" = the connector's default places, discovered at every build
            resolved = Path(path).expanduser()
            try:
                if not resolved.exists():
                    raise RagbagError(f"path does not exist: {path}")
                path = str(resolved.resolve())
            except OSError as e:  # a name too long, a folder we may not enter
                raise RagbagError(f"path {path[:80]!r}: {e.strerror}") from None
        current = self.sources()
        if name in current:
            raise RagbagError(
                f"a source named {name!r} already exists ({current[name].connector}: {current[name].path})"
            )
        src = Source(name, connector, path, options or {})
        current[name] = src
        self._write_sources(current)
        return src

    def remove_source(self, name: str) -> Source:
        current = self.sources()
        if name not in current:
            raise RagbagError(f"no source named {name!r}; see `ragbag list`")
        src = current.pop(name)
        self._write_sources(current)
        return src

    def _write_sources(self, sources: dict[str, Source]) -> None:
        self.ensure()
        body = yaml.safe_dump({"sources": {n: s.as_dict() for n, s in sources.items()}}, sort_keys=True)
        write_private(self.sources_file, body)


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


_parsed: dict[Path, tuple[tuple[int, int, int], Any]] = {}


def _read_yaml(path: Path) -> Any:
    """Parsed YAML, re-read only when the file changed (search reads sources.yaml every call)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _parsed.get(path)
    if cached is not None and cached[0] == stamp:
        return copy.deepcopy(cached[1])
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        _parsed[path] = (stamp, data)
        return copy.deepcopy(data)
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        where = f" (line {line + 1})" if line is not None else ""
        raise RagbagError(f"{path}: invalid YAML{where}") from None


_tightened: set[Path] = set()
_TEMPORARY = re.compile(r"^ragbag-[a-z]+-(\d+)-")  # ragbag-<what>-<pid>-…: whose it is


_application = False  # whether this process is ragbag's own (see private_process)


def private_process(home: Home | None = None) -> None:
    """Make every file this process (and its children) creates owner-only, and put its
    temporaries under the home. For ragbag's own processes only — the CLI, the MCP server, the
    Dagster code location and its step processes call it before they write anything — since it
    changes the whole process; a library caller's umask and temporary folder stay its own. A
    home that does not exist yet gets its temporaries when ``ensure`` creates it."""
    global _application
    _application = True
    os.umask(0o077)
    home = home or Home()
    if home.root.is_dir():
        home.tmp_dir.mkdir(mode=0o700, exist_ok=True)
        os.environ["TMPDIR"] = str(home.tmp_dir)
        tempfile.tempdir = str(home.tmp_dir)


def temporary_prefix(what: str) -> str:
    """A prefix for a temporary file or folder that names its process, so a later process can
    tell a dead one's leftovers (a killed build's SQLite copy) from a live one's."""
    return f"ragbag-{what}-{os.getpid()}-"


def clear_stale_temporaries(folder: Path) -> list[str]:
    """Delete the temporaries of processes that are gone; returns their names."""
    gone = []
    for entry in folder.iterdir() if folder.is_dir() else ():
        m = _TEMPORARY.match(entry.name)
        if m and not alive(int(m[1])):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            gone.append(entry.name)
    return gone


def tighten(root: Path) -> int:
    """Take group and other permissions off everything under ``root`` (files 0600, folders
    0700) that an older ragbag, another tool or a process without our umask wrote; links are
    left alone (chmod would follow them out of the home). Returns how many were changed."""
    changed = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                    continue
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
                changed += 1
            except OSError:
                continue  # gone meanwhile, or not ours
    return changed


def write_private(path: Path, text: str) -> None:
    """Write atomically with mode 0600."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
