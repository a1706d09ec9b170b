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
from importlib.metadata import EntryPoint, distributions

from ragbag.core.errors import RagbagError

CONNECTORS = "ragbag.connectors"
MODELS = "ragbag.models"
LLM_PROVIDERS = "ragbag.llm_providers"


@functools.cache
def registered(group: str) -> dict[str, EntryPoint]:
    """Every entry point of ``group`` by name. A name two packages claim goes to ragbag's own
    (a plugin cannot silently replace a built-in), else to the first found."""
    found: dict[str, EntryPoint] = {}
    # Every distribution on the path, not importlib's one per name: a checkout's stale
    # ``ragbag.egg-info`` found before the installed metadata would otherwise hide its groups.
    for ep in (ep for dist in distributions() for ep in dist.entry_points.select(group=group)):
        if ep.name not in found or (_ours(ep) and not _ours(found[ep.name])):
            found[ep.name] = ep
    return found


def _ours(ep: EntryPoint) -> bool:
    """Declared by the ragbag distribution itself (not merely pointing into a ``ragbag.`` name)."""
    return ep.dist is not None and ep.dist.name.lower() == "ragbag"


def load(group: str, name: str) -> object:
    """The object ``name`` stands for in ``group``; a plugin that fails to import is one line
    naming its package, never a traceback."""
    ep = registered(group)[name]
    try:
        return ep.load()
    except Exception as e:  # a third-party package's import can fail any way
        package = ep.dist.name if ep.dist is not None else ep.value
        raise RagbagError(f"the {name!r} plugin ({package}, {ep.value}) failed to load: {e}") from e
