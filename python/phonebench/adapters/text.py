"""Turning observations into chat messages and model outputs into actions, for the text
adapters (SkyRL, verl).

The server reads a bare action (``click [3]``, a JSON object); a model writes reasoning around
it. :func:`extract_action` takes the action out of the model's text by a documented convention:
the text after the last ``Action:`` (code fences and surrounding backticks removed), or the whole
text when there is no such line. Whatever comes out goes to the server, which reports a format
error in the observation when it cannot read it — so the model learns from its own mistakes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..client import StepResult

__all__ = ["SYSTEM_PROMPT", "extract_action", "first_message", "render_step"]

SYSTEM_PROMPT = """You operate an Android phone to complete the user's goal.
Each turn you see the screen as an indented tree: elements you can act on carry an index in
brackets, e.g. `[3] a View (text: Settings, ...) to click`.
Reply with your reasoning, then one action on the last line after `Action:`. Actions:
  click [i]              tap element i
  longclick [i]          long-press element i
  text [i] [words]       type words into element i
  swipe [i] [up|down|left|right]   swipe on element i
  press [back] / press [enter] / press [home] (restarts the app)
  {"action": "open_app", "app": "NAME"}       open another app
  {"action": "answer", "text": "..."}         give the answer to a question (ends the task)
  {"action": "ask_user", "text": "..."}       ask the user something you cannot find
  {"action": "mcp_call", "tool": "NAME", "arguments": {...}}   call a tool (when tools are listed)
  {"action": "finish", "status": "complete"}  when the goal is done ("infeasible" if it cannot be)
Example:
Reason: the Wi-Fi switch is element 4.
Action: click [4]"""
"""A default system prompt for the SPHINX tree format (the server's default)."""

_ACTION = re.compile(r"(?im)^[\s*_]*action[\s*_]*:[\s*_]*")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.S)


def extract_action(output: str) -> str:
    """The action in a model's output: the text after the last ``Action:`` line start (with
    any code fence or backticks around it removed), else the whole output, stripped."""
    matches = list(_ACTION.finditer(output))
    action = output[matches[-1].end() :] if matches else output
    action = action.strip()
    fenced = _FENCE.match(action)
    if fenced:
        action = fenced.group(1).strip()
    if len(action) >= 2 and action[0] == action[-1] == "`":
        action = action.strip("`").strip()
    return action


def _tools_text(tools: list[dict[str, Any]]) -> str:
    lines = ["Tools you can call with an mcp_call action:"]
    for tool in tools:
        schema = json.dumps(tool.get("input_schema") or {}, separators=(",", ":"))
        lines.append(f"- {tool.get('name')}: {tool.get('description', '')} Arguments: {schema}")
    return "\n".join(lines)


def render_step(result: StepResult) -> str:
    """One observation as the content of a user message: feedback first, then the screen."""
    o = result.observation
    parts = []
    if o.get("last_action_error"):
        parts.append(f"Your last action could not be read: {o['last_action_error']}")
    if o.get("message"):
        parts.append(f"Message: {o['message']}")
    parts.append(f"Step {o.get('step', 0)} of {o.get('max_steps', '?')}. The screen:\n{o.get('text', '')}")
    return "\n\n".join(parts)


def first_message(result: StepResult) -> str:
    """The first observation of an episode: the goal, the tools (MCP tasks), then the screen."""
    parts = [f"Goal: {result.goal}"]
    tools = result.info.get("tools") or []
    if tools:
        parts.append(_tools_text(tools))
    parts.append(render_step(result))
    return "\n\n".join(parts)
