"""``python -m ragapp.mcp``: the knowledge base as an MCP server over stdio, for a desktop client (Claude Desktop,
Cursor) that starts it as a command. It acts for ``RAGAPP_MCP__USER`` (with accounts on: that user's role and
knowledge bases; none: the local user) and reads the same settings and state as the app. Only the protocol goes
to stdout: logs go to stderr."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping

from ragapp.config import Settings
from ragapp.core.errors import AccessDenied, RagAppError
from ragapp.core.types import LOCAL_OWNER
from ragapp.mcp.server import Caller, CallRefused, build_mcp


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from ragapp.engine.build import build_engine

    settings = Settings()
    try:
        engine = build_engine(settings)
    except RagAppError as exc:  # a setting to fix: said in one line, as the app says it
        print(f"ragapp.mcp: {exc}", file=sys.stderr)
        return 2
    user = settings.mcp.user
    try:
        actor = engine.actor(user)
    except AccessDenied as exc:
        print(f"RAGAPP_MCP__USER={user!r}: {exc}", file=sys.stderr)
        engine.close()
        return 2
    caller = Caller(actor, f"user:{user}" if user else LOCAL_OWNER)

    def who(headers: Mapping[str, str] | None) -> Caller:
        if headers:
            raise CallRefused("This is the stdio server: it serves the one client that started it.")
        return caller

    try:
        build_mcp(engine, who).run("stdio")
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
