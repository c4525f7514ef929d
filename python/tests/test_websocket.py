"""One session per WebSocket connection: reset/step/state/expert/close, and error replies that
leave the connection usable."""

from __future__ import annotations

import asyncio

import pytest

from phonebench import AsyncWebSocketSession, LocalServer, PhonebenchError, WebSocketSession


def test_websocket_session_plays_a_task(server: LocalServer) -> None:
    with server.ws_session() as ws:
        state = ws.state()
        assert state["task_id"] is None  # the connection is a session before any reset
        result = ws.reset(task="settings.screen_timeout", episode_id="ws-1")
        assert result.info["episode_id"] == "ws-1" and result.observation["step"] == 0
        while not result.done:
            expert = ws.expert()
            assert expert["gave_up"] is None
            result = ws.step(expert["action"])
        assert result.reward == 1.0 and result.terminated
        state = ws.state()
        assert state["done"] is True and state["verdict"]["success"] is True
        assert state["session_id"] == ws.session_id
    assert ws._ws is None  # closed: the `closed` reply was read


def test_bad_messages_get_error_replies_and_the_connection_stays_usable(server: LocalServer) -> None:
    with server.ws_session() as ws:
        assert ws.exchange("not json")["data"]["code"] == "INVALID_JSON"
        assert ws.exchange({"type": "dance"})["data"]["code"] == "UNKNOWN_TYPE"
        reply = ws.exchange({"type": "step", "data": {"action": "press [back]"}})
        assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_ERROR"
        reply = ws.exchange({"type": "reset", "data": {"task": "settings.screen_timeout", "session_id": "x"}})
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        with pytest.raises(PhonebenchError) as unknown:
            ws.reset(task="no.such_task")
        assert unknown.value.status is None and "no.such_task" in unknown.value.message
        with pytest.raises(PhonebenchError) as bad_option:
            ws.reset(task="settings.screen_timeout", bogus=True)
        assert "bogus" in bad_option.value.message
        # Still the same, working connection.
        result = ws.reset(task="settings.screen_timeout")
        malformed = ws.step("blah")
        assert malformed.format_error and malformed.last_action_error
        assert ws.step("press [back]").observation["step"] == 2
        assert result.session_id == ws.session_id


def test_websocket_rgb_screenshot_beyond_one_mib(server: LocalServer) -> None:
    # A 1080x2400 rgb screenshot is ~10 MB of base64: the client must accept large messages.
    with WebSocketSession(server.url, server.token) as ws:
        result = ws.reset(task="settings.screen_timeout", screenshot="rgb")
        shot = result.observation["screenshot"]
        assert shot["width"] * shot["height"] * 4 // 3 <= len(shot["data"]) + 4


def test_async_websocket_session(server: LocalServer) -> None:
    async def main() -> float:
        session = await AsyncWebSocketSession.connect(server.url, server.token)
        async with session:
            result = await session.reset(task="settings.screen_timeout")
            while not result.done:
                result = await session.step((await session.expert())["action"])
            assert (await session.state())["done"]
            return result.reward

    assert asyncio.run(main()) == 1.0
