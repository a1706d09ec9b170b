"""The mutation fuzzer over every real-world fixture (``tests/fuzzing.py``, issue 31), bounded
for the suite: one round of each mutation kind per file with a fixed seed. The longer setting
is ``benchmarks/fuzz_bench.py`` (more rounds, more seeds), whose figures docs/reliability.md
quotes."""

from __future__ import annotations

from tests.fuzzing import EXPECTATIONS, KINDS, ROOT, fuzz

SEED = 20261204


def test_no_mutation_fails_a_source_or_loses_records_in_silence(tmp_path):
    tally = fuzz(rounds=1, seed=SEED, work=tmp_path)
    assert tally.mutations == len(EXPECTATIONS) * len(KINDS)
    assert tally.untouched > 0 and tally.errors > 0  # the property was exercised, not vacuous
    assert not tally.failures, "\n".join(tally.failures)


def test_the_fuzzer_catches_a_connector_that_fails_its_source(tmp_path, monkeypatch):
    """The property can fail: a reader that raises on any damaged file is caught."""
    from ragbag.connectors import mail

    real = mail.read

    def brittle(path, source, cursor=None, options=None):
        data = path.read_bytes() if path.is_file() else b""
        if data and data != (ROOT / "mail/cpython/msg_02.txt").read_bytes():
            raise ValueError("damaged")
        yield from real(path, source, cursor, options=options)

    monkeypatch.setattr(mail, "read", brittle)
    tally = fuzz(rounds=1, seed=SEED, work=tmp_path, files=["mail/cpython/msg_02.txt"])
    assert tally.failures and all("ValueError: damaged" in f for f in tally.failures)
