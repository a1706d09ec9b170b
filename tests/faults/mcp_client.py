"""`ragbag mcp` through the SDK's own stdio client, as the fault tests start it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from conftest import RAGBAG
from mcp import ClientSession, StdioServerParameters, stdio_client


@asynccontextmanager
async def mcp_session(env: dict[str, str], log: Path) -> AsyncIterator[ClientSession]:
    """An initialised session with `ragbag mcp` on the home ``env`` names; its stderr goes to ``log``."""
    params = StdioServerParameters(command=RAGBAG, args=["mcp"], env={**env, "PATH": os.environ["PATH"]})
    with open(log, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            yield s
