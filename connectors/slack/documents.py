"""A day file's posts made documents: the conversation's own messages in windows, and each thread
replied to that day as a document of its own that opens with the message it answers.

Why threads apart: a thread is the conversation a question started, often answered hours
later, while the channel goes on about other things. Interleaved in the channel's windows, a
reply ("yes, Thursday works") would sit among unrelated lines and away from its question; as
its own document it is found with the question, and the channel's windows stay readable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

from ragbag.connectors._chat import Message, parse_time, window_document, windows
from ragbag.connectors._exports import Record
from ragbag.connectors.slack.messages import Post
from ragbag.connectors.slack.workspace import Chat

WINDOW_GAP = timedelta(hours=1)
WINDOW_MESSAGES = 200
WINDOW_CHARS = 20_000
THREAD_GAP = timedelta.max  # a thread is one conversation however slowly it is answered
SNIPPET = 60


def documents(
    posts: list[Post],
    chat: Chat,
    parent_of: Callable[[str], Post | None],
    uri: str,
    key: str,
    source: str,
    connector: str,
) -> Iterator[Record]:
    """Channel windows, then thread documents, of one day file's posts (in time order).
    ``parent_of(thread_ts)`` finds a thread's first message when it is not in this file."""
    channel = [p for p in posts if p.thread_ts is None]
    threads: dict[str, list[Post]] = {}
    for p in posts:
        if p.thread_ts is not None:
            threads.setdefault(p.thread_ts, []).append(p)
    by_ts = {p.ts: p for p in channel}

    def doc(window: list[Post], lines: list[Message], native_id: str, title: str, extra: dict) -> Record:
        made = window_document(
            lines,
            source=source,
            connector=connector,
            native_id=native_id,
            uri=f"{uri}#{window[0].ts}",
            chat=chat.name,
            chat_id=chat.chat_id,
            is_group=chat.is_group,
            title=title,
            span=(window[0].when, window[-1].when),
            file=key,
            **extra,
        )
        return made, max(p.stamp for p in window)

    for window in _windows(channel, WINDOW_GAP):
        yield doc(window, [_marked(p) for p in window], f"{chat.chat_id}@{window[0].ts}", chat.name, {})
    for thread_ts, replies in threads.items():
        parent = by_ts.get(thread_ts) or parent_of(thread_ts)
        head = [parent.message] if parent else []
        title = f"{chat.name} · thread {_snippet(parent, thread_ts)}"
        for window in _windows(replies, THREAD_GAP):
            native_id = f"{chat.chat_id}@{thread_ts}/{window[0].ts}"
            yield doc(window, head + [p.message for p in window], native_id, title, {"thread_ts": thread_ts})


def _windows(posts: list[Post], gap: timedelta) -> list[list[Post]]:
    """Posts cut like :func:`connectors._chat.windows` cuts messages (cuts depend only on what
    came before, so a later message never moves an earlier window)."""
    cut = windows([p.message for p in posts], gap, WINDOW_MESSAGES, WINDOW_CHARS)
    out, i = [], 0
    for w in cut:
        out.append(posts[i : i + len(w)])
        i += len(w)
    return out


def _marked(post: Post) -> Message:
    """A thread's first message as the channel shows it: its words, then how many replies
    (they are in the thread's own document)."""
    if not post.replies:
        return post.message
    m = post.message
    noun = "reply" if post.replies == 1 else "replies"
    return Message(m.when, m.sender, f"{m.text}\n[thread: {post.replies} {noun}]", m.is_from_me)


def _snippet(parent: Post | None, thread_ts: str) -> str:
    """The start of the thread's first message, in quotes; its time when the export lacks it
    (deleted, or before the exported range)."""
    if parent is None:
        when = parse_time(thread_ts)
        return f"from {when:%Y-%m-%d %H:%M}" if when else f"{thread_ts}"
    first = " ".join(parent.message.text.split())
    return f"“{first[: SNIPPET - 1]}…”" if len(first) > SNIPPET else f"“{first}”"
