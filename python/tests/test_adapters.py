"""SkyRL and verl adapters: one episode each to reward 1, played by the task's expert through
the adapters' text interfaces."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from phonebench import Client, LocalServer
from phonebench.adapters.skyrl import PhonebenchTextEnv
from phonebench.adapters.text import extract_action
from phonebench.adapters.verl import (
    AgentLoopOutput,
    ExpertServerManager,
    PhonebenchAgentLoop,
    StandInTokenizer,
)


def test_extract_action() -> None:
    assert extract_action("click [3]") == "click [3]"
    assert extract_action("Reason: it is there.\nAction: click [3]") == "click [3]"
    assert extract_action('Thought\nAction: ```json\n{"action_type": "navigate_back"}\n```') == (
        '{"action_type": "navigate_back"}'
    )
    assert extract_action("Action: first\n**Action:** `press [back]`") == "press [back]"


def test_skyrl_env_plays_an_ask_user_task_to_reward_1(server: LocalServer, client: Client) -> None:
    env = PhonebenchTextEnv({"base_url": server.url}, {"extra_info": {"task": "ask.sister_code"}, "max_turns": 20})
    prompt = [{"role": "system", "content": "Operate the phone."}, {"role": "user", "content": "Here is your task."}]
    messages, meta = env.init(prompt)
    assert len(messages) == 2 and messages[0] == prompt[0]
    assert messages[1]["content"].startswith("Here is your task.\n\nGoal: ")
    assert meta["task_id"] == "ask.sister_code" and meta["session_id"] == env.session_id

    out: dict[str, Any] = {"done": False}
    replies = []
    while not out["done"]:
        action = client.expert(meta["session_id"])["action"]
        out = env.step(f"Reason: following the plan.\nAction: {json.dumps(action)}")
        assert set(out) == {"observations", "reward", "done", "metadata", "postprocessed_action"}
        assert json.loads(out["postprocessed_action"]) == action
        if not out["done"]:
            assert out["observations"][0]["role"] == "user"
            replies += [o["content"] for o in out["observations"] if "Message:" in o["content"]]
    assert out["reward"] == 1.0
    assert out["observations"] == []
    assert out["metadata"]["verdict"]["success"] is True
    assert replies, "the simulated user's answer reaches the model as a message"
    assert env.get_metrics()["success"] == 1.0
    env.close()


def test_skyrl_env_turn_limit_and_format_errors(server: LocalServer) -> None:
    env = PhonebenchTextEnv(task="settings.screen_timeout", base_url=server.url, max_turns=2)
    messages, _ = env.init([])
    assert messages[0]["role"] == "system"  # the default instructions for an empty prompt
    out = env.step("I am not sure what to do")
    assert not out["done"] and "could not be read" in out["observations"][0]["content"]
    out = env.step("Action: press [back]")
    assert out["done"] and out["reward"] == 0.0 and out["metadata"]["truncated"] is True
    env.close()


def test_verl_agent_loop_plays_an_mcp_task_to_reward_1(server: LocalServer) -> None:
    async def main() -> tuple[AgentLoopOutput, int]:
        tokenizer = StandInTokenizer()
        manager = ExpertServerManager(tokenizer, server.url, server.token)
        loop = PhonebenchAgentLoop(None, manager, tokenizer, None, base_url=server.url)
        try:
            out = await loop.run(
                {"temperature": 0.0},
                raw_prompt=[{"role": "user", "content": "Do the task."}],
                extra_info={"task": "mcp.geo_place_contact"},
            )
        finally:
            await manager.close()
        return out, manager.calls

    out, calls = asyncio.run(main())
    assert out.reward_score == 1.0
    assert out.extra_fields["phonebench"]["success"] is True
    assert len(out.response_ids) == len(out.response_mask)
    assert out.response_logprobs is not None and len(out.response_logprobs) == len(out.response_ids)
    # Model turns (1) and environment turns (0) alternate, starting and ending with the model.
    runs: list[list[int]] = []
    for bit in out.response_mask:
        if not runs or runs[-1][0] != bit:
            runs.append([bit, 0])
        runs[-1][1] += 1
    assert [bit for bit, _ in runs] == [1, 0] * (calls - 1) + [1]
    assert out.num_turns == 2 * calls
    tokenizer = StandInTokenizer()
    # Each model turn decodes to the expert's action; environment turns hold the screens.
    first_turn = out.response_ids[: runs[0][1]]
    assert tokenizer.decode(first_turn, skip_special_tokens=True).startswith("Reason:")
    env_turn = out.response_ids[runs[0][1] : runs[0][1] + runs[1][1]]
    assert "The screen:" in tokenizer.decode(env_turn)
    assert tokenizer.decode(out.prompt_ids).count("Goal:") == 1


def test_verl_response_budget_ends_the_trajectory_on_a_model_turn(server: LocalServer) -> None:
    async def main() -> AgentLoopOutput:
        tokenizer = StandInTokenizer()
        manager = ExpertServerManager(tokenizer, server.url)
        loop = PhonebenchAgentLoop(None, manager, tokenizer, None, base_url=server.url, response_length=400)
        try:
            return await loop.run({}, task="settings.flight_mode")
        finally:
            await manager.close()

    out = asyncio.run(main())
    assert len(out.response_ids) <= 400
    assert out.response_mask[-1] == 1
    assert out.reward_score == 0.0 and out.extra_fields["phonebench"]["done"] is False
