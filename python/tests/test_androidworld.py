"""The AndroidWorld-shaped adapter: State with pixels and UIElements, JSONAction objects whose
index is a position in ui_elements, and the verdict after the episode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from phonebench import Client
from phonebench.androidworld import AndroidWorldEnv, State, UIElement, action_to_dict


@dataclass
class JSONAction:
    """AndroidWorld's JSONAction fields (android_world/env/json_action.py), None when unset."""

    action_type: str | None = None
    index: int | str | None = None
    x: int | None = None
    y: int | None = None
    text: str | None = None
    direction: str | None = None
    goal_status: str | None = None
    app_name: str | None = None
    keycode: str | None = None
    clear_text: bool | None = None


def _element_at(state: State, x: int, y: int) -> int:
    """The index of the smallest element containing (x, y): how an AndroidWorld agent would
    name the expert's tap (AndroidWorld's list holds leaves, so the clickable row around a label
    is often absent; clicking the label's centre taps the row)."""
    hits = [
        (e.bbox_pixels.area, i)
        for i, e in enumerate(state.ui_elements)
        if e.bbox_pixels is not None
        and e.bbox_pixels.x_min <= x < e.bbox_pixels.x_max
        and e.bbox_pixels.y_min <= y < e.bbox_pixels.y_max
    ]
    assert hits, f"no element at ({x}, {y})"
    return min(hits)[1]


def _as_json_action(expert: dict[str, Any], state: State) -> JSONAction:
    kind = expert["action"]
    if kind == "tap":
        target = expert["target"]
        return JSONAction(action_type="click", index=_element_at(state, target["x"], target["y"]))
    if kind == "key" and expert["key"] == "back":
        return JSONAction(action_type="navigate_back")
    if kind == "finish":
        return JSONAction(action_type="status", goal_status=expert["status"])
    raise AssertionError(f"this test does not translate {expert}")


def test_plays_a_task_with_json_actions_to_success(client: Client) -> None:
    env = AndroidWorldEnv("settings.screen_timeout", client=client)
    state = env.reset()
    assert env.goal
    assert isinstance(state.pixels, np.ndarray) and state.pixels.shape == (2400, 1080, 3)
    assert state.pixels.dtype == np.uint8
    assert state.forest is None
    assert state.ui_elements and all(isinstance(e, UIElement) for e in state.ui_elements)
    width, height = env.logical_screen_size
    for e in state.ui_elements:
        box = e.bbox_pixels
        assert box is not None
        assert 0 <= box.x_min <= box.x_max <= width and 0 <= box.y_min <= box.y_max <= height
        assert e.bbox is not None and 0.0 <= e.bbox.x_min <= e.bbox.x_max <= 1.0
    assert any(e.text for e in state.ui_elements)
    assert any(e.is_clickable for e in state.ui_elements)
    assert all(e.resource_name is None or ":id/" in e.resource_name for e in state.ui_elements)

    steps = 0
    while not env.done:
        expert = env.expert_action()
        assert expert is not None
        env.execute_action(_as_json_action(expert, env.get_state()))
        steps += 1
        assert steps < 20
        assert env.get_state(wait_to_stabilize=True).auxiliaries["step"] == steps
    assert env.is_successful() == 1.0
    assert env.verdict is not None and env.verdict["success"] is True
    # AndroidWorld agents say `status` after `answer`; after the end it is a no-op, not an error.
    env.execute_action(JSONAction(action_type="status", goal_status="complete"))
    env.close()


def test_answer_is_kept_in_the_interaction_cache(client: Client) -> None:
    env = AndroidWorldEnv("messages.verification_code", client=client)
    state = env.reset()
    expert = env.expert_action()
    assert expert is not None
    env.execute_action({"action_type": "click", "index": _element_at(state, **expert["target"])})
    answer = env.expert_action()
    assert answer is not None and answer["action"] == "answer"
    env.execute_action(JSONAction(action_type="answer", text=answer["text"]))
    assert env.interaction_cache == answer["text"]
    assert env.is_successful() == 1.0
    env.close()


def test_action_conversion_drops_none_and_reads_objects() -> None:
    assert action_to_dict(JSONAction(action_type="click", index="4")) == {"action_type": "click", "index": 4}
    assert action_to_dict({"action_type": "scroll", "direction": "down", "index": None}) == {
        "action_type": "scroll",
        "direction": "down",
    }

    class Plain:  # any object with JSONAction's attributes
        action_type = "input_text"
        text = "hi"
        index = 2

    assert action_to_dict(Plain()) == {"action_type": "input_text", "text": "hi", "index": 2}
    with pytest.raises(ValueError):
        action_to_dict({"index": 1})


def test_go_home_and_state_before_reset(client: Client) -> None:
    env = AndroidWorldEnv("settings.screen_timeout", client=client)
    with pytest.raises(RuntimeError):
        env.get_state()
    state = env.reset(go_home=True)
    assert state.auxiliaries["step"] == 1  # Home was the episode's first step
    assert state.auxiliaries["last_action_error"] is None
    with pytest.raises(RuntimeError):
        env.is_successful()
    env.close()
