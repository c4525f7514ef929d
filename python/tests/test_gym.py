"""The Gymnasium environment: the acceptance loop (expert play to reward 1), random play that
runs out of steps, format errors, spaces, registration and determinism."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import phonebench.gym  # noqa: F401 - registers phonebench/Phone-v0
from phonebench import Client, LocalServer
from phonebench.gym import ENV_ID, PhonebenchEnv, UnicodeText

TASK = "settings.screen_timeout"


def test_acceptance_expert_plays_a_starter_task_to_success(client: Client) -> None:
    env = PhonebenchEnv(TASK, client=client)
    obs, info = env.reset(seed=0)
    assert obs["step"] == 0 and obs["goal"] and info["task_id"] == TASK
    terminated = truncated = False
    reward = 0.0
    steps = 0
    while not (terminated or truncated):
        action = env.expert_action()
        assert action is not None, env.expert_gave_up
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        assert steps <= 40
    assert reward == 1.0
    assert terminated is True and truncated is False
    assert info["verdict"]["success"] is True
    env.close()
    assert client.health()["sessions"] == 0


def _random_action(rng: random.Random, elements: list[dict]) -> dict:
    kind = rng.choice(["tap", "tap", "scroll", "back"])
    if kind == "tap" and elements:
        return {"action_type": "click", "index": rng.randrange(len(elements))}
    if kind == "scroll":
        return {"action_type": "scroll", "direction": rng.choice(["up", "down"])}
    return {"action_type": "navigate_back"}


def test_seeded_random_play_runs_out_of_steps_with_reward_0(client: Client) -> None:
    env = PhonebenchEnv("settings.flight_mode", client=client, elements=True, max_steps=15)
    rng = random.Random(7)
    obs, info = env.reset(seed=0)
    terminated = truncated = False
    steps = 0
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(_random_action(rng, info["elements"]))
        steps += 1
    assert steps == 15
    assert reward == 0.0
    assert truncated is True and terminated is False
    assert info["verdict"]["success"] is False
    env.close()


def test_malformed_action_gives_an_error_observation(client: Client) -> None:
    env = PhonebenchEnv(TASK, client=client)
    env.reset()
    obs, reward, terminated, truncated, info = env.step("tap the blue button please")
    assert obs["last_action_error"]
    assert info["format_error"] is True
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert obs["step"] == 1
    obs, *_ = env.step("press [back]")  # the episode goes on
    assert obs["last_action_error"] == "" and obs["step"] == 2
    env.close()


def test_spaces_contain_the_observations(client: Client) -> None:
    env = PhonebenchEnv(TASK, client=client, screenshot="rgb")
    obs, _ = env.reset()
    assert obs["screenshot"].shape == (2400, 1080, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["screenshot"].max() > 0
    assert env.observation_space.contains(obs)
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    assert env.observation_space["screenshot"].shape == (2400, 1080, 3)
    assert env.action_space.contains("text [3] [café ☕ 東京]")
    assert env.action_space.contains("click [3]")
    assert not env.action_space.contains(42)
    obs, *_ = env.step("press [back]")
    assert env.observation_space.contains(obs)
    env.close()

    # Unicode anywhere: the text spaces are not limited to Gymnasium's alphanumeric charset.
    text = UnicodeText(100, min_length=0)
    assert text.contains("") and text.contains("Ünïcödé — 😀")
    assert not text.contains("x" * 101)


def test_text_env_passes_gymnasiums_checker(client: Client) -> None:
    env = PhonebenchEnv(TASK, client=client, render_mode="ansi")
    check_env(env, skip_render_check=True)
    env.reset()
    assert "[" in env.render()
    env.close()


def test_gymnasium_make_with_base_url(server: LocalServer) -> None:
    env = gymnasium.make(ENV_ID, task=TASK, base_url=server.url)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    result = env.step("press [back]")
    assert len(result) == 5
    env.close()
    # The module:id form imports phonebench.gym itself.
    env = gymnasium.make("phonebench.gym:phonebench/Phone-v0", task=TASK, base_url=server.url)
    assert env.spec is not None and env.spec.entry_point == "phonebench.gym:PhonebenchEnv"
    env.close()


def test_env_owning_its_server(binary: str) -> None:
    env = PhonebenchEnv(TASK, binary=binary)
    server = env._connection.server
    assert server is not None and server.running
    obs, _ = env.reset()
    assert obs["goal"]
    env.close()
    assert not server.running


def test_same_seed_and_actions_give_identical_observations(client: Client) -> None:
    actions = ["click [2]", {"action_type": "scroll", "direction": "down"}, "press [back]", "click [1]"]

    def play(env: PhonebenchEnv, seed: int, instance: int = 0) -> list[dict]:
        obs, _ = env.reset(seed=seed, options={"instance": instance})
        out = [obs]
        for a in actions:
            obs, *_ = env.step(a)
            out.append(obs)
        return out

    a = PhonebenchEnv("contacts.edit_phone", client=client)
    b = PhonebenchEnv("contacts.edit_phone", client=client)
    first = play(a, seed=3)
    assert play(b, seed=3) == first  # another session, same phone and trajectory
    assert play(a, seed=3) == first  # the same session reset again
    # A reset without a seed keeps the last one.
    obs, _ = a.reset()
    assert obs == first[0]
    a.close()
    b.close()


def test_reset_options_choose_task_and_view(client: Client) -> None:
    env = PhonebenchEnv(client=client)
    obs, info = env.reset(options={"task": "contacts.edit_phone", "format": "androidworld", "episode_id": "g-1"})
    assert info["task_id"] == "contacts.edit_phone" and info["episode_id"] == "g-1"
    assert obs["text"].startswith("UI element 0:")
    with pytest.raises(Exception, match="bogus"):
        env.reset(options={"task": TASK, "bogus": 1})
    env.close()


def test_reset_after_the_server_ended_the_session_starts_a_new_one(client: Client) -> None:
    env = PhonebenchEnv(TASK, client=client)
    env.reset()
    old = env.session_id
    assert old is not None
    client.close_session(old)  # as the server's idle limit would
    obs, info = env.reset()
    assert env.session_id != old and info["session_id"] == env.session_id and obs["step"] == 0
    env.close()


def test_png_screenshots_go_to_info_and_rgb_array_renders(client: Client) -> None:
    env = PhonebenchEnv(TASK, client=client, screenshot="png")
    obs, info = env.reset()
    assert "screenshot" not in obs
    assert info["screenshot_png"].startswith(b"\x89PNG")
    env.close()

    env = PhonebenchEnv(TASK, client=client, render_mode="rgb_array")
    obs, _ = env.reset()
    assert "screenshot" not in obs and env.observation_space.contains(obs)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (2400, 1080, 3)
    env.close()
    with pytest.raises(ValueError, match="rgb_array"):
        PhonebenchEnv(TASK, client=client, screenshot="png", render_mode="rgb_array")
