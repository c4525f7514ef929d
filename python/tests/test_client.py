"""The HTTP client against a real `phonebench serve`: routes, episodes to reward 1, the agent's
format errors, and the server's refusals as PhonebenchError."""

from __future__ import annotations

import asyncio

import pytest

from phonebench import Client, LocalServer, PhonebenchError, StepResult


def test_health_metadata_schema_tasks(client: Client) -> None:
    health = client.health()
    assert health["status"] == "healthy"
    assert health["max_sessions"] >= 1

    meta = client.metadata()
    assert meta["name"] == "phonebench"
    assert meta["suite"] == "starter"
    assert meta["tasks"] == len(client.tasks()) > 100
    assert "settings" in meta["apps"]

    schema = client.schema()
    assert set(schema) >= {"action", "observation", "state"}
    assert "text" in schema["observation"]["required"]

    listing = client.task_list()
    assert listing["suite"] == "starter" and "seed" in listing
    assert {"id", "category", "apps"} <= set(listing["tasks"][0])
    settings = client.tasks("settings.*")
    assert settings and all(t["id"].startswith("settings.") for t in settings)


def test_expert_plays_a_task_to_reward_1(client: Client, play_expert) -> None:  # type: ignore[no-untyped-def]
    with client.session() as session:
        result = play_expert(session, "settings.screen_timeout")
        assert (result.reward, result.done, result.truncated, result.terminated) == (1.0, True, False, True)
        assert result.verdict["success"] is True
        assert session.state()["done"] is True


def test_ask_user_and_mcp_tasks_to_reward_1(
    client: Client,
    tasks_by_category: dict[str, list[str]],
    play_expert,  # type: ignore[no-untyped-def]
) -> None:
    ask = tasks_by_category["ask_user"][0]
    mcp = tasks_by_category["mcp"][0]
    with client.session() as session:
        result = play_expert(session, ask)
        assert result.reward == 1.0, result.verdict

        first = session.reset(task=mcp)
        tools = first.info.get("tools")
        assert tools and {"name", "description", "input_schema"} <= set(tools[0])
        messages = []
        result = first
        while not result.done:
            result = session.step(session.expert()["action"])
            if result.message:
                messages.append(result.message)
        assert result.reward == 1.0, result.verdict
        assert messages, "an MCP task's tool results come back as messages"


def test_malformed_action_is_an_observation_not_an_error(client: Client) -> None:
    with client.session() as session:
        session.reset(task="settings.screen_timeout")
        result = session.step("this is not an action")
        assert isinstance(result, StepResult)
        assert result.last_action_error
        assert result.format_error is True
        assert result.observation["step"] == 1  # the step counts
        assert not result.done
        for bad in ({"foo": 1}, 42):
            again = session.step(bad)
            assert again.format_error and again.last_action_error
        assert client.health()["status"] == "healthy"
        ok = session.step(session.expert()["action"])
        assert ok.format_error is False and ok.last_action_error is None


def test_refusals_raise_phonebench_error_with_the_message(client: Client) -> None:
    with pytest.raises(PhonebenchError) as unknown_option:
        client.reset(task="settings.screen_timeout", bogus_option=1)
    assert unknown_option.value.status == 422
    assert "bogus_option" in unknown_option.value.message

    with pytest.raises(PhonebenchError) as unknown_task:
        client.reset(task="no.such_task")
    assert unknown_task.value.status == 404
    assert "no.such_task" in unknown_task.value.message

    with pytest.raises(PhonebenchError) as unknown_session:
        client.step("no-such-session", "press [back]")
    assert unknown_session.value.status == 404
    assert unknown_session.value.code == "SESSION_ERROR"

    with client.session() as session:
        session.reset(task="settings.screen_timeout", max_steps=1)
        over = session.step("press [back]")
        assert over.done and over.truncated and not over.terminated
        with pytest.raises(PhonebenchError) as finished:
            session.step("press [back]")
        assert finished.value.status == 409
        assert finished.value.code == "SESSION_ERROR"
        assert "over" in finished.value.message
    assert client.health()["sessions"] == 0


def test_session_lifecycle_screenshot_state_and_request_id(client: Client) -> None:
    first = client.reset(task="settings.screen_timeout", episode_id="ep-1")
    sid = first.session_id
    assert sid and first.info["episode_id"] == "ep-1"
    assert first.info["task_id"] == "settings.screen_timeout"
    png = client.screenshot(sid)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert client.screenshot(sid, som=True).startswith(b"\x89PNG")
    stepped = client.step(sid, "press [back]", request_id="req-7", elements=True)
    assert stepped.info["request_id"] == "req-7"
    assert stepped.elements and {"index", "bounds"} <= set(stepped.elements[0])
    state = client.state(sid)
    assert state["session_id"] == sid and state["step_count"] == 1
    # A reset with the id starts over in the same session.
    again = client.reset(task="settings.screen_timeout", session_id=sid)
    assert again.session_id == sid and again.observation["step"] == 0
    assert client.close_session(sid) == {"closed": sid}
    with pytest.raises(PhonebenchError) as gone:
        client.state(sid)
    assert gone.value.status == 404


def test_free_phone_has_no_task_and_no_verdict(client: Client) -> None:
    with client.session() as session:
        result = session.reset(app="com.android.settings", screenshot="rgb")
        assert result.info["task_id"] is None
        assert "Settings" in result.text
        shot = result.observation["screenshot"]
        assert shot["format"] == "rgb" and len(shot["data"]) > 0
        after = session.step("press [back]")
        assert after.verdict is None


def test_async_client(server: LocalServer) -> None:
    async def main() -> tuple[float, int]:
        async with server.async_client() as client:
            assert (await client.health())["status"] == "healthy"
            result = await client.reset(task="settings.screen_timeout")
            sid = result.session_id
            while not result.done:
                result = await client.step(sid, (await client.expert(sid))["action"])
            await client.close_session(sid)
            return result.reward, len(await client.tasks("settings.*"))

    reward, count = asyncio.run(main())
    assert reward == 1.0 and count > 0
