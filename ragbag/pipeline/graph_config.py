"""A source's graph settings: which profile its graph has and the parameters it is built with.

Read by the embed stage too (a compact source's vectors wait for the graph stage instead of
being stored) and by the checks, so they live apart from the graph stage itself.
"""

from __future__ import annotations

from ragbag.core.home import Home, Source
from ragbag.core.settings import graph_budget
from ragbag.index import graph
from ragbag.index.params import Params


def graph_profile(home: Home, source: Source) -> str:
    """The source's graph profile: its own option, else the home's ``graph.profile``, else fast."""
    profile = source.options.get("profile") or home.get_config("graph.profile") or "fast"
    return graph.check_profile(str(profile), f"source {source.name!r}: graph profile")


def graph_params(home: Home) -> Params:
    """Build parameters: the defaults, with the home's ``graph.budget`` when it sets one."""
    budget = home.get_config("graph.budget")
    return Params(budget=graph_budget(str(budget))) if budget is not None else Params()
