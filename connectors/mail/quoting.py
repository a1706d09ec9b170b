"""Quoted earlier messages and signatures trimmed from a reply's body: ``>`` lines, "On ...
wrote:" attributions, Outlook's "-----Original Message-----" tails, ``-- `` signatures.

Linear time by construction: the body is read line by line, and every pattern is matched at the
start of one line, on at most :data:`MAX_SCAN` characters of it, with no two unbounded
quantifiers that could share characters (the old whole-body patterns backtracked cubically on
a signature followed by trailing spaces: 800 spaces took seconds). Bodies a user writes have
short lines; a longer line is still kept whole, only not scanned past ``MAX_SCAN``.

An interleaved reply (quoted lines, then the answer, then more quotes and answers, the mailing
list style) keeps every line of its own answer: only the quoted lines and the "... wrote:"
line go. A top-posted reply loses everything from the attribution on.
"""

from __future__ import annotations

import re

# Characters of a line the patterns look at: attributions and separators are short.
MAX_SCAN = 400
# Where the verb of an attribution may start, and how much may follow it ("schrieb X <x@y>:").
_VERB_WITHIN, _AFTER_VERB = 200, 150

_ORIGINAL = re.compile(
    r"[ \t]*-{2,}[ \t]*(Original Message|Ursprüngliche Nachricht|Message d'origine|原始邮件|原始郵件)[ \t]*-{2}",
    re.I,
)
_RULE = re.compile(r"[ \t]*_{10,}[ \t]*$")  # Outlook's rule line above a From: block
_FROM_FIELD = re.compile(r"[ \t*]*(From|Von|De|发件人)[ \t]*[:：]", re.I)
_SENT_FIELD = re.compile(r"[ \t*]*(Sent|Gesendet|Envoyé|Date|发送时间)[ \t]*[:：]", re.I)
# The verb may be followed by the name: German clients write "Am 06.10.2025 um 09:12 schrieb
# Ingrid Baumann <i.b@…>:" (Gmail: "… Uhr schrieb X <…>:").
_VERB = re.compile(r"wrote|schrieb|a écrit|escribió|ha scritto|skrev|schreef|写道|寫道", re.I)
_ON_WROTE_START = re.compile(r"[ \t]*(On|Am|Le|El|Il|Op|Den|在)\b", re.I)
_MOBILE_SIG = re.compile(r"[ \t]*(Sent from my \w|Get Outlook for \w|发自我的\S)", re.I)
_COLONS = ":："


def trim_quotes(body: str, forward: bool) -> str:
    """The body without quoted earlier messages and the signature; untrimmed if that is all."""
    lines = body.strip("\n").split("\n")
    if not forward:
        lines = lines[: _quote_head(lines)]
        lines = _without_attribution(lines)
        lines = [line for line in lines if not line.lstrip().startswith(">")]
    while lines and not lines[-1].strip():
        lines.pop()
    for i in range(len(lines) - 1, max(-1, len(lines) - 16), -1):
        if lines[i].rstrip("\r") in ("-- ", "--"):
            lines = lines[:i]
            break
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > 1 and _MOBILE_SIG.match(lines[-1][:MAX_SCAN]):
        lines.pop()
    text = "\n".join(_squeeze_blank(lines)).strip()
    return text if text else body.strip()


def _quote_head(lines: list[str]) -> int:
    """The index of the line where a quoted tail (Outlook's separator or From:/Sent: block)
    begins, ``len(lines)`` when there is none."""
    for i, line in enumerate(lines):
        head = line[:MAX_SCAN]
        if _ORIGINAL.match(head):
            return i
        if _RULE.match(head):
            j = i + 1
            while j < len(lines) and lines[j] == "":
                j += 1
            if j < len(lines) and _FROM_FIELD.match(lines[j][:MAX_SCAN]):
                return i
        if i + 1 < len(lines) and _FROM_FIELD.match(head) and _SENT_FIELD.match(lines[i + 1][:MAX_SCAN]):
            return i
    return len(lines)


def _without_attribution(lines: list[str]) -> list[str]:
    """``lines`` cut at the "On <date>, <name> wrote:" attribution of a top-posted reply (it may
    wrap over two lines); in an interleaved reply only the attribution lines go. A "wrote:" line
    counts only when it opens like one or quoted lines follow it."""
    for i, line in enumerate(lines):
        if not _is_wrote(line):
            continue
        if _ON_WROTE_START.match(line[:MAX_SCAN]):
            start = i
        elif i and lines[i - 1].strip() and _ON_WROTE_START.match(lines[i - 1][:MAX_SCAN]):
            start = i - 1
        else:
            rest = next((x for x in lines[i + 1 :] if x.strip()), None)
            if rest is not None and not rest.lstrip().startswith(">"):
                continue
            start = i
        if _answered_below(lines[i + 1 :]):
            return lines[:start] + lines[i + 1 :]
        return lines[:start]
    return lines


def _answered_below(lines: list[str]) -> bool:
    """Whether unquoted text follows quoted lines: an interleaved (bottom-posted) reply."""
    quoted = False
    for line in lines:
        if line.lstrip().startswith(">"):
            quoted = True
        elif quoted and line.strip() and line.rstrip("\r") not in ("-- ", "--"):
            return True
        elif line.rstrip("\r") in ("-- ", "--"):
            return False
    return False


def _is_wrote(line: str) -> bool:
    """An attribution line: not quoted, a verb ("wrote", "schrieb"…) starting within the first
    200 characters, then optionally a blank and at most 150 more characters, then a colon and
    only blanks. The same language as the old pattern, decided without backtracking."""
    if line.startswith(">"):
        return False
    core = line.rstrip(" \t\r")
    if not core or core[-1] not in _COLONS:
        return False
    before_colon = len(core[:-1].rstrip(" \t"))
    for m in _VERB.finditer(core, 0, _VERB_WITHIN + 16):
        if m.start() > _VERB_WITHIN:
            break
        end = m.end()
        if end >= before_colon:  # nothing but blanks between the verb and the colon
            return True
        if core[end] in " \t" and before_colon - (end + 1) <= _AFTER_VERB:
            return True
    return False


def _squeeze_blank(lines: list[str]) -> list[str]:
    """At most one blank line in a row (the old ``\\n{3,}`` → ``\\n\\n``)."""
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return out
