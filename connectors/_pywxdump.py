"""PyWxDump's chat exports: its contacts file, its message types and the files its rows name
(the format is described in :mod:`connectors.wechat`'s module doc; the files in
:mod:`connectors._wechat_files`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragbag.connectors._exports import load_json
from ragbag.connectors._wechat_files import stored_parts

USERS_FILE = "users.json"  # PyWxDump's contacts beside its chat exports


def contact_names(file: Path) -> dict[str, str]:
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


# PyWxDump's type names (its type_converter): dropped like their type numbers are.
_PYWXDUMP_DROPPED = ("图片", "语音", "视频", "动画表情", "用户上传的GIF表情", "推荐公众号", "添加好友", "语音通话")
_PYWXDUMP_SYSTEM = ("系统通知", "消息撤回", "拍一拍", "邀请加群")
_PYWXDUMP_QUOTE = re.compile(r"\n\n\[引用\]\(.*\Z", re.S)


_PYWXDUMP_FILES = {"图片": "[image]", "视频": "[video]", "文件": ""}  # types whose src names a stored file


def file_src(record: Any) -> str:
    """The stored file a PyWxDump picture, video or file message points at (its ``src``), or ""."""
    src = record.get("src") if isinstance(record, dict) and "room_name" in record else None
    ok = isinstance(src, str) and record.get("type_name") in _PYWXDUMP_FILES and stored_parts(src)
    return src if ok else ""  # type: ignore[return-value]


def message_text(type_name: str, msg: Any, has_file: bool = False) -> str | None:
    """A PyWxDump message's text (its ``msg`` is already rendered per type), None when dropped:
    media and calls, system lines, recalls, and placeholders that only repeat the type name. A
    picture or video whose file the row names is a line of its own (``[image]``), so the file
    has a message and a window to belong to."""
    if has_file and _PYWXDUMP_FILES.get(type_name):
        return _PYWXDUMP_FILES[type_name]
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
