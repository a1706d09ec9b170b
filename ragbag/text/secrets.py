"""Secrets in a text, found and replaced by a typed placeholder before anything stores the text.

Service tokens are found with the patterns of Yelp's ``detect-secrets`` (its regex plugins: AWS,
GitHub, GitLab, Slack, Stripe, OpenAI, JWT, SendGrid, Twilio, Telegram, npm, PyPI and more),
a maintained list that follows the services' formats; ragbag adds what a person's mail and
chats hold and that list lacks, each checked the way its issuer checks it where a library knows
how: payment card numbers (Luhn, ``python-stdnum``, and a card network's prefix), IBANs (country
format and mod-97, ``python-stdnum``), whole private-key blocks (detect-secrets flags only the
``BEGIN`` line), values on "password:" lines, one-time codes next to the words that announce them,
Google and Anthropic API keys. detect-secrets' entropy and keyword plugins are left out: on
prose they flag every other word. PII (e-mail addresses, phone numbers via ``phonenumbers``)
is a kind like the others, found only when a source asks for it: it is what people search for.

A finding is a kind and a span; the placeholder is ``[secret:KIND]`` (``[pii:KIND]``). A
placeholder already in a text is a finding of its kind too: text redacted before it reached the
screen (the OCR cache keeps pictures' text so) counts, and skips its record, as the secret would
have. Nothing here keeps or returns the secret's text beyond the spans of the string it was given.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import json
import pkgutil
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragbag.core.private import owner_only_folder, write_private

# Raise when a rule is added, removed or changed: a source's fingerprint includes it, so every
# source is read again and its text screened by the new rules.
RULES_VERSION = 2

SECRET = "secret"
PII = "pii"


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int
    family: str = SECRET  # SECRET or PII

    @property
    def placeholder(self) -> str:
        return f"[{self.family}:{self.kind}]"


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the group that holds the secret (0: the whole match)
    family: str = SECRET
    # Lowercase words one of which the text must hold for the pattern to be tried: a case-blind
    # alternation of words tried at every position is the slowest thing here.
    triggers: tuple[str, ...] = ()
    # The match must not start inside a longer word (checked after a match, so the pattern can
    # start with its literal prefix, which the regex engine scans for fast).
    starts_word: bool = False


# detect-secrets plugins that are not about one secret's format: a public IP address, and the
# keyword guesses for four enterprise services (a word such as "cl" or "cos" near "key"), which
# cost more on prose than all the other patterns together; and private keys, read whole below.
_SKIPPED_PLUGINS = {
    "IPPublicDetector",
    "CloudantDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "SoftlayerDetector",
    "PrivateKeyDetector",
}
# Characters a detect-secrets pattern takes in around a token to find its edges.
_EDGES = " \t\r\n=:\"'"
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=]+(?:\.[A-Za-z0-9_\-+/=]+)*")


_read: dict[Path, tuple[Rule, ...]] = {}  # the copies this process read (each stage screens anew)


def library_rules(folder: Path) -> tuple[Rule, ...]:
    """detect-secrets' rules, from the copy of its patterns kept in ``folder`` (an owner-only
    cache: the home's temporaries) for the installed release of it and these ``RULES_VERSION``.
    Importing detect-secrets takes every plugin module and the HTTP client they verify with, at
    every build however few records it screens (benchmarks/README.md, "A refresh's fixed
    cost"). A copy that is missing,
    damaged or of another release is made again from the library; without an owner-only folder
    the library is read every time."""
    from importlib.metadata import version

    path = folder / f"detect-secrets-{version('detect-secrets')}-rules-{RULES_VERSION}.json"
    if not owner_only_folder(folder):
        return _detect_secrets_rules()
    if path in _read:
        return _read[path]
    try:
        kept = json.loads(path.read_text())
        rules = tuple(Rule(kind, re.compile(pattern, flags), group) for kind, pattern, flags, group in kept)
        _read[path] = rules
        return rules
    except (OSError, ValueError, TypeError, re.error):
        pass
    rules = _detect_secrets_rules()
    saved = [[r.kind, r.pattern.pattern, r.pattern.flags, r.group] for r in rules]
    try:
        write_private(path, json.dumps(saved))
    except OSError:  # a full disk: the next build reads the library again
        pass
    return rules


@functools.cache
def _detect_secrets_rules() -> tuple[Rule, ...]:
    """Each regex of each detect-secrets regex plugin, under the plugin's secret type as a slug."""
    import detect_secrets.plugins as plugins
    from detect_secrets.plugins.base import RegexBasedDetector

    rules = []
    for info in pkgutil.iter_modules(plugins.__path__):
        module = importlib.import_module(f"detect_secrets.plugins.{info.name}")
        for name, cls in sorted(vars(module).items()):
            if (
                isinstance(cls, type)
                and issubclass(cls, RegexBasedDetector)
                and cls is not RegexBasedDetector
                and cls.__module__ == module.__name__
                and name not in _SKIPPED_PLUGINS
            ):
                kind = _slug(str(cls.secret_type))
                patterns: Iterable[re.Pattern[str]] = cls.denylist  # type: ignore[assignment]  # a class attribute
                rules += [Rule(kind, pattern, 1 if pattern.groups else 0) for pattern in patterns]
    return tuple(rules)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


_PASSWORD_WORDS = (
    r"password|passwort|kennwort|passwd|pwd|passcode|pass ?phrase|mot de passe|contraseña|senha|"
    r"parola d'ordine|wachtwoord|lösenord|hasło|"
    r"wi-?fi[ -]?(?:password|passwort|key|code|schlüssel)|wlan[ -]?(?:schlüssel|passwort|key|code)|"
    r"network key|netzwerkschlüssel"
)
_PASSWORD_CJK = r"密码|密碼|パスワード"  # no word boundary between two CJK characters
_OTP_WORDS = (
    r"verification code|security code|login code|sign-?in code|confirmation code|authentication code|"
    r"one-?time (?:pass)?code|one-?time password|otp|2fa code|access code|your code is|"
    r"bestätigungscode|sicherheitscode|anmeldecode|einmalcode|einmalpasswort|freigabecode|tan|mtan|"
    r"ihr code lautet|ihr code ist|code de vérification|code de sécurité|votre code est|"
    r"código de verificación|tu código es|código de segurança"
)
_OTP_CJK = r"验证码|驗證碼|認証コード|確認コード"
_OWN_RULES = (
    Rule("google-api-key", re.compile(r"AIza[0-9A-Za-z_-]{35}(?![\w-])"), starts_word=True),
    Rule("anthropic-api-key", re.compile(r"sk-ant-[a-z0-9]+-[A-Za-z0-9_-]{40,}"), starts_word=True),
    Rule("openai-token", re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}"), starts_word=True),
    Rule("huggingface-token", re.compile(r"hf_[A-Za-z0-9]{34,}(?![\w-])"), starts_word=True),
    # The value after "password:" up to the end of its token (quotes kept out).
    Rule(
        "password",
        re.compile(rf"(?i)(?:\b(?:{_PASSWORD_WORDS})|{_PASSWORD_CJK})\s*(?:is|ist|est|:|=|：|是|为|為|は)\s*[\"'„“«]?([^\s\"'“”»]{{4,}})"),
        1,
        triggers=(
            "pass", "pwd", "wort", "wlan", "wifi", "wi-fi", "network key", "netzwerkschlüssel", "mot de passe",
            "contraseña", "senha", "parola", "wachtwoord", "lösenord", "hasło", "密码", "密碼", "パスワード",
        ),
    ),
)  # fmt: skip
# A one-time code: a number of 4–8 digits (or two groups of 3) whose line, up to 40 characters
# before it, has the words that announce such a code.
_OTP_NUMBER = re.compile(r"(?<![\d.,/:-])(\d{3}[ -]\d{3}|\d{4,8})(?![\d.,/:-]?\d)")
_OTP_BEFORE = re.compile(rf"(?i)(?:\b(?:{_OTP_WORDS})\b|{_OTP_CJK})[^\d\n]{{0,40}}$")
_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK|)-----.*?(?:-----END \1PRIVATE KEY\2-----|\Z)", re.DOTALL
)
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: *[0-9a-f]+|\Z)", re.DOTALL)
# As cards are written: 13–19 digits in one run, or in the groups printed on them (4-4-4-4[-1..3],
# American Express 4-6-5, Diners 4-6-4); an order number's 3-7-7 is none of these.
_CARD = re.compile(
    r"(?<![\d-])(?:\d{13,19}|\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1?\d{1,3})?|\d{4}([ -])\d{6}\2\d{4,5})(?![\d-])"
)
_IBAN = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Z0-9])")
_PLACEHOLDER = re.compile(r"\[(secret|pii):([a-z0-9][a-z0-9-]*)\]")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?![\w-])")
_PASSWORD_NOT = {  # words after "password:" that are not one
    "reset", "forgotten", "forgot", "required", "changed", "expired", "protected", "hidden", "below", "above",
    "none", "same", "wie", "bitte", "siehe", "see", "ändern", "vergessen", "geändert", "abgelaufen",
}  # fmt: skip


def find(
    text: str, pii: Iterable[str] = (), extra: Iterable[Rule] = (), library: Iterable[Rule] | None = None
) -> list[Finding]:
    """Every secret in ``text`` (and the PII kinds named in ``pii``: "email", "phone"), as
    non-overlapping spans in order; where two overlap the longer wins. ``library``: detect-secrets'
    rules as ``library_rules`` gave them (default: read from the library)."""
    if not text:
        return []
    found: list[Finding] = []
    lower = text.lower()
    for rule in (*(_detect_secrets_rules() if library is None else library), *_OWN_RULES, *extra):
        if rule.triggers and not any(t in lower for t in rule.triggers):
            continue
        for m in rule.pattern.finditer(text):
            span = _span(m, rule)
            if span and _plausible(rule.kind, text[span[0] : span[1]]):
                found.append(Finding(rule.kind, *span, rule.family))
    found += [Finding("private-key", *m.span()) for pattern in (_PEM, _PUTTY) for m in pattern.finditer(text)]
    found += [
        Finding("one-time-code", *m.span(1))
        for m in _OTP_NUMBER.finditer(text)
        if _OTP_BEFORE.search(text, max(0, m.start() - 60), m.start())
    ]
    found += [Finding("card", *m.span()) for m in _CARD.finditer(text) if _is_card(m[0])]
    found += [Finding("iban", *m.span()) for m in _IBAN.finditer(text) if _is_iban(m[0])]
    wanted = set(pii)
    found += [Finding(m[2], *m.span(), m[1]) for m in _PLACEHOLDER.finditer(text) if m[1] == SECRET or m[2] in wanted]
    if "email" in wanted:
        found += [Finding("email", *m.span(), PII) for m in _EMAIL.finditer(text)]
    if "phone" in wanted:
        found += _phones(text)
    return _without_overlaps(found)


def redact_lines(lines: list[str], pii: Iterable[str] = (), extra: Iterable[Rule] = ()) -> list[str]:
    """Lines (a picture's, as recognised) with the secrets found in their joined text replaced, so
    a secret written over two lines is found too: its placeholder goes in its first line and the
    rest of it is cut from the others. The number of lines stays, so each keeps its box."""
    text = "\n".join(lines)
    hits = find(text, pii, extra)
    if not hits:
        return lines
    out, start = [], 0
    for line in lines:
        end = start + len(line)
        parts, at = [], start
        for f in hits:
            if f.end <= start or f.start >= end:
                continue
            parts.append(text[at : max(f.start, start)])
            if f.start >= start:
                parts.append(f.placeholder)
            at = min(f.end, end)
        out.append("".join(parts) + text[at:end])
        start = end + 1
    return out


def redact(text: str, findings: list[Finding]) -> str:
    """``text`` with each finding's span replaced by its placeholder (findings as ``find`` gives)."""
    out, at = [], 0
    for f in findings:
        out += [text[at : f.start], f.placeholder]
        at = f.end
    out.append(text[at:])
    return "".join(out)


def counts(findings: Iterable[Finding]) -> Counter[str]:
    return Counter(f.kind for f in findings)


def user_rule(kind: str, pattern: str) -> Rule:
    """A home's own rule (``ragbag secrets rule``): a kind of lowercase letters, digits and
    dashes, and a regular expression whose first group, if it has one, is the secret."""
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,39}", kind):
        raise ValueError(f"a rule's kind is lowercase letters, digits and dashes: {kind!r}")
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        raise ValueError(f"not a regular expression: {e}") from None
    if compiled.match(""):
        raise ValueError("the pattern matches an empty text: it would redact nothing useful")
    return Rule(kind, compiled, 1 if compiled.groups else 0)


def _span(m: re.Match[str], rule: Rule) -> tuple[int, int] | None:
    if rule.group and m.group(rule.group) and len(m.group(rule.group)) >= 4:
        return m.span(rule.group)
    start, end = m.span()
    if rule.starts_word and start and (m.string[start - 1].isalnum() or m.string[start - 1] in "_-"):
        return None  # the prefix inside a longer word
    value = m.group(0)
    start += len(value) - len(value.lstrip(_EDGES))
    end -= len(value) - len(value.rstrip(_EDGES))
    # A pattern that stops early (a JWT's lazy signature, a Slack token's case) takes the rest of
    # its token: no part of a secret is left beside the placeholder.
    tail = _TOKEN_TAIL.match(m.string, end)
    end = tail.end() if tail else end
    return (start, end) if end > start else None


def _plausible(kind: str, value: str) -> bool:
    if kind == "json-web-token":  # its header must decode to a JSON object, as a token's does
        header = value.split(".", 1)[0]
        try:
            return isinstance(json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))), dict)
        except (ValueError, binascii.Error):
            return False
    if kind == "password":
        return value.lower().strip(".,;:!?") not in _PASSWORD_NOT and not set(value) <= set("*•·.x-_")
    return True


def _is_card(text: str) -> bool:
    """A number of 13–19 digits that passes Luhn and starts as a card network's numbers do."""
    from stdnum import luhn

    digits = re.sub(r"[ -]", "", text)
    if not 13 <= len(digits) <= 19 or not luhn.is_valid(digits):
        return False
    two, four = int(digits[:2]), int(digits[:4])
    return (
        digits[0] == "4"  # Visa
        or 51 <= two <= 55
        or 2221 <= four <= 2720  # Mastercard
        or two in (34, 37)  # American Express
        or digits.startswith(("6011", "65", "644", "645", "646", "647", "648", "649"))  # Discover
        or 3528 <= four <= 3589  # JCB
        or two in (36, 38, 39) or 300 <= int(digits[:3]) <= 305  # Diners
        or two == 62  # UnionPay
        or digits.startswith(("50", "56", "57", "58", "63", "67"))  # Maestro
    )  # fmt: skip


def _is_iban(text: str) -> bool:
    from stdnum import iban

    return bool(iban.is_valid(text))


def _phones(text: str) -> list[Finding]:
    import phonenumbers

    # No region: only numbers written with their country code (+49 …) are certain to be phones.
    return [
        Finding("phone", m.start, m.end, PII)
        for m in phonenumbers.PhoneNumberMatcher(text, None, leniency=phonenumbers.Leniency.VALID)
    ]


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    kept: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.start, -(f.end - f.start))):
        if kept and f.start < kept[-1].end:
            if f.end - f.start > kept[-1].end - kept[-1].start:
                kept[-1] = f
            continue
        kept.append(f)
    return kept
