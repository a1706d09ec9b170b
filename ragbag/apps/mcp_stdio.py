"""The MCP server's stdio transport: the SDK's, with every request answered.

The SDK's ``stdio_server`` drops a line its validation rejects, and the client that sent it waits
forever. Here stdin is read by ragbag: a line the SDK can read goes to it unchanged; one it cannot
is answered with the JSON-RPC error ``ragbag.apps.jsonrpc_lines`` finds for it, written through the
SDK's own writer. stdout stays the SDK's (it points fd 1 at stderr while serving, so a stray print
cannot corrupt the protocol), and fd 0 is pointed at the null device the same way, so nothing
else in the process, a build's subprocesses included, can read the client's bytes.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

from ragbag.apps import jsonrpc_lines

log = logging.getLogger("ragbag.mcp")


@asynccontextmanager
async def stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for ``Server.run``, as the SDK's ``stdio_server`` yields them."""
    from mcp.server.stdio import stdio_server

    wire, restore = _claim_stdin()
    lines = _Lines(wire)
    try:
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            lines.answer_through(write)
            yield read, write
    finally:
        restore()


class _Lines:
    """The client's lines, as the SDK's reader iterates its stdin: those it can read, as text.
    Every other line is answered here (once the write stream is known) and never reaches it."""

    def __init__(self, wire: BinaryIO):
        import anyio

        self._file = anyio.wrap_file(wire)
        self._write: Any = None
        self._ready = anyio.Event()

    def answer_through(self, write: Any) -> None:
        self._write = write
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._read()

    async def _read(self) -> AsyncIterator[str]:
        import mcp_types as types

        async for raw in self._file:
            line = raw.rstrip(b"\r\n")
            try:
                text = line.decode("utf-8")
                message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
            except ValueError:  # not UTF-8, or pydantic's ValidationError
                if not await self._answered(line):
                    log.info("dropped a line that wants no answer (%d bytes)", len(line))
                continue
            # A request whose id the SDK cannot take (null, a list…) validates as a notification.
            if isinstance(message, types.JSONRPCNotification) and '"id"' in text and await self._answered(line):
                continue
            yield text

    async def _answered(self, line: bytes) -> bool:
        """Answer the line with its JSON-RPC error; False when it wants none."""
        import anyio
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        # In a worker thread: a hostile line of megabytes takes a second or two to explain.
        refusal = await anyio.to_thread.run_sync(jsonrpc_lines.refusal, line)
        if refusal is None:
            return False
        log.info("answered a line the SDK cannot read (%d bytes): %s", len(line), refusal.message)
        error = types.JSONRPCError(
            jsonrpc="2.0", id=refusal.id, error=types.ErrorData(code=refusal.code, message=refusal.message)
        )
        await self._ready.wait()
        await self._write.send(SessionMessage(error))
        return True


def _claim_stdin() -> tuple[BinaryIO, Any]:
    """The client's end of stdin on a descriptor of its own, fd 0 pointed at the null device, and
    what puts it back."""
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)

    def restore() -> None:
        os.dup2(wire, 0)

    return os.fdopen(wire, "rb", closefd=False), restore
