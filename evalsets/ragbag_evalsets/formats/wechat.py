"""WeChat chats as the export tools write them: one JSON file a chat, a record a message with its
type (text, image, sticker, link, location, recall), ``createTime`` in seconds, group messages
prefixed with their sender's wxid."""

from __future__ import annotations

import json
from datetime import datetime
from html import escape

from ragbag_evalsets.formats import h

# The exporting account: both personas' exports carry this wxid.
WX_ME = "wxid_jh4ff2m0nn21"


class WeChat:
    """One export file: messages as the exporters write them (``createTime`` in seconds)."""

    def __init__(self, name: str, talker: str, members: dict[str, str] | None = None) -> None:
        self.name, self.talker, self.members = name, talker, members or {}
        self.records: list[dict] = []

    def say(self, when: datetime, sender: str | None, content: str, kind: int = 1) -> None:
        """``sender``: a wxid, None for me."""
        group = self.talker.endswith("@chatroom")
        mine = sender is None
        if group and not mine:
            content = f"{sender}:\n{content}"
        rec = {
            "localId": len(self.records) + 1,
            "talker": self.talker,
            "type": kind,
            "subType": 0 if kind != 49 else 5,
            "content": content,
            "createTime": int(when.timestamp()),
            "isSentFromSelf": mine,
            "fromUser": WX_ME if mine else self.talker,
            "toUser": self.talker if mine else WX_ME,
            "status": 2 if mine else 3,
            "msgSvrId": str(int(h(self.talker, len(self.records), n=8), 16) >> 1),
        }
        if group and not mine and sender in self.members:
            rec["displayName"] = self.members[sender]
        self.records.append(rec)

    def link(self, when: datetime, sender: str | None, title: str, url: str) -> None:
        xml = (
            f'<?xml version="1.0"?>\n<msg><appmsg appid="" sdkver="0"><title>{escape(title)}'
            f"</title><des></des><type>5</type><url>{escape(url)}</url></appmsg>"
            f"<fromusername>{sender or WX_ME}</fromusername></msg>"
        )
        self.say(when, sender, xml, 49)

    def image(self, when: datetime, sender: str | None) -> None:
        size = int(when.timestamp()) % 900000 + 40000
        xml = (
            f'<?xml version="1.0"?>\n<msg><img aeskey="{h(when, n=16)}" length="{size}" md5="{h(when, "img")}" /></msg>'
        )
        self.say(when, sender, xml, 3)

    def sticker(self, when: datetime, sender: str | None) -> None:
        self.say(
            when,
            sender,
            f'<msg><emoji fromusername="{sender or WX_ME}" type="2" md5="{h(when, "e")}" len="40522" /></msg>',
            47,
        )

    def recall(self, when: datetime, who: str) -> None:
        rec_count = len(self.records)
        self.records.append(
            {
                "localId": rec_count + 1,
                "talker": self.talker,
                "type": 10000,
                "content": f'"{who}" 撤回了一条消息',
                "createTime": int(when.timestamp()),
                "isSentFromSelf": False,
                "fromUser": self.talker,
                "toUser": WX_ME,
            }
        )

    def bytes(self) -> bytes:
        return json.dumps(self.records, ensure_ascii=False, indent=1).encode("utf-8")
