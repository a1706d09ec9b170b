"""A source's options as status rows (``ragbag status --json``, MCP ``source_status``) show them."""

from __future__ import annotations

from ragbag.search.sources import shown_options


def test_a_credential_setting_is_never_shown():
    options = {"key": "ab" * 32, "safe_storage_password": "peanuts", "me": "Jan", "exclude": ["private"]}
    assert shown_options(options) == {
        "key": "[hidden]",
        "safe_storage_password": "[hidden]",
        "me": "Jan",
        "exclude": ["private"],
    }
    assert shown_options({"keyboard": "de", "monkey": 1}) == {"keyboard": "de", "monkey": 1}  # words, not parts
