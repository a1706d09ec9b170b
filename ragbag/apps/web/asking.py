"""Ask through the page: ``ragbag ask`` streamed to the browser as lines of JSON.

The answer is produced exactly as ``ragbag ask`` produces it (``ragbag.answer.ask.ask``: the
configured provider, the relevance floor, fenced context, citations resolved against the
passages the model saw). It runs in a worker thread, holding the page's search lock while it
retrieves (until its first text), and every piece of text it streams is passed on as it comes,
one JSON object per line::

    {"type": "text", "text": "…"}                         as many as the provider streams
    {"type": "done", "citations": [...], "unresolved": [...], "relevant": true, "model": "…"}
    {"type": "error", "message": "…"}                      instead of done, when it failed

Newline-delimited JSON over a plain ``fetch`` stream needs nothing beyond what the app already
has. Each citation carries the link that opens its passage (``href``), which the page turns
into a chip; the ``[c:…]`` markers in the text become chips the same way.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from ragbag.apps.web.hits import SEARCH_LOCK, doc_href
from ragbag.core import jsonout
from ragbag.core.errors import RagbagError
from ragbag.core.home import Home

_END = object()


def prepare(home: Home, args: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(the provider, the request's options) for a question, checked before any streaming starts:
    a bad filter or an unusable provider is a 400 with its one-line message, not a broken stream."""
    from ragbag.answer import ask as engine
    from ragbag.answer import llm
    from ragbag.search.request import check_options, fields_of

    question = str(args.get("query") or "").strip()
    if not question:
        raise RagbagError("the question is empty: say what you want to know")
    options = fields_of({k: v for k, v in args.items() if k != "query"})
    check_options(question, **options)  # its length too: the bound every search has
    options["k"] = engine.settings(home).get("k", engine.DEFAULT_K)
    provider = llm.resolve(home, None, None, None)
    provider.check()
    return provider, {"question": question, **options}


def stream(home: Home, provider: Any, options: dict[str, Any]) -> Iterator[str]:
    """The answer as JSON lines, text first as it is generated, then the citations."""
    from ragbag.answer import ask as engine

    lines: queue.Queue[Any] = queue.Queue()
    question = options.pop("question")

    retrieving = [True]  # SEARCH_LOCK is held until the first text: retrieval is over by then

    def on_text(text: str) -> None:
        if retrieving[0]:
            retrieving[0] = False
            SEARCH_LOCK.release()
        lines.put({"type": "text", "text": text})

    def work() -> None:
        SEARCH_LOCK.acquire()
        try:
            answer = engine.ask(question, provider, home, on_text=on_text, **options)
            lines.put(
                {
                    "type": "done",
                    "answer": answer.answer,
                    "citations": [_chip(c) for c in answer.citations],
                    "unresolved": answer.unresolved,
                    "relevant": answer.relevant,
                    "model": answer.model,
                }
            )
        except RagbagError as e:
            lines.put({"type": "error", "message": str(e)})
        except Exception as e:  # a provider's failure mid-stream: said in the stream, not a dead connection
            lines.put({"type": "error", "message": f"the answer failed: {type(e).__name__}: {e}"})
        finally:
            if retrieving[0]:
                retrieving[0] = False
                SEARCH_LOCK.release()
            lines.put(_END)

    threading.Thread(target=work, name="ragbag-ask", daemon=True).start()
    while (item := lines.get()) is not _END:
        yield jsonout.dumps(item) + "\n"


def _chip(cited: dict[str, Any]) -> dict[str, Any]:
    """A citation as the page shows it: its id, where it is from, and the link to its passage."""
    return {
        "citation": cited["citation"],
        "title": cited.get("title") or "",
        "source": cited.get("source"),
        "uri": cited.get("uri") or "",
        "date": cited.get("date"),
        "page": cited.get("page"),
        "href": doc_href(cited["citation"]),
    }
