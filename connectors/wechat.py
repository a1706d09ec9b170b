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
- **PyWxDump types**: voice, stickers, calls, friend requests, system lines, recalls and pats
  are dropped, and so are pictures and videos whose row names no file; a picture or video with a
  ``src`` is a line (``[image]``, ``[video]``), a location keeps its place (``[location] …``), a
  shared link its title (``[link] …``), a file its name (``[file] …``), a quoted reply its own
  text; a ``msg`` that only repeats its type name (mini programs…) is dropped.
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

**Files** (PyWxDump's ``src``: pictures, files, videos): looked for under the export's folder
and the folders above it up to the source's, never outside it, and read as attachments of their
window when there (:mod:`connectors._wechat_files`: where they are and why, pictures unmasked;
:mod:`connectors._chat_attachments`: the documents, ``<window>/attachment/<MsgSvrID>``, and one
report per window of the files not there and those not read). ``attachments: false`` reads no
files, ``ocr: false`` no text in pictures (:mod:`connectors._inside`); the window's text is the
same either way.

Incremental: per export file (size, mtime, and the size and time of every file its messages
point at → the documents it produced); unchanged files yield ``Seen``; a changed file is re-read
and edits propagate by content hash. The same window in two
exports (a folder of successive exports) is kept once: the copy whose last message is newest.
Adding, removing or renaming a contact's file re-reads the group chats (``@chatroom`` files),
whose lines name members after those files.

Left out: voice messages, the files of exports other than PyWxDump's (they name none), the
quoted message of a reply (only the reply's own text), chats in the WeChat databases themselves
(decrypting them is the exporter's job), and ``discover()`` (exports have no default place).
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
from ragbag.connectors._chat_attachments import Sent, attachment_documents, attachment_spans
from ragbag.connectors._exports import export_files, load_json, read_exports
from ragbag.connectors._inside import Inside, inside
from ragbag.connectors._isolate import each_record
from ragbag.connectors._pywxdump import USERS_FILE, contact_names, file_src, message_text
from ragbag.connectors._walk import excluded_paths, follows_outside
from ragbag.connectors._wechat_files import PLACE, STORAGE, Folders, attachment, fingerprint
from ragbag.core.records import Cursor, Document, ReadError, Seen, Span, stable_hash
from ragbag.text.chunking import TokenCounter
from ragbag.text.decode import decode
from ragbag.text.unreadable import Unreadable, one_line

NAME = "wechat"
SCHEDULE = "0 4 * * *"  # exports change when the user exports again: daily is plenty
WINDOW_GAP = timedelta(hours=1)
WINDOW_MESSAGES = 200
WINDOW_CHARS = 20_000
_VERSION = "wechat-2"  # 2: the files messages point at; the cursor's version holds the inside settings too

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
    path, reads = Path(path), inside(source, options)
    follow, exclude = follows_outside(options), excluded_paths(options)
    root = (path if path.is_dir() else path.parent).absolute()
    files, errors = export_files(path, wanted, follow, exclude)
    files = [(f, k) for f, k in files if STORAGE not in Path(k).parts[:-1]]  # a copied FileStorage holds no exports
    names = {chat_id: name for _, key in files for name, chat_id in [_split_name(key)] if name}
    contacts = [(file, key) for file, key in files if Path(key).name == USERS_FILE]
    for file, _ in contacts:  # PyWxDump's users.json: wxid → remark / nickname
        names.update((k, v) for k, v in contact_names(file).items() if k not in names)
    files = [f for f in files if f not in contacts]
    names_hash = stable_hash(*sorted(f"{k}={v}" for k, v in names.items()), length=16)
    # The cursor's version names the inside settings too: other ones read everything again.
    version = f"{_VERSION}:{','.join(str(v) for v in reads.signature)}"
    old_refs = (cursor or {}).get("refs", {}) if (cursor or {}).get("version") == version else {}
    refs: dict[str, list[str]] = {}  # export file → the files its messages point at (this read's)
    folders = lambda key: Folders(root, (root / key).parent, follow, exclude)  # noqa: E731

    def depends(key: str, srcs: list[str] | None = None) -> str:
        # Group chats show members by the names other files give them: they depend on the name
        # set (and with a users.json, every chat does: PyWxDump's files are named by wxid alone);
        # and every chat on the files its messages point at.
        named = names_hash if contacts or _split_name(key)[1].endswith("@chatroom") else ""
        srcs = old_refs.get(key, []) if srcs is None else srcs
        stored = fingerprint(srcs, folders(key)) if reads.attachments else ""
        return f"{named}/{stored}" if stored else named

    def parse(file: Path, key: str):
        return _read_file(file, key, source, names, reads, folders(key), refs)

    yield from errors
    for item in read_exports(files, parse, cursor, version, depends):
        if isinstance(item, Cursor):  # what was read this time is fingerprinted by this read's files
            kept = item.state["files"]
            for key, srcs in refs.items():
                if key in kept:
                    kept[key]["stat"][-1] = depends(key, srcs)
            item.state["refs"] = {k: v for k in kept if (v := refs.get(k, old_refs.get(k)))}
        yield item


def spans(doc: Document, count: TokenCounter, max_tokens: int) -> list[Span]:
    if doc.metadata.get("attachment"):
        return attachment_spans(doc, count, max_tokens)
    return window_spans(doc.text, count, max_tokens)


_TIME_KEYS = frozenset({"createTime", "CreateTime", "create_time"})
_MINE_KEYS = ("isSentFromSelf", "isSelf", "is_self", "isSender", "is_sender", "IsSender")


def _split_name(key: str) -> tuple[str, str]:
    """(contact name, wxid) from ``<name>-<wxid>.json``; ("", stem) when there is no dash."""
    stem = Path(key).name.rsplit(".", 1)[0]
    m = _FILE_NAME.match(stem)
    return (m["name"], m["id"]) if m and m["name"] else ("", stem)


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


def _read_file(file: Path, key: str, source: str, names: dict[str, str], reads: Inside, folders: Folders, refs: dict):
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
    sent: dict[int, Sent] = {}  # id(message) → the file it points at
    refs[key] = []
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
            src = file_src(record)
            if src and reads.attachments:
                refs[key].append(src)
                found = each_record(f"{uri}#{ident}", attachment, str(ident), src, folders)
                if isinstance(found, ReadError):
                    yield found
                else:
                    sent[id(msg)] = Sent(found, str(ident), msg.sender, msg.when, msg.is_from_me)
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
        stamp = window[-1].when.timestamp()
        yield doc, stamp
        in_window = [sent[id(m)] for m in window if id(m) in sent]
        for item in attachment_documents(doc, in_window, reads, PLACE):
            yield item if isinstance(item, ReadError) else (item, stamp)


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
        content = message_text(str(record["type_name"]), content, bool(file_src(record)))
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
