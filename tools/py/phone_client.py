"""An MCP client we did not write (the `mcp` package from PyPI, the official Python SDK) driving
`phonebench mcp-server`: lists the tools, plays the starter task settings.flight_mode to success
by reading each screen's text and tapping the element that holds a label, and reads the verdict.
Used by crates/cli/tests/mcp_interop.rs; prints one JSON object with what it saw.

    python phone_client.py stdio PHONEBENCH_BINARY [ARGS...]
    python phone_client.py http URL
"""
from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

PLAN = [
    "Network & internet", "Airplane mode", "back",
    "Connected devices", "Bluetooth", "Use Bluetooth", "back", "back",
    "Battery", "Battery Saver", "Use Battery Saver", "back", "back",
    "Sound & vibration", "Do Not Disturb", "Use Do Not Disturb",
]


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def index_of(screen: str, label: str) -> int:
    """The index of the clickable element whose subtree shows `label` (SPHINX tree format)."""
    lines = screen.split("\n")
    at = next((i for i, l in enumerate(lines) if f"text: {label}," in l or f"content-desc: {label}," in l), None)
    if at is None:
        raise RuntimeError(f'no "{label}" on the screen:\n{screen}')
    depth = lambda l: len(l) - len(l.lstrip())  # noqa: E731
    limit = depth(lines[at]) + 1
    for i in range(at, -1, -1):
        if i == at or depth(lines[i]) < limit:
            m = re.match(r"^\s*\[(\d+)\]", lines[i])
            if m:
                return int(m.group(1))
            limit = min(limit, depth(lines[i]))
    raise RuntimeError(f'"{label}" is not inside a clickable element')


async def play(session: ClientSession) -> dict[str, Any]:
    await session.initialize()
    report: dict[str, Any] = {}
    tools = await session.list_tools()
    report["tools"] = sorted(t.name for t in tools.tools)
    screen = text_of(await session.call_tool("start_task", {"task_id": "settings.flight_mode"}))
    report["goal_shown"] = "airplane mode" in screen
    for step in PLAN:
        if step == "back":
            result = await session.call_tool("press_key", {"key": "back"})
        else:
            result = await session.call_tool("tap", {"index": index_of(screen, step)})
        if result.is_error:
            raise RuntimeError(f"{step}: {text_of(result)}")
        screen = text_of(result)
    shot = await session.call_tool("screenshot", {})
    report["screenshot"] = [f"{c.type}:{getattr(c, 'mime_type', '')}" for c in shot.content]
    await session.call_tool("finish", {})
    verdict = json.loads(text_of(await session.call_tool("get_verdict", {})))
    report["success"] = verdict["success"]
    report["acp"] = verdict["acp"]
    return report


async def main() -> None:
    mode, target, *rest = sys.argv[1:]
    if mode == "stdio":
        params = StdioServerParameters(command=target, args=rest)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                report = await play(session)
    else:
        async with streamable_http_client(target) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                report = await play(session)
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
