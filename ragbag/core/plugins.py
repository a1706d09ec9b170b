"""Where connectors, embedding models and LLM providers come from: Python entry points.

One mechanism for all three families and for every package, ragbag's own included: ragbag's
``pyproject.toml`` declares its built-ins in the same entry-point groups a third-party package
uses, so an installed plugin is found, listed and loaded exactly like a built-in (see
``docs/plugins.md``). What each family's object must provide is its own module's protocol
(``ragbag.connectors.Connector``, ``ragbag.models.embedding.ModelSpec``,
``ragbag.answer.llm.Provider``); this module only finds and loads them.
"""

from __future__ import annotations

import functools
from importlib.metadata import Distribution, EntryPoint, EntryPoints, distributions

from ragbag.core.errors import RagbagError

CONNECTORS = "ragbag.connectors"
MODELS = "ragbag.models"
LLM_PROVIDERS = "ragbag.llm_providers"


@functools.cache
def registered(group: str) -> dict[str, EntryPoint]:
    """Every entry point of ``group`` by name. A name two packages claim goes to ragbag's own
    (a plugin cannot silently replace a built-in), else to the first found."""
    found: dict[str, tuple[EntryPoint, bool]] = {}
    for ours, eps in _declared():
        for ep in eps.select(group=group):
            if ep.name not in found or (ours and not found[ep.name][1]):
                found[ep.name] = (ep, ours)
    return {name: ep for name, (ep, _) in found.items()}


@functools.cache
def _declared() -> list[tuple[bool, EntryPoints]]:
    """Each distribution on the path that declares anything in ragbag's groups, once a process:
    whether it is ragbag itself, and its entry points. Every distribution, not importlib's one
    per name: a checkout's stale ``ragbag.egg-info`` found before the installed metadata would
    otherwise hide its groups. A distribution's name is read from its metadata (the whole of
    its ``METADATA``, ragbag's README included) only when it declares something here, not once
    for each entry point: the scan is part of every build's run."""
    groups = (CONNECTORS, MODELS, LLM_PROVIDERS)
    out = []
    for dist in distributions():
        eps = dist.entry_points
        if any(ep.group in groups for ep in eps):
            out.append((_is_ragbag(dist), eps))
    return out


def _is_ragbag(dist: Distribution) -> bool:
    """Declared by the ragbag distribution itself (not merely pointing into a ``ragbag.`` name)."""
    return (dist.name or "").lower() == "ragbag"


def load(group: str, name: str) -> object:
    """The object ``name`` stands for in ``group``; a plugin that fails to import is one line
    naming its package, never a traceback."""
    ep = registered(group)[name]
    try:
        return ep.load()
    except Exception as e:  # a third-party package's import can fail any way
        package = ep.dist.name if ep.dist is not None else ep.value
        raise RagbagError(f"the {name!r} plugin ({package}, {ep.value}) failed to load: {e}") from e
