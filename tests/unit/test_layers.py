"""The import layers of docs/architecture.md, checked on every import statement in the package
(function-level ones too): nothing imports upward, siblings stay apart, Dagster stays in the
layers that wire it, and nothing reaches into another module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

# Bottom-up. A layer may import the layers below it; layers of one rank are siblings that never
# import each other.
LAYERS: dict[str, int] = {
    "core": 0,
    "text": 1,
    "models": 1,
    "index": 2,
    "connectors": 3,
    "pipeline": 4,
    "search": 4,
    "answer": 5,
    "orchestration": 6,
    "apps": 7,
}
# Where each layer's files live in the checkout (the card's folders install under ragbag.*).
FOLDERS = {name: ROOT / "ragbag" / name for name in LAYERS} | {
    "connectors": ROOT / "connectors",
    "orchestration": ROOT / "orchestration",
}
# Dagster lives in one place: the assets, definitions, runner and instance of orchestration/.
DAGSTER_LAYERS = {"orchestration"}
# The one module allowed to import Dagster's private API (pinned version; one file to check on upgrade).
DAGSTER_INTERNALS = ROOT / "orchestration" / "dagster_internals.py"
# The Dagster runner: the application layer's one module outside apps/ (the CLI, the MCP server
# and the search page call it to build; the schedules and sensors only request runs).
RUNNER = ROOT / "orchestration" / "runner.py"
# Dagster calls that start a run; only the application layer may make them.
RUN_STARTERS = {"execute_job", "materialize", "materialize_to_memory", "submit_run", "launch_run", "execute_in_process"}


def _modules() -> list[tuple[str, Path]]:
    return [(layer, path) for layer, folder in FOLDERS.items() for path in sorted(folder.rglob("*.py"))]


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, names taken from it) for every import statement in the file."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module, [alias.name for alias in node.names]))
    return out


def _layer_of(module: str, names: list[str]) -> list[str]:
    """The layers an import reaches: ``from ragbag import connectors`` reaches the connectors layer."""
    parts = module.split(".")
    if parts[0] != "ragbag":
        return []
    if len(parts) > 1:
        return [parts[1]] if parts[1] in LAYERS else []
    return [n for n in names if n in LAYERS]


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_every_engine_module_belongs_to_a_layer():
    strays = [p.name for p in (ROOT / "ragbag").glob("*.py") if p.name != "__init__.py"]
    folders = {p.name for p in (ROOT / "ragbag").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert not strays, f"modules outside any layer: {strays}"
    assert folders <= set(LAYERS), f"subpackages missing from the layer table: {folders - set(LAYERS)}"


def test_nothing_imports_upward_or_sideways():
    bad = []
    for layer, path in _modules():
        for line, module, names in _imports(path):
            for target in _layer_of(module, names):
                if target == layer:
                    continue
                if LAYERS[target] >= LAYERS[layer]:
                    bad.append(f"{_where(path, line)}: {layer} imports {target} ({module})")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_generic_top_level_names():
    """The top folders install as ragbag.connectors and ragbag.orchestration; importing them by
    their bare names would work only from a checkout."""
    bad = [
        f"{_where(path, line)}: {module}"
        for _, path in _modules()
        for line, module, _ in _imports(path)
        if module.split(".")[0] in ("connectors", "orchestration", "assets", "pipelines")
    ]
    assert not bad, "bare imports of the card's folders:\n" + "\n".join(bad)


def test_dagster_only_where_it_is_wired():
    bad = [
        f"{_where(path, line)}: {layer} imports {module}"
        for layer, path in _modules()
        if layer not in DAGSTER_LAYERS
        for line, module, _ in _imports(path)
        if module.split(".")[0] == "dagster" or module.startswith("dagster_")
    ]
    assert not bad, "Dagster below the layers that wire it:\n" + "\n".join(bad)


def test_only_the_application_layer_starts_runs():
    bad = []
    for layer, path in _modules():
        if layer == "apps" or path == RUNNER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in RUN_STARTERS:
                bad.append(f"{_where(path, node.lineno)}: {name}")
    assert not bad, "runs started outside apps/ and the runner:\n" + "\n".join(bad)


def test_no_private_reach_ins():
    """A name or module with a leading underscore is its package's own: another package never
    imports it, and only orchestration/dagster_internals.py imports Dagster's private modules."""
    bad = []
    for layer, path in _modules():
        here = "ragbag." + ".".join((layer, *path.relative_to(FOLDERS[layer]).parts[:-1]))
        for line, module, names in _imports(path):
            parts = module.split(".")
            private = [i for i, part in enumerate(parts) if part.startswith("_") and not part.startswith("__")]
            if parts[0] == "dagster" and private and path != DAGSTER_INTERNALS:
                bad.append(f"{_where(path, line)}: {module}")
            if parts[0] != "ragbag":
                continue
            if private and not here.startswith(".".join(parts[: private[0]])):
                bad.append(f"{_where(path, line)}: {module} (a private module of another package)")
            owner = module if module != "ragbag" else here
            for name in names:
                if name.startswith("_") and not name.startswith("__") and not here.startswith(owner):
                    bad.append(f"{_where(path, line)}: from {module} import {name}")
    assert not bad, "private names imported from other packages:\n" + "\n".join(bad)


def _module_name(layer: str, path: Path) -> str:
    rel = path.relative_to(FOLDERS[layer]).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(["ragbag", layer, *parts])


def test_no_import_circle():
    """No module reaches itself through imports (function-level ones too): a circle is two
    modules that can only be understood, tested and moved together."""
    names = {_module_name(layer, path): path for layer, path in _modules()}
    graph: dict[str, set[str]] = {m: set() for m in names}
    for module, path in names.items():
        for _, target, taken in _imports(path):
            for candidate in [f"{target}.{n}" for n in taken] + [target]:
                if candidate in names and candidate != module:
                    graph[module].add(candidate)
                    break
    # Tarjan's strongly connected components: any with two or more modules is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize("layer", [*sorted(LAYERS), "evalsets", "benchmarks"])
def test_modules_stay_small(layer):
    """400 lines a module at most (the evaluation sets' own distribution, evalsets/, and the
    benchmarks too); a longer one says why in its docstring (a line starting 'Long because')."""
    long = []
    folder = FOLDERS.get(layer, ROOT / layer)
    for path in sorted(folder.rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue  # benchmarks/.work: what the benchmarks installed and wrote
        text = path.read_text()
        lines = text.count("\n")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if lines > 400 and "Long because" not in doc:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, "modules over 400 lines without a reason in their docstring:\n" + "\n".join(long)


def test_every_package_is_installed():
    """pyproject.toml lists packages one by one (the card's folders are mapped under ragbag.*), so a
    new subpackage missing from the list would be left out of a wheel without any other test noticing."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"ragbag"}
    for layer, folder in FOLDERS.items():
        for init in folder.rglob("__init__.py"):
            found.add(".".join(("ragbag", layer, *init.parent.relative_to(folder).parts)))
    assert found == listed, f"unlisted: {sorted(found - listed)}; listed but absent: {sorted(listed - found)}"


def test_the_cli_starts_without_heavy_imports():
    """Every command is registered at start-up, so a module of apps/cli that imports the index,
    the models or Dagster at its top would make `ragbag add` and `ragbag --help` pay for them."""
    import subprocess
    import sys

    code = (
        "import sys, ragbag.apps.cli.main\n"
        "heavy = [m for m in ('numpy', 'pyarrow', 'lancedb', 'faiss', 'torch', 'dagster') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "", f"imported at CLI start-up: {out.stdout.strip()}"
