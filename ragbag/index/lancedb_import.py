"""``import lancedb`` without the import-time work of the parts ragbag never calls.

Every build, search and CLI command that opens the index imports LanceDB; most of that import
was its REST namespace client (benchmarks/README.md, "Fixed costs"), which ragbag does not use,
and pandas, which pyarrow imports to recognise pandas objects ragbag never hands it
(``pandas_on_demand``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

from ragbag.core import collector

_pandas_on_demand = False


def pandas_on_demand() -> None:
    """In ragbag's own processes (the CLI's commands, the servers they start): pandas is imported
    when something asks for it, not by LanceDB's import. pyarrow's dataset module, which LanceDB
    imports, makes a scalar as it loads, and pyarrow checks whether each value it is handed is a
    pandas object, importing pandas to do so (half of LanceDB's import, a fixed cost of every
    build's run). ragbag's code hands pyarrow Python values and Arrow data only, so here that
    first check finds pandas absent, the state pyarrow is made to run in when pandas is not
    installed; a pandas conversion asked for by name (``to_pandas``) imports it and pyarrow
    recognises pandas objects from then on. A library caller (a notebook) keeps pyarrow's own
    behaviour, and so does a process that imported pandas first."""
    global _pandas_on_demand
    _pandas_on_demand = True


@functools.cache
def import_lancedb() -> Any:
    """``lancedb``, with the work its import does for code ragbag never calls put off until that
    code is first used. LanceDB imports its REST namespace client: hundreds of pydantic models and
    ``@validate_call`` functions, whose validators pydantic builds at class creation, and methods
    marked with ``overrides.override``, which reads the calling class's bytecode to check each one
    (lancedb's own development check). Together they were most of ``import lancedb``, a fixed cost
    of every build, search and CLI command that opens the index. Here each validator is built on its
    first call (models with pydantic's own ``defer_build``) and ``override`` only marks the method;
    what is called still validates its arguments, and nothing else changes. The REST client's
    package itself (its API classes, its HTTP client and urllib3) is run on first use of a name
    it defines (``_package_run_on_first_use``): LanceDB reads only the models, a subpackage."""
    import pydantic

    if _pandas_on_demand and "pandas" not in sys.modules:
        with _pandas_absent():
            import pyarrow.dataset  # noqa: F401  (LanceDB imports it; here its first check misses pandas)
    _package_run_on_first_use("lance_namespace_urllib3_client")
    saved = (pydantic.validate_call, pydantic.BaseModel.model_config)
    pydantic.validate_call = _validate_on_first_call(saved[0])
    pydantic.BaseModel.model_config = {**saved[1], "defer_build": True}
    try:
        with _override_only_marks(), collector.long_lived():
            import lancedb
    finally:
        pydantic.validate_call, pydantic.BaseModel.model_config = saved
    return lancedb


def _package_run_on_first_use(name: str) -> None:
    """Register package ``name`` without running its ``__init__``, which the first read of a name
    it defines then runs; its subpackages and modules import as before (their path is set)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # absent, or no longer a package: imported as it comes
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def first_use(attr: str) -> Any:
        del package.__dict__["__getattr__"]
        loader.exec_module(package)
        return getattr(package, attr)

    setattr(package, "__getattr__", first_use)  # noqa: B010  # PEP 562's module __getattr__
    sys.modules[name] = package


def _validate_on_first_call(eager: Any) -> Any:
    def deferred(func: Any = None, /, **options: Any) -> Any:
        def wrap(f: Any) -> Any:
            built: Any = None

            @functools.wraps(f)
            def call(*args: Any, **kwargs: Any) -> Any:
                nonlocal built
                if built is None:
                    built = eager(f, **options)
                return built(*args, **kwargs)

            return call

        return wrap(func) if func is not None else wrap

    return deferred


class _NoPandas:
    """A finder that answers ``import pandas`` as if it were not installed."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas":
            raise ImportError("pandas is imported on demand in ragbag's processes")


@contextlib.contextmanager
def _pandas_absent() -> Iterator[None]:
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextlib.contextmanager
def _override_only_marks() -> Iterator[None]:
    try:
        import overrides
    except ImportError:  # a LanceDB that no longer uses it
        yield
        return

    def mark(method: Any = None, /, **_options: Any) -> Any:
        def marked(m: Any) -> Any:
            m.__override__ = True  # what overrides.override sets, and all a caller may read
            return m

        return marked(method) if method is not None else marked

    saved = (overrides.override, overrides.overrides)
    overrides.override = overrides.overrides = mark
    try:
        yield
    finally:
        overrides.override, overrides.overrides = saved
