"""Documents from WeChat chat exports: one conversation window of one chat per document.

Format: per-contact JSON files named ``<name>-<wxid>.json`` (``<group name>-<id>@chatroom.json``
for group chats), as written by the WeChat exporters (WeChatTweak's ``/wechat/chatlog``, the
PyWxDump-style database dumps): an array of messages ``{localId, talker, type, content,
createTime, isSentFromSelf, fromUser, toUser, displayName, …}``, where ``createTime`` is seconds
since 1970 UTC (milliseconds are recognised too). A saved API answer (``{"chatLogs": [...]}``)
is accepted as well, and so is ``{"messages": [...]}`` with ``isSelf``/``sender`` (and the
database dumps' ``CreateTime``/``StrContent``/``IsSender``). A folder is searched for ``*.json``
and ``*.csv`` files; one that is valid JSON but no message list (a contacts dump) is a
``ReadError`` saying so.

**PyWxDump's exports** (``<wxid>_<i>_<j>.json`` or ``.csv``, beside ``users.json``): rows
``{id, MsgSvrID, type_name, is_sender, talker, room_name, msg, src, extra, CreateTime}`` where
the chat is ``room_name`` and ``talker`` is the *sender* (a group member's wxid, the contact in a
direct chat, the owner's wxid or "我" when ``is_sender``); ``CreateTime`` is local time
``YYYY-MM-DD HH:MM:SS``; ``msg`` is already rendered per ``type_name`` (Chinese type names:
文本, 图片, 引用回复, …). Senders are named by ``users.json`` (``remark``, else ``nickname``), which
is read for names and not as a chat. The CSV export (same columns, less ``extra``) reads the same.

Traps handled:

- **Group chats** (a talker ending in ``@chatroom``): others' messages start with
  ``wxid_…:\\n``; that prefix becomes the sender, shown by name when the export names it
  (``displayName``) or another file of the export is that contact (``Alice-wxid_alice.json``).
- **XML app messages** (type 49: links, files, mini programs, quoted replies) are reduced to
  their ``<appmsg><title>``; a location (48) to its place name.
- **Dropped**: images (3), voice (34), video (43), stickers (47), contact cards (42), calls (50),
  system lines and recalls (10000, 10002: "撤回了一条消息", "recalled a message"). Exports without
  ``type`` are sniffed by their XML (``<img``, ``<voicemsg``, ``<emoji``, ``<sysmsg`` …).
- **PyWxDump types**: pictures, voice, video, stickers, calls, friend requests, system lines,
  recalls and pats are dropped; a location keeps its place (``[location] …``), a shared link its
  title (``[link] …``), a file its name (``[file] …``), a quoted reply its own text; a ``msg``
  that only repeats its type name (mini programs…) is dropped.
- **Bad input**, isolated (:mod:`connectors._isolate`, any exception, not a list of types): a
  file that is not JSON (or a CSV without PyWxDump's columns), or not decodable (GBK files from
  Windows tools are decoded), is a ``ReadError`` for that file; a message without a usable time
  or content, or that fails in any other way, is a
  ``ReadError("{file}#{localId, MsgSvrID or index}")``; everything else is still read.

Windows: a chat's text messages are cut into conversation windows at silences of more than an
hour and at 200 messages / 20,000 characters (cuts depend only on earlier messages, so new
messages never move old windows). Each window is a document: one line per message,
``YYYY-MM-DD HH:MM sender: text`` in UTC like the imessage connector (local time would rewrite
every window whenever the machine's zone changes), the exporting user as ``Me``, continuation
lines indented; ``created_at``/``updated_at`` are the first and last message. Chinese text is
kept as is (the keyword index segments it with jieba). Chunks are whole messages.

Metadata: ``chat`` (contact or group name), ``chat_id`` (wxid or chatroom id), ``is_group``,
``sender`` (the senders in the window; chunks carry their own), ``is_from_me`` (a message of mine
is in the window / chunk), ``date`` (UTC day of the first message; ``--where`` on ``date`` sees
the document's date, the same day), ``messages``, ``file``. ``native_id`` = chat id + the first
message's time, so a window keeps its id across re-exports and builds.

Incremental: per export file (size, mtime → the windows it produced); unchanged files yield
``Seen``; a changed file is re-read and edits propagate by content hash. The same window in two
exports (a folder of successive exports) is kept once: the copy whose last message is newest.
Adding, removing or renaming a contact's file re-reads the group chats (``@chatroom`` files),
whose lines name members after those files.

Left out: media files themselves, voice transcription, the quoted message of a reply (only the
reply's own text), chats in the WeChat databases themselves (decrypting them is the exporter's
job), and ``discover()`` (exports have no default place).
"""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragbag.connectors._chat import ME, Message, parse_time, window_document, window_spans, windows
from ragbag.connectors._exports import export_files, load_json, read_exports
from ragbag.connectors._isolate import each_record
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable, one_line

NAME = "wechat"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
WINDOW_GAP = timedelta(hours=1)
WINDOW_MESSAGES = 200
WINDOW_CHARS = 20_000
_VERSION = "wechat-1"
USERS_FILE = "users.json"  # PyWxDump's contacts beside its chat exports

TEXT, IMAGE, VOICE, CARD, VIDEO, EMOJI, LOCATION, APP, CALL = 1, 3, 34, 42, 43, 47, 48, 49, 50
SYSTEM = {10000, 10002}
_DROPPED = {IMAGE, VOICE, CARD, VIDEO, EMOJI, CALL} | SYSTEM
_SNIFF = [
    ("<sysmsg", 10002),
    ("<appmsg", APP),
    ("<location", LOCATION),
    ("<img", IMAGE),
    ("<voicemsg", VOICE),
    ("<videomsg", VIDEO),
    ("<emoji", EMOJI),
]
_PREFIX = re.compile(r"^([A-Za-z][-_A-Za-z0-9]{3,63}):\s*\n")
_RECALL = re.compile(r"^.{0,64}(撤回了一条消息|recalled a message)\s*$", re.S)
_TITLE = re.compile(r"<appmsg\b.*?<title>(.*?)</title>", re.S)
_APPTYPE = re.compile(r"<appmsg\b.*?<type>\s*(\d+)\s*</type>", re.S)
_POI = [re.compile(rf'<location\b[^>]*?\b{attr}\s*=\s*"([^"]+)"') for attr in ("poiname", "label")]
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)
_FILE_NAME = re.compile(r"^(?P<name>.*)-(?P<id>[^-]+)$")
_APP_KINDS = {5: "link", 6: "file"}


def read(
    path: Path, source: str, cursor: dict | None = None, options: dict | None = None
) -> Iterator[Document | ReadError | Seen | Cursor]:
    """Every window of every chat export under ``path`` (a ``.json`` file or a folder).
    ``options``: the source's options (None: those in ``sources.yaml``), see :mod:`connectors._walk`."""
    wanted = lambda name: name.lower().endswith((".json", ".csv"))  # noqa: E731
    files, errors = export_files(Path(path), wanted, follows_outside(options), excluded_paths(options))
    names = {chat_id: name for _, key in files for name, chat_id in [_split_name(key)] if name}
    contacts = [(file, key) for file, key in files if Path(key).name == USERS_FILE]
    for file, _ in contacts:  # PyWxDump's users.json: wxid → remark / nickname
        names.update((k, v) for k, v in _contact_names(file).items() if k not in names)
    files = [f for f in files if f not in contacts]
    names_hash = stable_hash(*sorted(f"{k}={v}" for k, v in names.items()), length=16)
    # Group chats show members by the names other files give them: they depend on the name set
    # (and with a users.json, every chat does: PyWxDump's files are named by wxid alone).
    depends = lambda key: names_hash if contacts or _split_name(key)[1].endswith("@chatroom") else ""  # noqa: E731
    yield from errors
    yield from read_exports(files, lambda file, key: _read_file(file, key, source, names), cursor, _VERSION, depends)


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    return window_spans(doc.text, count, max_tokens)


_TIME_KEYS = frozenset({"createTime", "CreateTime", "create_time"})
_MINE_KEYS = ("isSentFromSelf", "isSelf", "is_self", "isSender", "is_sender", "IsSender")


def _split_name(key: str) -> tuple[str, str]:
    """(contact name, wxid) from ``<name>-<wxid>.json``; ("", stem) when there is no dash."""
    stem = Path(key).name.rsplit(".", 1)[0]
    m = _FILE_NAME.match(stem)
    return (m["name"], m["id"]) if m and m["name"] else ("", stem)


def _contact_names(file: Path) -> dict[str, str]:
    """wxid → the name the user gave (remark), else the contact's nickname, from PyWxDump's
    ``users.json`` (``{wxid: {wxid, nickname, remark, account, …}}``); {} for anything else."""
    try:
        data = load_json(file.read_bytes())
    except Exception:  # noqa: BLE001 — names are a nicety: a bad users.json leaves ids as they are
        return {}
    if not isinstance(data, dict):
        return {}
    out = {}
    for wxid, user in data.items():
        if isinstance(user, dict):
            name = " ".join(str(user.get("remark") or user.get("nickname") or "").split())
            if name:
                out[str(wxid)] = name
    return out


def _load(file: Path) -> Any:
    """The records of one export file: parsed JSON, or PyWxDump's CSV (a header naming
    ``room_name``, ``talker`` and ``CreateTime``) as a list of row dicts."""
    data = file.read_bytes()
    if file.suffix.lower() != ".csv":
        return load_json(data)
    rows = list(csv.DictReader(io.StringIO(decode(data)[0], newline="")))
    if not rows or not {"room_name", "talker", "CreateTime"} <= rows[0].keys():
        raise Unreadable("not a WeChat chat export: a CSV without PyWxDump's columns (talker, room_name, CreateTime)")
    return rows


def _read_file(file: Path, key: str, source: str, names: dict[str, str]):
    uri = str(file.absolute())
    data = _load(file)  # a failure is this file's alone (connectors._isolate, in read_exports)
    if isinstance(data, dict):
        data = data.get("chatLogs", data.get("messages"))
    if not isinstance(data, list) or not any(isinstance(r, dict) and _TIME_KEYS & r.keys() for r in data[:50]):
        yield ReadError(
            uri,
            "not a WeChat chat export: expected a list of messages with createTime "
            '(or {"chatLogs": [...]} / {"messages": [...]}); a contacts or other dump is not read',
        )
        return
    chat, chat_id = _split_name(key)
    # The chat: PyWxDump names it room_name (its talker is the sender); WeChatTweak's talker.
    room = next((r.get("room_name") for r in data if isinstance(r, dict) and r.get("room_name")), None)
    talker = next((r.get("talker") for r in data if isinstance(r, dict) and r.get("talker")), None)
    chat_id = str(room or talker or chat_id)
    chat = chat or names.get(chat_id) or chat_id
    is_group = chat_id.endswith("@chatroom") or any(
        isinstance(r, dict) and any(str(r.get(k) or "").endswith("@chatroom") for k in ("fromUser", "toUser"))
        for r in data[:200]
    )
    messages: list[Message] = []
    for index, record in enumerate(data):
        ident = (
            next((record[k] for k in ("localId", "MsgSvrID") if k in record), index)
            if isinstance(record, dict)
            else index
        )
        # The isolation boundary: whatever one message holds fails that message alone.
        msg = each_record(f"{uri}#{ident}", _message, record, chat, is_group, names)
        if isinstance(msg, ReadError):
            yield msg
        elif msg is not None:
            messages.append(msg)
    messages.sort(key=lambda m: m.when)  # stable: equal times keep export order
    for window in windows(messages, WINDOW_GAP, WINDOW_MESSAGES, WINDOW_CHARS):
        start = int(window[0].when.timestamp())
        doc = window_document(
            window,
            source=source,
            connector=NAME,
            native_id=f"{chat_id}@{start}",
            uri=f"{uri}#{start}",
            chat=chat,
            chat_id=chat_id,
            is_group=is_group,
            file=key,
        )
        yield doc, window[-1].when.timestamp()


def _message(record: Any, chat: str, is_group: bool, names: dict[str, str]) -> Message | None:
    """A text message, None for what is deliberately dropped; ValueError for garbage."""
    if not isinstance(record, dict):
        raise Unreadable(f"not a message object ({type(record).__name__})")
    raw_time = next((record[k] for k in ("createTime", "CreateTime", "create_time") if k in record), None)
    when = parse_time(raw_time, naive_tz=None)
    if when is None:
        raise Unreadable(f"no usable createTime ({one_line(repr(raw_time))})")
    content = next((record[k] for k in ("content", "message", "msg", "StrContent") if k in record), None)
    if "room_name" in record and "type_name" in record:  # PyWxDump: rendered text, its own type names
        content = _pywxdump_text(str(record["type_name"]), content)
        if content is None:
            return None
    if isinstance(content, dict):  # some exporters pre-parse quoted messages
        content = content.get("title") or content.get("content") or content.get("text")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise Unreadable(f"content is a {type(content).__name__}, not text")
    # Exporters name "sent by me" differently: isSentFromSelf (WeChatTweak's chatlog API),
    # isSelf, isSender / is_sender / IsSender (database dumps).
    mine = next((record[k] for k in _MINE_KEYS if k in record), None)
    mine = mine in (True, 1, "1", "true", "True")
    sender_id = str(record.get("fromUser") or "")
    if "room_name" in record:  # PyWxDump: talker is the sender (the chat is room_name)
        sender_id = str(record.get("talker") or "")
    m = _PREFIX.match(content)
    if is_group and m and not mine:
        sender_id, content = m.group(1), content[m.end() :]
    kind = _kind(record.get("type", record.get("Type", record.get("msgType"))), content)
    if kind in _DROPPED:
        return None
    text = _text(kind, content)
    if not text:
        return None
    if mine:
        sender = ME
    elif is_group:
        sender = str(record.get("displayName") or "") or names.get(sender_id) or sender_id or "?"
    else:
        sender = chat
    return Message(when, sender, text, mine)


# PyWxDump's type names (its type_converter): dropped like their type numbers are.
_PYWXDUMP_DROPPED = ("图片", "语音", "视频", "动画表情", "用户上传的GIF表情", "推荐公众号", "添加好友", "语音通话")
_PYWXDUMP_SYSTEM = ("系统通知", "消息撤回", "拍一拍", "邀请加群")
_PYWXDUMP_QUOTE = re.compile(r"\n\n\[引用\]\(.*\Z", re.S)


def _pywxdump_text(type_name: str, msg: Any) -> str | None:
    """A PyWxDump message's text (its ``msg`` is already rendered per type), None when dropped:
    media and calls, system lines, recalls, and placeholders that only repeat the type name."""
    if not isinstance(msg, str):
        return msg  # reported as not text by the caller
    if type_name in _PYWXDUMP_DROPPED or type_name.startswith(_PYWXDUMP_SYSTEM):
        return None
    text = msg.strip()
    if not text or text == type_name:
        return None
    if type_name == "位置":  # "纬度:…\n位置：label poiname\n其他信息：…"
        place = next((line.split("：", 1)[1] for line in text.splitlines() if line.startswith("位置：")), "")
        return f"[location] {place.strip()}" if place.strip() else None
    if type_name == "(分享)卡片式链接":  # "title\ndes\n\n<a href=…>点击查看详情</a>"
        return f"[link] {text.splitlines()[0].strip()}"
    if type_name == "文件":
        return f"[file] {text}"
    if type_name == "引用回复":  # the reply's own text, less the quoted message
        return _PYWXDUMP_QUOTE.sub("", text).strip() or None
    return text


def _kind(value: Any, content: str) -> int:
    try:
        kind = int(value)
    except (TypeError, ValueError):
        kind = 0
    if kind:
        return kind
    head = content.lstrip()[:4096]
    if _is_xml(head):
        return next((k for tag, k in _SNIFF if tag in head), 10002)
    return 10000 if _RECALL.match(content.strip()) else TEXT


def _is_xml(text: str) -> bool:
    """WeChat's XML payloads; a text message that merely starts with "<" ("<3") is text."""
    return text.startswith(("<?xml", "<msg", "<sysmsg", "<voipmsg", "<voipinvitemsg"))


def _text(kind: int, content: str) -> str:
    if kind == APP:
        m = _TITLE.search(content)
        title = _xml_text(m.group(1)) if m else ""
        t = _APPTYPE.search(content)
        label = _APP_KINDS.get(int(t.group(1))) if t else None
        return f"[{label}] {title}" if title and label else title
    if kind == LOCATION:
        m = next((m for pattern in _POI if (m := pattern.search(content))), None)
        return f"[location] {html.unescape(m.group(1)).strip()}" if m else ""
    text = content.strip()
    return "" if _is_xml(text) else text


def _xml_text(raw: str) -> str:
    raw = _CDATA.sub(lambda m: m.group(1), raw)
    return " ".join(html.unescape(raw).split())
