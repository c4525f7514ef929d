"""A Gymnasium environment over `phonebench serve`.

Importing this module registers ``phonebench/Phone-v0``::

    import gymnasium, phonebench.gym
    env = gymnasium.make("phonebench/Phone-v0", task="settings.flight_mode")
    # or without the import: gymnasium.make("phonebench.gym:phonebench/Phone-v0", task=...)

Actions are what an agent writes: text in any syntax the server reads (``"click [3]"``, JSON as a
string) — the action space is a :class:`UnicodeText` — and, passed through unchanged, dicts such
as AndroidWorld ``JSONAction`` objects (``{"action_type": "click", "index": 3}``) or canonical
actions (``{"action": "tap", "target": {"index": 3}}``). An action that does not parse is the
agent's format error, not an exception: the observation's ``last_action_error`` says why and
``info["format_error"]`` is true.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces

from .client import Client, PhonebenchError, StepResult, decode_rgb
from .server import Connection

__all__ = ["ENV_ID", "PhonebenchEnv", "UnicodeText"]

ENV_ID = "phonebench/Phone-v0"

MAX_TEXT = 1 << 22
"""Longest text an observation's text fields may hold (4 Mi characters; screens are far shorter)."""
MAX_ACTION = 65536
"""Longest action text, as the server's schema allows."""
MAX_STEP = 1 << 31


class UnicodeText(spaces.Text):
    """A :class:`gymnasium.spaces.Text` that contains any Unicode string within its length bounds.

    Gymnasium's own ``Text.contains`` accepts only characters of its charset (alphanumerics by
    default); screens, goals and agents' actions hold any character. ``sample()`` still draws
    from the charset.
    """

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


Screenshot = Literal["rgb", "png"]


class PhonebenchEnv(gymnasium.Env[dict[str, Any], Any]):
    """One phonebench session as a Gymnasium environment.

    Server: pass ``client`` (a :class:`~phonebench.Client`, not closed by the env), or
    ``base_url``/``token``, or neither to start a :class:`~phonebench.LocalServer` owned by the
    env (``binary``, ``suite``, ``server_args`` go to it).

    Episode: ``task`` (None is a free phone), ``instance`` and ``seed`` are defaults that
    ``reset(seed=..., options={"task": ..., "instance": ..., "episode_id": ...})`` overrides;
    any other ``options`` key is a server reset option for that episode. A reset without a seed
    reuses the last seed (so ``reset()`` after ``reset(seed=3)`` replays seed 3's phone).

    Observation (a ``Dict`` space): ``text`` (the screen in ``format``), ``goal``, ``step``,
    ``message`` (the simulated user's reply, an MCP result, a rejection: ``""`` when none),
    ``last_action_error`` (``""`` when none), and ``screenshot`` — a ``(H, W, 3)`` uint8 array —
    when ``screenshot="rgb"``. With ``screenshot="png"`` the PNG bytes go to
    ``info["screenshot_png"]``; with ``elements=True`` the indexed elements go to
    ``info["elements"]``. ``info`` is otherwise the server's (``session_id``, ``task_id``,
    ``verdict`` at the end, ``tools`` of an MCP task after reset, ...).

    ``screen_size`` (width, height) shapes the screenshot ``Box``: the server does not announce
    its screen size before the first reply, and a reply of another size raises ``ValueError``.

    ``terminated`` is ``done and not truncated``; ``truncated`` means the step budget or the time
    limit ended the episode. The reward is 0 until the last step (``reward="success"`` pays 1 for
    a success, ``"acp"`` the share of criteria passed).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"]}

    def __init__(
        self,
        task: str | None = None,
        *,
        instance: int = 0,
        seed: int | None = None,
        client: Client | None = None,
        base_url: str | None = None,
        token: str | None = None,
        binary: str | None = None,
        suite: str | None = None,
        server_args: tuple[str, ...] | list[str] = (),
        format: str = "sphinx-tree",
        screenshot: Screenshot | None = None,
        som: bool = False,
        elements: bool = False,
        max_steps: int | None = None,
        reward: Literal["success", "acp"] | None = None,
        format_errors: Literal["continue", "end"] | None = None,
        stop_on_repetition: bool | None = None,
        screen_size: tuple[int, int] = (1080, 2400),
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        if render_mode == "rgb_array" and screenshot == "png":
            # One reply carries one screenshot format: rendering needs raw pixels.
            raise ValueError("render_mode='rgb_array' needs screenshot='rgb' or None, not 'png'")
        self.render_mode = render_mode
        self.task = task
        self.instance = instance
        self._seed = seed
        self._screenshot = screenshot
        self.screen_size = screen_size

        self._connection = Connection(client, base_url, token, binary, suite, server_args=server_args)
        self.client = self._connection.client

        # The session's defaults, sent with every reset (the server keeps them for its steps).
        self._options: dict[str, Any] = {
            "format": format,
            "screenshot": screenshot,
            "som": som or None,
            "elements": elements or None,
            "max_steps": max_steps,
            "reward": reward,
            "format_errors": format_errors,
            "stop_on_repetition": stop_on_repetition,
        }
        # rgb_array rendering needs pixels every step even when the observation has none
        # (an rgb screenshot costs the server about half a second per step at 1080x2400).
        self._view: dict[str, Any] = {}
        if render_mode == "rgb_array" and screenshot != "rgb":
            self._view = {"screenshot": "rgb"}

        width, height = screen_size
        text = UnicodeText(MAX_TEXT, min_length=0)
        fields: dict[str, spaces.Space[Any]] = {
            "text": text,
            "goal": text,
            "step": spaces.Discrete(MAX_STEP),
            "message": text,
            "last_action_error": text,
        }
        self._screen_shape = (height, width, 3)
        if screenshot == "rgb":
            fields["screenshot"] = spaces.Box(0, 255, shape=self._screen_shape, dtype=np.uint8)
        self.observation_space = spaces.Dict(fields)
        self.action_space = UnicodeText(MAX_ACTION, min_length=0)

        self.session_id: str | None = None
        self.last: StepResult | None = None
        self.expert_gave_up: str | None = None
        self._reset_info: dict[str, Any] = {}
        self._pixels: np.ndarray | None = None

    # -- Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._seed = seed
        opts = dict(options or {})
        task = opts.pop("task", self.task)
        instance = opts.pop("instance", self.instance)
        episode_id = opts.pop("episode_id", None)
        reset_options = {**self._options, **opts}
        if self._view:
            reset_options.update(self._view)
        try:
            result = self.client.reset(task, self._seed, instance, episode_id, self.session_id, **reset_options)
        except PhonebenchError as e:
            # The session ended on the server (idle limit): start a new one.
            if e.status != 404 or self.session_id is None:
                raise
            self.session_id = None
            result = self.client.reset(task, self._seed, instance, episode_id, None, **reset_options)
        self.session_id = result.session_id
        return self._convert(result)

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.session_id is None:
            raise RuntimeError("call reset() before step()")
        result = self.client.step(self.session_id, _plain(action), **self._view)
        obs, info = self._convert(result)
        return obs, result.reward, result.terminated, result.truncated, info

    def render(self) -> Any:
        """``ansi``: the screen text; ``rgb_array``: the screen as an ``(H, W, 3)`` array."""
        if self.render_mode == "ansi":
            return self.last.text if self.last else ""
        if self.render_mode == "rgb_array":
            return self._pixels
        return None

    def close(self) -> None:
        """Close the server session, the env's own client and its own server (if any)."""
        if self.session_id is not None:
            try:
                self.client.close_session(self.session_id)
            except (PhonebenchError, OSError):
                pass  # already gone (idle limit, server stopped): nothing left to free
            self.session_id = None
        self._connection.close()
        super().close()

    # -- helpers

    def expert_action(self) -> dict[str, Any] | None:
        """The task's reference solution's next action for the current screen (canonical JSON),
        or None when the expert gave up (why is in :attr:`expert_gave_up`)."""
        if self.session_id is None:
            raise RuntimeError("call reset() before expert_action()")
        reply = self.client.expert(self.session_id)
        self.expert_gave_up = reply.get("gave_up")
        return reply.get("action")

    @property
    def tools(self) -> list[dict[str, Any]]:
        """An MCP task's tools (name, description, input schema), from the reset reply."""
        return list(self._reset_info.get("tools") or [])

    def _convert(self, result: StepResult) -> tuple[dict[str, Any], dict[str, Any]]:
        self.last = result
        o = result.observation
        obs: dict[str, Any] = {
            "text": o.get("text", ""),
            "goal": o.get("goal") or "",
            "step": int(o.get("step", 0)),
            "message": o.get("message") or "",
            "last_action_error": o.get("last_action_error") or "",
        }
        info = dict(result.info)
        shot = o.get("screenshot")
        if shot is not None:
            if shot.get("format") == "rgb":
                pixels = decode_rgb(shot)
                if self._screenshot == "rgb":
                    expected = self._screen_shape
                    if pixels.shape != expected:
                        raise ValueError(
                            f"the server's screen is {pixels.shape[1]}x{pixels.shape[0]}, the observation "
                            f"space {expected[1]}x{expected[0]}: pass screen_size=({pixels.shape[1]}, "
                            f"{pixels.shape[0]})"
                        )
                    obs["screenshot"] = pixels
                self._pixels = pixels
            else:
                info["screenshot_png"] = base64.b64decode(shot["data"])
        if "elements" in o:
            info["elements"] = o["elements"]
        if o.get("step", 0) == 0:
            self._reset_info = info
        return obs, info


def _plain(action: Any) -> Any:
    """Actions go to the server as JSON: NumPy strings (what ``Text.sample`` and vector envs
    may hand over) become ``str``; dicts and text pass through."""
    if isinstance(action, np.str_):
        return str(action)
    return action


if ENV_ID not in gymnasium.registry:  # a re-import must not warn about overriding it
    gymnasium.register(id=ENV_ID, entry_point="phonebench.gym:PhonebenchEnv")
