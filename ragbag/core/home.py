"""$RAGBAG_HOME: where sources are registered and every index lives.

Everything ragbag writes goes under one owner-only directory, because it holds people's mail
and chats. ``sources.yaml`` is rewritten atomically (temp file + rename) so a crash mid-write
never loses the registry.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from ragbag.core import private
from ragbag.core.errors import RagbagError
from ragbag.core.private import clear_stale_temporaries, tighten, write_private
from ragbag.core.settings import (
    EARLY_PUBLISH,
    HISTORY_DAYS,
    HISTORY_VERSIONS,
    KEEP_VERSIONS,
    check,
    embed_cluster,
    is_object_store,
    retention,
    whole_number,
)

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


# DAGSTER_HOME's instance config: no telemetry; every pool (the assets use one, ragbag_lance,
# for the LanceDB tables all sources share) runs one step at a time across all runs.
@dataclass
class Source:
    name: str
    connector: str
    path: str
    options: dict[str, Any] = field(default_factory=dict)
    history: dict[str, int] = field(default_factory=dict)  # {"versions": N, "days": D}: see Home.history_rule

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"connector": self.connector, "path": self.path}
        if self.options:
            d["options"] = self.options
        if self.history:
            d["history"] = self.history
        return d


class Home:
    """One ragbag home directory and the files in it."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        raw = root or os.environ.get("RAGBAG_HOME") or "~/.ragbag"
        self.root = Path(raw).expanduser().resolve()

    def ensure(self) -> Home:
        """Create the home (0700) and its folders (the Dagster home's ``dagster.yaml`` is
        ``ragbag.orchestration.instance``'s); the first call in a process takes group and other
        permissions off what is already there."""
        self.check_root()
        dirs = [self.root, self.dagster_home, self.index_root, self.state_dir, self.tmp_dir]
        if self.lance_is_local:  # an object store needs no directory made
            dirs.append(self.lance_dir)
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        if private.is_application():
            private.private_process(self.tmp_dir)  # the temporaries' folder exists now
        if private.first_time(self.root):
            clear_stale_temporaries(self.tmp_dir)
            tighten(self.root)
            if self.lance_is_local and not self.lance_dir.is_relative_to(self.root):
                tighten(self.lance_dir)
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
        return not is_object_store(self.lance_uri)

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
    def writer_lock(self) -> Path:
        """The file every build step locks while it writes the shared tables (see leases)."""
        return self.lease_dir / "writers.lock"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    @property
    def early_publish(self) -> int:
        value = self.get_config("build.early_publish")
        return EARLY_PUBLISH if value is None else whole_number("build.early_publish", value)

    @property
    def embed_cluster(self) -> str:
        """Where the embed stage encodes: "" (in its own process), ``local:N`` or a Dask
        scheduler's address (``ragbag.pipeline.shards``)."""
        return embed_cluster(str(self.get_config("build.embed_cluster") or ""))

    @property
    def keep_versions(self) -> timedelta:
        return retention(str(self.get_config("storage.keep_versions") or KEEP_VERSIONS))

    def history_rule(self, source: Source) -> tuple[int, int]:
        """(versions, days) a source's documents keep of their history: the source's own rule,
        else the home's ``history.*`` settings, else the defaults."""
        rule = []
        for key, default in (("versions", HISTORY_VERSIONS), ("days", HISTORY_DAYS)):
            value = source.history.get(key)
            if value is None:
                value = self.get_config(f"history.{key}")
            rule.append(default if value is None else whole_number(f"history.{key}", value))
        return rule[0], rule[1]

    def index_dir(self, connector: str, source: str) -> Path:
        return self.index_root / connector / source

    # -- configuration -------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return _read_yaml(self.config_file) or {}

    def set_config(self, key: str, value: str) -> None:
        """Set a dotted key in config.yaml. Values this layer can judge are checked here; names of
        models and graph profiles are checked by ``ragbag.apps.config`` before they get here."""
        value = check(key, value)
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
            out[str(name)] = Source(
                str(name), d["connector"], str(d["path"] or ""), d.get("options") or {}, d.get("history") or {}
            )
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
        history: dict[str, int] | None = None,
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
        history = {k: whole_number(f"history.{k}", v) for k, v in (history or {}).items() if v is not None}
        src = Source(name, connector, path, options or {}, history)
        current[name] = src
        self._write_sources(current)
        return src

    def set_source_options(self, name: str, options: dict[str, Any]) -> Source:
        """Replace a registered source's options (its path, connector and history stay)."""
        current = self.sources()
        if name not in current:
            raise RagbagError(f"no source named {name!r}; see `ragbag list`")
        current[name].options = options
        self._write_sources(current)
        return current[name]

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
