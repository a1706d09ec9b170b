"""Changing a home's settings from the application: the one place that checks a setting naming
something a higher layer owns (a model of the registry, a graph profile) before ``Home`` writes it."""

from __future__ import annotations

from ragbag.core.home import Home
from ragbag.index import graph
from ragbag.models import embedding


def set_setting(home: Home, key: str, value: str) -> None:
    """Set ``key`` in the home's config.yaml, with a one-line error for a value ragbag cannot use."""
    if key == "embedding.model":
        embedding.spec(value)
    elif key == "graph.profile":
        graph.check_profile(value, "graph.profile")
    home.set_config(key, value)
