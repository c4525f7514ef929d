"""A SkyRL-Gym text environment (``skyrl_gym.envs.base_text_env.BaseTextEnv``) playing one
phonebench task per episode.

SkyRL builds an env per sample as ``Env(env_config, extras)``; this one reads

- from ``extras`` (the dataset row's env extras): ``task`` (required), ``seed``, ``instance``,
  ``max_turns`` — also looked up under ``extras["extra_info"]``;
- from ``env_config``: ``base_url``, ``token_env`` (the variable holding the bearer token),
  ``format``, ``max_turns``, ``system_prompt``;
- the server: ``base_url``, else ``$PHONEBENCH_URL``, else one
  :func:`~phonebench.server.shared_server` per process (SkyRL runs its envs on a thread pool in
  one process, so they share it).

``init(prompt)`` starts the episode and returns the prompt with the goal and the first screen
appended; ``step(text)`` takes the model's whole output, plays the action in it
(:func:`~phonebench.adapters.text.extract_action`) and returns the next screen as a user message.
The reward is the server's: 0 until the last step, then 1 for a success (or the ACP with
``reward="acp"`` in ``env_config``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..client import Client, StepResult
from ..server import default_client
from .text import SYSTEM_PROMPT, extract_action, first_message, render_step

__all__ = ["PhonebenchTextEnv", "register_with_skyrl"]

Messages = list[dict[str, str]]

try:  # SkyRL is not a dependency: subclass its base when it is installed
    from skyrl_gym.envs.base_text_env import BaseTextEnv as _Base

    HAVE_SKYRL = True
except ImportError:  # pragma: no cover - exercised when SkyRL is absent (as in our tests)
    HAVE_SKYRL = False

    class _Base:  # type: ignore[no-redef]
        """A stand-in with SkyRL-Gym's ``BaseTextEnv`` interface (``init``, ``step``, ``close``;
        ``turns`` and ``max_turns``), used when ``skyrl_gym`` is not installed."""

        def __init__(self) -> None:
            self.turns = 0
            self.max_turns = 1

        def init(self, prompt: Messages) -> tuple[Messages, dict[str, Any]]:
            return prompt, {}

        def step(self, action: str) -> dict[str, Any]:
            raise NotImplementedError

        def close(self) -> None:
            pass

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: object) -> None:
            self.close()


def _get(mapping: Mapping[str, Any] | None, key: str) -> Any:
    """``mapping[key]``, for dicts and OmegaConf configs alike; None when absent."""
    if mapping is None:
        return None
    try:
        return mapping.get(key)
    except AttributeError:
        return getattr(mapping, key, None)


class PhonebenchTextEnv(_Base):  # type: ignore[misc]
    """One phonebench episode as a SkyRL multi-turn text environment.

    Keyword arguments override ``env_config``/``extras`` (handy outside SkyRL): ``client``,
    ``base_url``, ``token``, ``task``, ``seed``, ``instance``, ``max_turns``, ``format``,
    ``reward``, ``system_prompt`` (None keeps :data:`~phonebench.adapters.text.SYSTEM_PROMPT`
    for an empty prompt; ``""`` adds none).
    """

    def __init__(
        self,
        env_config: Mapping[str, Any] | None = None,
        extras: Mapping[str, Any] | None = None,
        *,
        client: Client | None = None,
        base_url: str | None = None,
        token: str | None = None,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        max_turns: int | None = None,
        format: str | None = None,
        reward: str | None = None,
        system_prompt: str | None = None,
    ) -> None:
        super().__init__()
        extra_info = _get(extras, "extra_info")

        def pick(explicit: Any, key: str) -> Any:
            for value in (explicit, _get(extras, key), _get(extra_info, key), _get(env_config, key)):
                if value is not None:
                    return value
            return None

        self.task = pick(task, "task")
        if self.task is None:
            raise ValueError("PhonebenchTextEnv needs a task (extras['task'] or task=)")
        self.seed = pick(seed, "seed")
        self.instance = pick(instance, "instance")
        self.format = pick(format, "format")
        self.reward_kind = pick(reward, "reward")
        self.system_prompt = pick(system_prompt, "system_prompt")
        turns = pick(max_turns, "max_turns")
        # Until the reset says the task's step budget, allow one turn per step of any budget.
        self.max_turns = int(turns) if turns is not None else 0
        self._turn_limit_given = turns is not None

        self._owns_client = client is None
        if client is not None:
            self.client = client
        else:
            token_env = _get(env_config, "token_env")
            token = token if token is not None else (os.environ.get(token_env) if token_env else None)
            self.client = default_client(base_url or _get(env_config, "base_url"), token)
        self.session_id: str | None = None
        self.last: StepResult | None = None

    def init(self, prompt: Messages | None = None) -> tuple[Messages, dict[str, Any]]:
        """Start the episode; return the messages for the model's first turn and metadata.

        The goal and first screen are appended to the last user message of ``prompt`` (or added
        as a new user message), so a dataset prompt can carry its own instructions.
        """
        options = {"format": self.format, "reward": self.reward_kind}
        result = self.client.reset(self.task, self.seed, self.instance, None, self.session_id, **options)
        self.session_id = result.session_id
        self.last = result
        self.turns = 0
        if not self._turn_limit_given:
            self.max_turns = int(result.info.get("max_steps") or result.observation.get("max_steps") or 1)

        messages: Messages = [dict(m) for m in (prompt or [])]
        if not messages:
            system = SYSTEM_PROMPT if self.system_prompt is None else self.system_prompt
            if system:
                messages.append({"role": "system", "content": system})
        content = first_message(result)
        if messages and messages[-1].get("role") == "user":
            messages[-1]["content"] = f"{messages[-1]['content']}\n\n{content}"
        else:
            messages.append({"role": "user", "content": content})
        return messages, {"session_id": self.session_id, "task_id": self.task, "tools": result.info.get("tools", [])}

    def step(self, action: str) -> dict[str, Any]:
        """Play the action in the model's output; SkyRL's ``BaseTextEnvStepOutput`` as a dict."""
        if self.session_id is None:
            raise RuntimeError("call init() before step()")
        self.turns += 1
        played = extract_action(action)
        result = self.client.step(self.session_id, played)
        self.last = result
        # SkyRL ends the trajectory at max_turns even if the phone's budget is larger.
        done = result.done or self.turns >= self.max_turns
        observations = [] if done else [{"role": "user", "content": render_step(result)}]
        metadata = dict(result.info)
        metadata["truncated"] = result.truncated or (done and not result.done)
        return {
            "observations": observations,
            "reward": result.reward,
            "done": done,
            "metadata": metadata,
            "postprocessed_action": played,
        }

    def get_metrics(self) -> dict[str, Any]:
        """Per-episode figures SkyRL logs: turns, success, steps."""
        verdict = (self.last.verdict if self.last else None) or {}
        return {"turns": self.turns, "success": float(bool(verdict.get("success"))), "acp": verdict.get("acp", 0.0)}

    def close(self) -> None:
        """Close the server session and the env's own client (a shared server stays up for the
        process's other envs)."""
        if self.session_id is not None:
            try:
                self.client.close_session(self.session_id)
            except Exception:  # noqa: BLE001 - already gone (idle limit): nothing to free
                pass
            self.session_id = None
        if self._owns_client:
            self.client.close()


def register_with_skyrl(env_id: str = "phonebench") -> bool:
    """Register :class:`PhonebenchTextEnv` with ``skyrl_gym`` under ``env_id`` (so a dataset's
    ``env_class: phonebench`` finds it). Returns False when SkyRL is not installed."""
    if not HAVE_SKYRL:
        return False
    from skyrl_gym.envs.registration import register

    register(id=env_id, entry_point="phonebench.adapters.skyrl:PhonebenchTextEnv")
    return True
