"""Quoted earlier messages and signatures trimmed from a reply's body: ``>`` lines, "On ...
wrote:" attributions, Outlook's "-----Original Message-----" tails, ``-- `` signatures."""

from __future__ import annotations

import re

# Where a reply's quoted tail begins (the cut goes from that line to the end).
_QUOTE_HEADS = [
    re.compile(p, re.I | re.M)
    for p in (
        r"^[ \t]*-{2,}[ \t]*(Original Message|Ursprüngliche Nachricht|Message d'origine|原始邮件|原始郵件)"
        r"[ \t]*-{2,}",
        r"^[ \t]*_{10,}[ \t]*\n+[ \t*]*(From|Von|De|发件人)[ \t]*[:：]",  # Outlook's rule line
        r"^[ \t*]*(From|Von|De|发件人)[ \t]*[:：].*\n[ \t*]*(Sent|Gesendet|Envoyé|Date|发送时间)[ \t]*[:：]",
    )
]
# The verb may be followed by the name: German clients write "Am 06.10.2025 um 09:12 schrieb
# Ingrid Baumann <i.b@…>:" (Gmail: "… Uhr schrieb X <…>:").
_WROTE = re.compile(
    r"^(?!>)[^\n]{0,200}?(wrote|schrieb|a écrit|escribió|ha scritto|skrev|schreef|"
    r"写道|寫道)(?:[ \t][^\n]{0,150}?)?[ \t]*[:：][ \t]*$",
    re.I | re.M,
)
_ON_WROTE_START = re.compile(r"^[ \t]*(On|Am|Le|El|Il|Op|Den|在)\b", re.I | re.M)
_MOBILE_SIG = re.compile(r"\n[ \t]*(Sent from my \w+.*|Get Outlook for \w+.*|发自我的\S+)[ \t]*\s*$", re.I)


def trim_quotes(body: str, forward: bool) -> str:
    """The body without quoted earlier messages and the signature; untrimmed if that is all."""
    text = body.strip("\n")
    if not forward:
        cut = min([m.start() for p in _QUOTE_HEADS if (m := p.search(text))] + [len(text)])
        wrote = _wrote_line(text[:cut])
        text = text[: cut if wrote is None else wrote]
        text = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(">"))
    lines = text.rstrip().split("\n")
    for i in range(len(lines) - 1, max(-1, len(lines) - 16), -1):
        if lines[i] in ("-- ", "--"):
            lines = lines[:i]
            break
    text = _MOBILE_SIG.sub("", "\n".join(lines))
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text if text else body.strip()


def _wrote_line(text: str) -> int | None:
    """Where an "On <date>, <name> wrote:" attribution starts (it may wrap over two lines); a
    "wrote:" line counts only when it opens like one or quoted lines follow it."""
    for m in _WROTE.finditer(text):
        start = m.start()
        before = text[:start].rstrip("\n").rsplit("\n", 1)[-1] if start else ""
        after = text[m.end() :].lstrip("\n")
        if _ON_WROTE_START.match(m.group(0)):
            return start
        if (
            before
            and _ON_WROTE_START.match(before)
            and text[:start].endswith("\n")
            and not text[:start].endswith("\n\n")
        ):
            return start - len(before) - 1
        if after.lstrip().startswith(">") or not after.strip():
            return start
    return None
