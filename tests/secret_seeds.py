"""Secrets of ten kinds, drawn at random in their issuers' formats (valid check digits where the
kind has them), each in a sentence as a person's mail or notes would hold it, with the string a
leak would show (``needle``: for a one-time code, the code with the words before it, since six
digits alone occur inside any hex id)."""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

KINDS = (
    "aws-access-key",
    "github-token",
    "slack-token",
    "stripe-access-key",
    "json-web-token",
    "private-key",
    "password",
    "one-time-code",
    "card",
    "iban",
)


@dataclass(frozen=True)
class Seed:
    kind: str
    text: str  # the sentence (or block) that holds it
    needle: str  # what must appear nowhere once screened


def seeds(per_kind: int, seed: int = 7) -> list[Seed]:
    rng = random.Random(seed)
    return [_draw(kind, rng, i) for i in range(per_kind) for kind in KINDS]


def _chars(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _luhn_complete(digits: str) -> str:
    total = 0
    for i, d in enumerate(reversed(digits + "0")):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return digits + str((10 - total % 10) % 10)


def _iban(rng: random.Random) -> str:
    bban = "".join(rng.choice(string.digits) for _ in range(18))  # a German bank code and account
    check = 98 - int(bban + "131400") % 97  # D=13, E=14, then 00
    return f"DE{check:02d}{bban}"


def _draw(kind: str, rng: random.Random, i: int) -> Seed:
    up = string.ascii_uppercase + string.digits
    if kind == "aws-access-key":
        key = "AKIA" + _chars(rng, 16, up)
        return Seed(kind, f"The backup job uses the access key {key} since spring.", key)
    if kind == "github-token":
        token = "ghp_" + _chars(rng, 36)
        return Seed(kind, f"CI token for the blog: {token}", token)
    if kind == "slack-token":
        token = f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**12, 10**13)}-{_chars(rng, 24)}"
        return Seed(kind, f"The bot posts with {token} into #family.", token)
    if kind == "stripe-access-key":
        key = "sk_live_" + _chars(rng, 24)
        return Seed(kind, f"Shop secret key (do not share): {key}", key)
    if kind == "json-web-token":
        token = ".".join(
            [
                _b64({"alg": "HS256", "typ": "JWT"}),
                _b64({"sub": str(rng.randrange(10**9)), "name": "Anna", "iat": 1_700_000_000 + i}),
                _chars(rng, 43, string.ascii_letters + string.digits + "-_"),
            ]
        )
        return Seed(kind, f"Session cookie copied from the router page: {token}", token)
    if kind == "private-key":
        body = "\n".join(_chars(rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(5))
        block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
        return Seed(kind, f"Key for the garden pi:\n{block}\nKeep it offline.", body.splitlines()[2])
    if kind == "password":
        word = _chars(rng, 6, string.ascii_lowercase) + str(rng.randrange(100, 999)) + rng.choice("!?#%")
        return Seed(kind, f"Wi-Fi at the cabin, password: {word} (router in the hall).", word)
    if kind == "one-time-code":
        code = f"{rng.randrange(10**5, 10**6)}"
        lead = rng.choice(["Your verification code is", "Ihr Bestätigungscode lautet:", "您的验证码是"])
        return Seed(kind, f"{lead} {code}. It expires in 10 minutes.", f"{lead} {code}")
    if kind == "card":
        number = _luhn_complete("4" + "".join(rng.choice(string.digits) for _ in range(14)))
        shown = " ".join(number[j : j + 4] for j in range(0, 16, 4))
        return Seed(kind, f"Travel card {shown}, valid 09/29.", shown)
    if kind == "iban":
        iban = _iban(rng)
        shown = " ".join(iban[j : j + 4] for j in range(0, len(iban), 4))
        return Seed(kind, f"Rent goes to IBAN {shown} on the first.", shown)
    raise ValueError(kind)
