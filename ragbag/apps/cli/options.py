"""The search filter options of ``search``, ``ask`` and ``react``, generated from their one
declaration (``ragbag.search.request.FILTERS``, which the tools' JSON schema comes from too).

A command declares a ``filters`` parameter and is wrapped in ``with_filters``: typer then sees
``--source``, ``--connector``, ``--where``, ``--person``, ``--after`` and ``--before`` in its place, and the
command receives them as one dict keyed by option name, as typed (``fields_of`` maps it onto a
SearchRequest; the agent takes it as its tools' arguments).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from ragbag.search.request import FILTERS, FilterOption

F = TypeVar("F", bound=Callable[..., Any])
# The default of a command's ``filters`` parameter: ``with_filters`` replaces the parameter.
FILTER_OPTIONS: Any = None
_TYPES: dict[str, Any] = {"names": list[str] | None, "where": str | None, "time": str | None, "text": str | None}


def with_filters(command: F) -> F:
    """``command`` with the filter options in place of its ``filters`` parameter."""
    signature = inspect.signature(command, eval_str=True)
    params: list[inspect.Parameter] = []
    for p in signature.parameters.values():
        params += [_parameter(f) for f in FILTERS] if p.name == "filters" else [p]

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        given = {f.argument: kwargs.pop(f.argument, None) for f in FILTERS}
        return command(*args, filters=given, **kwargs)

    run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return run  # type: ignore[return-value]


def _parameter(f: FilterOption) -> inspect.Parameter:
    return inspect.Parameter(
        f.argument,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=typer.Option(None, f.flag, help=f.help),
        annotation=_TYPES[f.kind],
    )
