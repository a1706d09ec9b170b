"""``import lancedb`` without the import-time work of the parts ragbag never calls.

Every build, search and CLI command that opens the index imports LanceDB; most of that import
was its REST namespace client (benchmarks/README.md, "Fixed costs"), which ragbag does not use.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
from collections.abc import Iterator
from typing import Any


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

    _package_run_on_first_use("lance_namespace_urllib3_client")
    saved = (pydantic.validate_call, pydantic.BaseModel.model_config)
    pydantic.validate_call = _validate_on_first_call(saved[0])
    pydantic.BaseModel.model_config = {**saved[1], "defer_build": True}
    try:
        with _override_only_marks():
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
