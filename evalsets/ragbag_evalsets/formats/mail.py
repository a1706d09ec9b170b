"""Mail as mailers write it: RFC 822 messages with RFC 2047 headers in the sender's charset,
multipart/alternative bodies, quoted replies with their attribution line, attachments; a Gmail
Takeout mbox and a Maildir++ tree (as mbsync or Dovecot keep one) around them."""

from __future__ import annotations

import base64
import email.quoprimime
import email.utils
import quopri
from datetime import UTC, datetime
from html import escape

from ragbag_evalsets.formats import h


class Mail:
    """One message, rendered to RFC 822 bytes by :func:`render_mail`."""

    def __init__(
        self,
        when: datetime,
        frm: tuple[str, str],
        to: list[tuple[str, str]],
        subject: str,
        body: str = "",
        *,
        html: str | None = None,
        html_only: bool = False,
        charset: str = "utf-8",
        cte: str = "quoted-printable",
        labels=("Inbox",),
        reply_to: Mail | None = None,
        quote: str | None = None,
        attachments=(),
        cc=(),
    ) -> None:
        self.when, self.frm, self.to, self.subject, self.body = when, frm, to, subject, body
        self.html, self.html_only, self.charset, self.cte = html, html_only, charset, cte
        self.labels, self.reply_to, self.quote = list(labels), reply_to, quote
        self.attachments, self.cc = list(attachments), list(cc)
        self.mid = f"{h(when.isoformat(), frm[1], subject, n=10)}@{frm[1].split('@', 1)[1]}"

    @property
    def refs(self) -> list[str]:
        if self.reply_to is None:
            return []
        return self.reply_to.refs + [self.reply_to.mid]


def _fits(text: str, charset: str) -> str:
    """The charset if it can hold the text, else utf-8 (mailers do the same per header)."""
    try:
        text.encode(charset)
        return charset
    except UnicodeEncodeError:
        return "utf-8"


def _encoded_words(text: str, charset: str) -> str:
    """RFC 2047 encoded words as mailers write them (``=?gb2312?B?…?=``, ``=?iso-8859-1?Q?…?=``),
    at most ~75 characters each, folded onto continuation lines; characters are never split."""
    charset = _fits(text, charset)
    q = charset.lower().startswith("iso-8859")
    words, chunk = [], ""
    for ch in text:
        raw = (chunk + ch).encode(charset)
        size = len(email.quoprimime.header_encode(raw, charset)) if q else 4 * ((len(raw) + 2) // 3) + len(charset) + 7
        if chunk and size > 75:
            words.append(chunk)
            chunk = ""
        chunk += ch
    words.append(chunk)
    label = charset.upper() if charset.lower() == "gb2312" else charset
    out = []
    for w in words:
        raw = w.encode(charset)
        if q:
            out.append(email.quoprimime.header_encode(raw, label).replace("?q?", "?Q?"))
        else:
            out.append(f"=?{label}?B?{base64.b64encode(raw).decode('ascii')}?=")
    return "\n ".join(out)


def _header(text: str, charset: str) -> str:
    if all(ord(c) < 128 for c in text):
        return text
    return _encoded_words(text, charset)


def _addr(pair: tuple[str, str], charset: str) -> str:
    name, addr = pair
    if not name:
        return addr
    if all(ord(c) < 128 for c in name):
        return email.utils.formataddr((name, addr))
    return f"{_encoded_words(name, charset)} <{addr}>"


def _encode_part(text: str, ctype: str, charset: str, cte: str) -> str:
    raw = text.replace("\r\n", "\n").encode(charset)
    if cte == "base64":
        body = base64.encodebytes(raw).decode("ascii")
    elif cte == "quoted-printable":
        body = quopri.encodestring(raw).decode("ascii")
    else:
        body = raw.decode(charset)
    return (
        f'Content-Type: {ctype}; charset="{charset}"\nContent-Transfer-Encoding: {cte}\n\n' + body.rstrip("\n") + "\n"
    )


def _html_of(text: str, charset: str = "utf-8") -> str:
    paras = [p for p in text.split("\n\n") if p.strip()]
    inner = "".join("<p>" + "<br>\n".join(escape(line) for line in p.split("\n")) + "</p>\n" for p in paras)
    return (
        f'<html><head><meta charset="{charset}"><style>p{{margin:0 0 1em}}</style></head>'
        f'<body><div dir="ltr">\n{inner}</div></body></html>'
    )


def render_mail(m: Mail, gmail: bool = True) -> bytes:
    """RFC 822 bytes; ``gmail`` adds the headers a Takeout export carries (thread id, labels)."""
    cs = m.charset
    body = m.body
    if m.quote is not None and m.reply_to is not None:
        r = m.reply_to
        stamp = f"{r.when:%a, %d %b %Y at %H:%M}"
        head = {
            "de": f"Am {r.when:%d.%m.%Y} um {r.when:%H:%M} schrieb {r.frm[0]} <{r.frm[1]}>:",
            "fr": f"Le {r.when:%d/%m/%Y} à {r.when:%H:%M}, {r.frm[0]} <{r.frm[1]}> a écrit :",
            "es": f"El {r.when:%d/%m/%Y} a las {r.when:%H:%M}, {r.frm[0]} <{r.frm[1]}> escribió:",
            "zh": f"在 {r.when:%Y年%m月%d日} {r.when:%H:%M}，{r.frm[0]} <{r.frm[1]}> 写道：",
        }.get(m.quote, f"On {stamp}, {r.frm[0]} <{r.frm[1]}> wrote:")
        quoted = "\n".join("> " + line if line else ">" for line in r.body.split("\n"))
        body = body.rstrip("\n") + "\n\n" + head + "\n" + quoted + "\n"
    lines = (
        [
            f"X-GM-THRID: {int(h(m.refs[0] if m.refs else m.mid, n=8), 16) >> 2}",
            "X-Gmail-Labels: " + ",".join(m.labels),
        ]
        if gmail
        else [f"Return-Path: <{m.frm[1]}>"]
    )
    lines += [
        "MIME-Version: 1.0",
        f"Date: {email.utils.format_datetime(m.when)}",
        f"From: {_addr(m.frm, cs)}",
        "To: " + ", ".join(_addr(t, cs) for t in m.to),
    ]
    if m.cc:
        lines.append("Cc: " + ", ".join(_addr(t, cs) for t in m.cc))
    lines.append(f"Subject: {_header(m.subject, cs)}")
    lines.append(f"Message-ID: <{m.mid}>")
    if m.reply_to is not None:
        lines.append(f"In-Reply-To: <{m.reply_to.mid}>")
        lines.append("References: " + " ".join(f"<{r}>" for r in m.refs))
    if m.html_only:
        content = _encode_part(m.html or _html_of(body, cs), "text/html", cs, m.cte)
    else:
        boundary = "000000000000" + h(m.mid, "alt", n=7)
        html = m.html or _html_of(body, cs)
        content = (
            f'Content-Type: multipart/alternative; boundary="{boundary}"\n\n'
            f"--{boundary}\n"
            + _encode_part(body, "text/plain", cs, m.cte)
            + f"\n--{boundary}\n"
            + _encode_part(html, "text/html", cs, m.cte)
            + f"\n--{boundary}--\n"
        )
    if m.attachments:
        outer = "000000000000" + h(m.mid, "mixed", n=7)
        parts = [content]
        for name, ctype, data in m.attachments:
            b64 = base64.encodebytes(data).decode("ascii")
            fname = _header(name, "utf-8") if any(ord(c) > 127 for c in name) else name
            parts.append(
                f'Content-Type: {ctype}; name="{fname}"\n'
                f'Content-Disposition: attachment; filename="{fname}"\n'
                f"Content-Transfer-Encoding: base64\n\n{b64}"
            )
        content = (
            f'Content-Type: multipart/mixed; boundary="{outer}"\n\n'
            + "".join(f"--{outer}\n{p.rstrip(chr(10))}\n" for p in parts)
            + f"--{outer}--\n"
        )
    text = "\n".join(lines) + "\n" + content
    return text.encode("ascii", "strict") if all(ord(c) < 128 for c in text) else text.encode("utf-8")


def mbox(mails: list[Mail]) -> bytes:
    """A Takeout mbox: messages by date, each after its ``From `` line, ``From `` in a body quoted."""
    out = bytearray()
    for m in sorted(mails, key=lambda m: m.when):
        raw = render_mail(m)
        stamp = m.when.astimezone(UTC)
        gid = int(h(m.mid, n=8), 16) >> 1
        out += f"From {gid}@xxx {stamp:%a %b %d %H:%M:%S} +0000 {stamp:%Y}\n".encode()
        for line in raw.rstrip(b"\n").split(b"\n"):
            stripped = line.lstrip(b">")
            if stripped.startswith(b"From "):
                line = b">" + line
            out += line + b"\n"
        out += b"\n"
    return bytes(out)


def maildir(mails: list[Mail], host: str, pid: tuple[int, int]) -> list[tuple[str, bytes, datetime]]:
    """A Maildir++ tree's messages, by date: (path under the tree, bytes, time). Every message is
    seen (``:2,S``) and named time.M<n>P<pid>.<host>,S=<size> as mbsync and Dovecot name them,
    the process id ``pid[0] + time % pid[1]``; sent mail is in the ``.Sent`` folder."""
    out = []
    for m in sorted(mails, key=lambda m: m.when):
        stamp = int(m.when.timestamp())
        raw = render_mail(m, gmail=False)
        name = f"{stamp}.M{int(h(m.mid, n=3), 16)}P{pid[0] + stamp % pid[1]}.{host},S={len(raw)}:2,S"
        out.append((f"{'.Sent/' if 'Sent' in m.labels else ''}cur/{name}", raw, m.when))
    return out
