"""Secrets kept out of the index: each record a connector reads is screened before the read stage
stores it, so no table, cache, keyword index, Dagster preview or log ever holds what was taken out.

A source says what happens to a record holding a secret (its option ``secrets``): ``redact``
(the default: each secret becomes ``[secret:KIND]`` and the record is indexed), ``skip`` (the
record is left out) or ``keep``. Its option ``pii`` names PII kinds to redact too ("email",
"phone"); by default they stay searchable. A home's own rules (``ragbag secrets rule``) are
secret kinds of its own. What was found where — kinds, counts and the document, never the text —
is kept per source for ``ragbag secrets``; this module owns that file and the rules file.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home, Source
from ragbag.core.private import write_private
from ragbag.core.records import Document, stable_hash
from ragbag.text import secrets

POLICIES = ("redact", "skip", "keep")
PII_KINDS = ("email", "phone")


@dataclass(frozen=True)
class Screen:
    policy: str
    pii: tuple[str, ...]
    rules: tuple[secrets.Rule, ...]  # the home's own (`ragbag secrets add`)
    library: tuple[secrets.Rule, ...] | None = None  # detect-secrets' (None: read from it)


@dataclass
class Screened:
    document: Document | None  # None: skipped
    kinds: Counter[str]
    action: str  # "redacted", "skipped", "kept" or "" (nothing found)


def for_source(home: Home, source: Source) -> Screen:
    policy = str(source.options.get("secrets", "redact"))
    pii = tuple(str(k) for k in source.options.get("pii", ()) or ())
    library = secrets.library_rules(home.tmp_dir)
    return Screen(policy if policy in POLICIES else "redact", pii, home_rules(home), library)


def check_policy(value: str) -> str:
    if value not in POLICIES:
        raise RagbagError(f"--secrets must be one of {', '.join(POLICIES)}, not {value!r}")
    return value


def check_pii(value: str) -> list[str]:
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in PII_KINDS]
    if unknown or not kinds:
        raise RagbagError(f"--redact-pii takes a comma-separated list of {', '.join(PII_KINDS)}, not {value!r}")
    return kinds


def screen(rule: Screen, doc: Document) -> Screened:
    """The record as it may be stored, and what was found in it."""
    found: Counter[str] = Counter()
    secret_found = False

    def clean(value: str) -> str:
        nonlocal secret_found
        hits = secrets.find(value, rule.pii, rule.rules, rule.library)
        if not hits:
            return value
        found.update(secrets.counts(hits))
        secret_found |= any(h.family == secrets.SECRET for h in hits)
        if rule.policy == "keep":
            hits = [h for h in hits if h.family == secrets.PII]
        return secrets.redact(value, hits)

    cleaned = replace(
        doc,
        title=clean(doc.title),
        text=clean(doc.text),
        uri=clean(doc.uri) if "://" in doc.uri else doc.uri,
        native_id=clean(doc.native_id) if "://" in doc.native_id else doc.native_id,
        authors=[clean(a) for a in doc.authors],
        metadata=_clean_values(doc.metadata, clean),
    )
    if not found:
        return Screened(doc, found, "")
    if secret_found and rule.policy == "skip":
        return Screened(None, found, "skipped")
    return Screened(cleaned, found, "kept" if rule.policy == "keep" else "redacted")


def clean_row(rule: Screen, row: dict[str, Any]) -> dict[str, Any]:
    """A stored document row (an earlier version about to be kept in the history) with its
    secrets redacted, unless the source keeps them: a home built before this screen, or under
    another policy, does not carry them on into its versions."""
    if rule.policy == "keep":
        return row
    out = dict(row)
    for key in ("title", "text"):
        if isinstance(out.get(key), str):
            out[key] = redacted(rule, out[key])
    return out


def redacted(rule: Screen, value: str) -> str:
    """``value`` with every secret and asked-for PII kind replaced, whatever the policy."""
    return secrets.redact(value, secrets.find(value, rule.pii, rule.rules, rule.library))


def _clean_values(value: Any, clean: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: _clean_values(v, clean) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_values(v, clean) for v in value]
    return value


# -- what was found, per source --------------------------------------------------------------
def findings_path(home: Home, source_name: str) -> Path:
    return home.state_dir / f"{source_name}.secrets.json"


def load_findings(home: Home, source_name: str) -> dict[str, dict[str, Any]]:
    path = findings_path(home, source_name)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # the next build writes it whole again
    return data.get("documents", {}) if isinstance(data, dict) else {}


def signature(home: Home, source: Source) -> str:
    """How the screen treats this source's records now: its policy, PII kinds and every rule.
    Records read (or versions kept) under another were screened otherwise."""
    rule = for_source(home, source)
    return stable_hash(rules_digest(home), rule.policy, *rule.pii, length=16)


def screened_with(home: Home, source_name: str) -> str | None:
    """The signature the source's last read was screened with (None: never screened)."""
    try:
        data = json.loads(findings_path(home, source_name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("signature") if isinstance(data, dict) else None


def save_findings(home: Home, source: Source, documents: dict[str, dict[str, Any]]) -> None:
    body = {
        "source": source.name,
        "policy": for_source(home, source).policy,
        "signature": signature(home, source),
        "documents": documents,
    }
    write_private(findings_path(home, source.name), json.dumps(body, sort_keys=True, ensure_ascii=False))


def forget(home: Home, source_name: str) -> None:
    findings_path(home, source_name).unlink(missing_ok=True)


def entry(rule: Screen, doc: Document, screened: Screened) -> dict[str, Any]:
    """What ``ragbag secrets`` shows of one record: its kinds and counts, where it is, what was
    done. Its title and link are redacted whatever the policy: a kept or skipped record's too."""

    uri = redacted(rule, doc.uri) if "://" in doc.uri else doc.uri
    kinds = dict(sorted(screened.kinds.items()))
    return {"uri": uri, "title": redacted(rule, doc.title), "kinds": kinds, "action": screened.action}


def totals(documents: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Findings summed over documents: per kind, and records per action (redacted, skipped, kept)."""
    kinds: Counter[str] = Counter()
    actions: Counter[str] = Counter()
    for found in documents.values():
        kinds.update(found["kinds"])
        actions[found["action"]] += 1
    return {"kinds": dict(sorted(kinds.items())), "records": dict(sorted(actions.items()))}


# -- a home's own rules ----------------------------------------------------------------------
def rules_path(home: Home) -> Path:
    return home.root / "secret_rules.yaml"


def _read_rules(home: Home) -> dict[str, str]:
    path = rules_path(home)
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}


def home_rules(home: Home) -> tuple[secrets.Rule, ...]:
    path = rules_path(home)
    raw = _read_rules(home)
    try:
        return tuple(secrets.user_rule(kind, pattern) for kind, pattern in sorted(raw.items()))
    except (ValueError, AttributeError) as e:
        raise RagbagError(f"{path}: {e}") from None


def add_rule(home: Home, kind: str, pattern: str) -> None:
    try:
        secrets.user_rule(kind, pattern)
    except ValueError as e:
        raise RagbagError(str(e)) from None
    raw = _read_rules(home)
    raw[kind] = pattern
    write_private(rules_path(home), yaml.safe_dump(raw, sort_keys=True, allow_unicode=True))


def remove_rule(home: Home, kind: str) -> bool:
    raw = _read_rules(home)
    if kind not in raw:
        return False
    del raw[kind]
    write_private(rules_path(home), yaml.safe_dump(raw, sort_keys=True, allow_unicode=True))
    return True


def rules_digest(home: Home) -> str:
    """What changes a build's screening: the rules' version and the home's own rules."""
    path = rules_path(home)
    own = path.read_text(encoding="utf-8") if path.exists() else ""
    return f"{secrets.RULES_VERSION}:{own}"
