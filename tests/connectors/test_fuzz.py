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


# The connectors of issue 35, fuzzed on files of their public corpus (tests/fixtures/public):
# one or two per origin project, each read alone, as a user pointing ragbag at it would.
PUBLIC = {
    "whatsapp/chat-miner/test__whatsapp__test_mmddyyyy_12hrs.txt": "whatsapp",
    "whatsapp/chat-analytics/tests__samples__whatsapp__2A_5M.txt": "whatsapp",
    "whatsapp/whatsapp-chat-parser-rb/spec__fixtures__files__sample.txt": "whatsapp",
    "telegram/tg2md/tests__result.json": "telegram",
    "telegram/chat-history-manager/crates__loaders__resources__test__telegram_2024-05_boosts_file-name_etc__result.json": "telegram",
    "slack/slack-export-viewer/tests__testarchive.zip": "slack",
    "slack/zulip/zerver__tests__fixtures__slack_fixtures__exported_messages_fixtures__normal_messages.json": "slack",
    "obsidian/obsidiantools/tests__general/frontmatter-only_1.md": "obsidian",
    "takeout/history-report/historyreport__var__samples__BrowserHistory.json": "takeout",
    "takeout/netscape-bookmark-parser/tests__input__google_bookmarks_nested.htm": "takeout",
    "takeout/notallyx/app__src__test__resources__imports__google_keep__Takeout_German.zip": "takeout",
}


def test_the_new_connectors_fail_no_source_on_damaged_exports(tmp_path):
    from tests.fuzzing import ROOT as REALWORLD

    tally = fuzz(rounds=1, seed=SEED, work=tmp_path, corpus=PUBLIC, root=REALWORLD.parent / "public")
    assert tally.mutations == len(PUBLIC) * len(KINDS) and tally.records_before > 0
    assert not tally.failures, "\n".join(tally.failures)
