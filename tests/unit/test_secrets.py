"""The secret detectors (ragbag.text.secrets) and a source's screen (ragbag.pipeline.screen):
every seeded kind found and redacted whole, innocent text left alone, PII only when asked."""

from __future__ import annotations

import pytest
from secret_seeds import KINDS, seeds

from ragbag.core.records import Document
from ragbag.pipeline import screen
from ragbag.text import secrets

INNOCENT = [
    "Meeting on 2024-10-12 at 10:30 in room 4.12, see you there.",
    "Order 1234567890123 shipped; tracking 00340434161094021234.",
    "ISBN 978-3-16-148410-0 is on the shelf.",
    "Commit 3f2a9c1b7e8d4f6a0b5c2d9e1f3a7b8c4d6e0f21 fixed the build.",
    "UUID 123e4567-e89b-12d3-a456-426614174000 in the log.",
    "Password reset link below. Passwort: ********",
    "Call Anna at +49 30 1234567 or mail anna@example.org.",
    "The Titan 4000 vacuum costs 249,99 €.",
    "Postal code 10115 Berlin; flight LH 2024 at 07:45.",
    "Invoice no. 4111-2024-0007 for 1.234,56 EUR.",
    "A random 16-digit number 4111 1111 1111 1112 fails Luhn.",
    "DE00 1234 5678 9012 3456 78 is not a valid IBAN.",
    "Use the code snippet from chapter 1234 of the manual.",
    "eyJub3QiOiJhIHRva2VuIn0 is base64 of a JSON object but not a token.",
    "我的电话是 13800138000，下周见。",
    "Your Amazon.de order #302-2939158-6880234 has shipped.",  # passes Luhn; no card is written 3-7-7
    "Wi-Fi: GARAJAU-SCI (the network's name, not its password)",
    "xAIzaSyA1234567890abcdefghijklmnopqrstuv: a key's prefix inside a longer word",
]


@pytest.mark.parametrize("seed", seeds(3), ids=lambda s: s.kind)
def test_each_kind_is_found_whole_and_redacted(seed):
    found = secrets.find(seed.text)
    assert [f.kind for f in found] == [seed.kind]
    out = secrets.redact(seed.text, found)
    assert seed.needle not in out and f"[secret:{seed.kind}]" in out


def test_a_hundred_seeds_of_ten_kinds_are_each_found_once():
    found = [f.kind for s in seeds(10) for f in secrets.find(s.text)]
    assert sorted(found) == sorted(KINDS * 10)


@pytest.mark.parametrize("text", INNOCENT)
def test_innocent_text_holds_no_secret(text):
    assert secrets.find(text) == []


def test_pii_is_found_only_when_asked():
    text = INNOCENT[6]
    assert secrets.find(text) == []
    found = secrets.find(text, pii=("email", "phone"))
    assert [(f.kind, f.family) for f in found] == [("phone", "pii"), ("email", "pii")]
    assert secrets.redact(text, found) == "Call Anna at [pii:phone] or mail [pii:email]."


def test_a_homes_own_rule_takes_its_first_group():
    rule = secrets.user_rule("locker", r"locker combination (\d{4})")
    text = "The locker combination 4711 opens it."
    assert secrets.redact(text, secrets.find(text, extra=[rule])) == "The locker combination [secret:locker] opens it."
    for kind, pattern in (("Bad Name", "x"), ("ok", "("), ("empty", "a*")):
        with pytest.raises(ValueError):
            secrets.user_rule(kind, pattern)


def test_a_private_key_block_goes_whole_even_cut_short():
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAbCd\n-----END RSA PRIVATE KEY-----"
    text = f"before\n{block}\nafter"
    assert secrets.redact(text, secrets.find(text)) == "before\n[secret:private-key]\nafter"
    cut = "key:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE"
    assert secrets.redact(cut, secrets.find(cut)) == "key:\n[secret:private-key]"


def _doc(text: str, title: str = "note", uri: str = "/notes/a.md") -> Document:
    return Document("s", "files", uri, uri, title, text, metadata={"subject": title})


@pytest.mark.parametrize("policy", screen.POLICIES)
def test_the_sources_policy_redacts_skips_or_keeps(policy):
    seed = seeds(1)[0]
    rule = screen.Screen(policy, ("email",), ())
    out = screen.screen(rule, _doc(f"{seed.text} Mail me at a@example.org", title=f"key {seed.needle}"))
    assert dict(out.kinds) == {seed.kind: 3, "email": 1}  # text, title and the subject in its metadata
    listed = screen.entry(rule, _doc("", title=f"key {seed.needle}"), out)
    assert seed.needle not in listed["title"] and listed["kinds"] == dict(out.kinds)  # never listed, kept or not
    if policy == "skip":
        assert out.document is None and out.action == "skipped"
        return
    doc = out.document
    assert doc is not None and "[pii:email]" in doc.text  # PII asked for is redacted under any policy
    held = seed.needle in doc.text and seed.needle in doc.title and seed.needle in doc.metadata["subject"]
    assert held == (policy == "keep") and out.action == ("kept" if policy == "keep" else "redacted")


def test_a_secret_in_a_link_is_redacted_and_a_plain_record_is_untouched():
    rule = screen.Screen("redact", (), ())
    url = "https://user:hunter2secret@nas.local/share"
    out = screen.screen(rule, _doc("see the share", uri=url))
    assert out.document is not None and "hunter2secret" not in out.document.uri + out.document.native_id
    plain = _doc("groceries: milk, bread")
    assert screen.screen(rule, plain).document is plain


def test_a_placeholder_is_a_finding_of_its_kind():
    """Text redacted before the screen (a picture's cached lines) counts as the secret did."""
    found = secrets.find("wifi [secret:password] and [pii:email] here")
    assert [(f.kind, f.family) for f in found] == [("password", "secret")]
    assert [f.kind for f in secrets.find("[pii:email]", pii=("email",))] == ["email"]


def test_lines_keep_their_count_and_a_secret_over_two_lines_is_cut():
    lines = [
        "Home network",
        "Wi-Fi password: Lavendel-2019-Kx",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEow",
        "-----END RSA PRIVATE KEY-----",
    ]
    out = secrets.redact_lines(lines)
    assert out == ["Home network", "Wi-Fi password: [secret:password]", "[secret:private-key]", "", ""]
    assert secrets.redact_lines(["nothing", "here"]) == ["nothing", "here"]


def test_detect_secrets_patterns_kept_in_the_home_find_what_the_library_finds(tmp_path):
    """A build reads detect-secrets' patterns from the copy kept in the home's temporaries, not
    by importing the library (and the HTTP client it imports) at every build: the copy finds
    exactly what the library's own rules find, on every seed of every kind."""
    import json
    import subprocess
    import sys

    folder = tmp_path / "tmp"
    folder.mkdir(mode=0o700)
    made = secrets.library_rules(folder)
    (kept,) = folder.glob("detect-secrets-*-rules-*.json")
    assert kept.stat().st_mode & 0o777 == 0o600
    assert [(r.kind, r.pattern.pattern, r.pattern.flags, r.group) for r in secrets.library_rules(folder)] == [
        (r.kind, r.pattern.pattern, r.pattern.flags, r.group) for r in made
    ]
    texts = [s.text for s in seeds(10)]
    assert all(secrets.find(t, library=secrets.library_rules(folder)) == secrets.find(t) for t in texts)
    code = (
        "import sys; from pathlib import Path; from ragbag.text import secrets; "
        f"rules = secrets.library_rules(Path({str(folder)!r})); "
        "print(len(rules), 'detect_secrets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(made)), "False"]
    kept.write_text("[[cut short")  # damaged: a later process reads the library again, and keeps it anew
    secrets._read.clear()
    assert len(secrets.library_rules(folder)) == len(made) and len(json.loads(kept.read_text())) == len(made)
    folder.chmod(0o755)  # a folder others can write to: its copy is not trusted
    assert secrets.library_rules(folder) == secrets._detect_secrets_rules()
