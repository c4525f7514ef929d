"""An AndroidWorld-shaped environment over `phonebench serve`.

Agents written for AndroidWorld's ``AsyncEnv`` (``android_world/env/interface.py``) run on the
simulated phone unchanged::

    env = AndroidWorldEnv(task="contacts.edit_phone")
    state = env.reset()
    state.ui_elements[3].text, state.pixels.shape    # UIElement list, (2400, 1080, 3) RGB
    env.execute_action(JSONAction(action_type="click", index=3))
    env.is_successful()                              # 1.0 / 0.0 once the episode is over

``execute_action`` takes an ``android_world.env.json_action.JSONAction``, any object with those
attributes, a dataclass, or a dict; ``None`` fields are dropped, as AndroidWorld's own wire
form does. ``index`` is a position in ``state.ui_elements``, as in AndroidWorld. The episode's
goal is :attr:`AndroidWorldEnv.goal`; the task's success comes from the server's checks
(:meth:`AndroidWorldEnv.is_successful`, :attr:`AndroidWorldEnv.verdict`), not from a task object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .client import Client, StepResult, decode_rgb
from .server import Connection

__all__ = ["JSON_ACTION_FIELDS", "AndroidWorldEnv", "BoundingBox", "State", "UIElement", "action_to_dict"]

JSON_ACTION_FIELDS = (
    "action_type",
    "index",
    "x",
    "y",
    "text",
    "direction",
    "goal_status",
    "app_name",
    "keycode",
    "clear_text",
)
"""AndroidWorld's ``JSONAction`` fields (``android_world/env/json_action.py``)."""


@dataclass(frozen=True)
class BoundingBox:
    """AndroidWorld's bounding box: pixel (or normalised) edges."""

    x_min: float
    x_max: float
    y_min: float
    y_max: float

    @property
    def center(self) -> tuple[float, float]:
        return (self.x_min + self.x_max) / 2.0, (self.y_min + self.y_max) / 2.0

    @property
    def width(self) -> float:
        return self.x_max - self.x_min

    @property
    def height(self) -> float:
        return self.y_max - self.y_min

    @property
    def area(self) -> float:
        return self.width * self.height


@dataclass
class UIElement:
    """AndroidWorld's ``UIElement`` (``env/representation_utils.py``): every field optional."""

    text: str | None = None
    content_description: str | None = None
    class_name: str | None = None
    bbox: BoundingBox | None = None
    bbox_pixels: BoundingBox | None = None
    hint_text: str | None = None
    is_checked: bool | None = None
    is_checkable: bool | None = None
    is_clickable: bool | None = None
    is_editable: bool | None = None
    is_enabled: bool | None = None
    is_focused: bool | None = None
    is_focusable: bool | None = None
    is_long_clickable: bool | None = None
    is_scrollable: bool | None = None
    is_selected: bool | None = None
    is_visible: bool | None = None
    package_name: str | None = None
    resource_name: str | None = None
    tooltip: str | None = None
    resource_id: str | None = None
    metadata: dict[str, Any] | None = None

    @classmethod
    def from_server(cls, element: Mapping[str, Any], screen: tuple[int, int]) -> UIElement:
        """Build from one of the server's ``elements`` (``bounds`` is ``[x1, y1, x2, y2]``)."""
        width, height = screen
        pixels = bbox = None
        bounds = element.get("bounds")
        if bounds and len(bounds) == 4:
            x1, y1, x2, y2 = bounds
            pixels = BoundingBox(x1, x2, y1, y2)
            if width and height:
                bbox = BoundingBox(x1 / width, x2 / width, y1 / height, y2 / height)
        return cls(
            # AndroidWorld reports absent text as None, not "".
            text=element.get("text") or None,
            content_description=element.get("content_desc") or None,
            class_name=element.get("class_name") or None,
            bbox=bbox,
            bbox_pixels=pixels,
            hint_text=element.get("hint") or None,
            is_checked=element.get("checked"),
            is_checkable=element.get("checkable"),
            is_clickable=element.get("clickable"),
            is_editable=element.get("editable"),
            is_enabled=element.get("enabled"),
            is_focused=element.get("focused"),
            is_focusable=element.get("focusable"),
            is_long_clickable=element.get("long_clickable"),
            is_scrollable=element.get("scrollable"),
            is_selected=element.get("selected"),
            # The server lists what is on screen, as AndroidWorld's controller does
            # (exclude_invisible_elements=True).
            is_visible=element.get("visible", True),
            package_name=element.get("package") or None,
            # The server's resource_id is the full "pkg:id/name", AndroidWorld's resource_name.
            resource_name=element.get("resource_id") or None,
        )


@dataclass(frozen=True)
class State:
    """AndroidWorld's ``State``: the screen's pixels, the raw forest (None here: there is no
    accessibility proto), the UI elements, and auxiliaries (``goal``, ``step``, ``message``,
    ``last_action_error``, ``text``, ``info``)."""

    pixels: np.ndarray
    forest: Any
    ui_elements: list[UIElement]
    auxiliaries: dict[str, Any] = field(default_factory=dict)


def action_to_dict(action: Any) -> dict[str, Any]:
    """A JSONAction (object, dataclass or dict) as the JSON object the server reads, ``None``
    fields dropped."""
    if isinstance(action, Mapping):
        values = dict(action)
    elif dataclasses.is_dataclass(action) and not isinstance(action, type):
        values = {f.name: getattr(action, f.name) for f in dataclasses.fields(action)}
    else:
        values = {name: getattr(action, name, None) for name in JSON_ACTION_FIELDS}
    values = {k: v for k, v in values.items() if v is not None}
    if "index" in values:  # AndroidWorld allows "3" as well as 3
        values["index"] = int(values["index"])
    if "action_type" not in values:
        raise ValueError(f"not a JSONAction (no action_type): {action!r}")
    return values


class AndroidWorldEnv:
    """AndroidWorld's ``AsyncEnv`` surface over one server session.

    Server: ``client``, or ``base_url``/``token``, or neither to start an owned
    :class:`~phonebench.LocalServer`. The episode is ``task`` at ``seed``/``instance``
    (``reset`` starts it over); ``max_steps`` overrides the task's budget.
    """

    def __init__(
        self,
        task: str | None = None,
        *,
        seed: int | None = None,
        instance: int = 0,
        client: Client | None = None,
        base_url: str | None = None,
        token: str | None = None,
        binary: str | None = None,
        suite: str | None = None,
        max_steps: int | None = None,
        som: bool = False,
    ) -> None:
        self.task = task
        self.seed = seed
        self.instance = instance
        self._connection = Connection(client, base_url, token, binary, suite)
        self.client = self._connection.client
        self._options = {
            "format": "androidworld",
            "elements": True,
            "screenshot": "rgb",
            "som": som or None,
            "max_steps": max_steps,
        }
        self.session_id: str | None = None
        self.last: StepResult | None = None
        self._state: State | None = None
        self.interaction_cache = ""
        """The agent's last ``answer`` text (AndroidWorld tasks read answers from here)."""

    # -- AsyncEnv

    def reset(self, go_home: bool = False) -> State:
        """Start the task's episode. ``go_home`` then presses Home, as AndroidWorld's reset
        does — here that is the episode's first step (it counts against the budget)."""
        result = self.client.reset(self.task, self.seed, self.instance, None, self.session_id, **self._options)
        self.session_id = result.session_id
        self.interaction_cache = ""
        self._update(result)
        if go_home:
            self.execute_action({"action_type": "navigate_home"})
        return self.get_state()

    def get_state(self, wait_to_stabilize: bool = False) -> State:
        """The current screen. The simulated phone is always stable after an action, so
        ``wait_to_stabilize`` changes nothing (and costs no time)."""
        if self._state is None:
            raise RuntimeError("call reset() before get_state()")
        return self._state

    def execute_action(self, action: Any) -> None:
        """Play a JSONAction (object, dataclass or dict); the new screen is :meth:`get_state`."""
        if self.session_id is None:
            raise RuntimeError("call reset() before execute_action()")
        values = action_to_dict(action)
        if self.done and values["action_type"] == "status":
            # An AndroidWorld agent answers, then says `status`. Here `answer` already ends the
            # episode (the server reads the answer as final), and AndroidWorld's own `status`
            # does nothing to the phone: it is a no-op rather than a step after the end.
            return
        if values["action_type"] == "answer":
            self.interaction_cache = str(values.get("text", ""))
        self._update(self.client.step(self.session_id, values))

    def close(self) -> None:
        """Close the session, and the owned client and server."""
        if self.session_id is not None:
            try:
                self.client.close_session(self.session_id)
            except Exception:  # noqa: BLE001 - already gone: nothing left to free
                pass
            self.session_id = None
        self._connection.close()

    def __enter__(self) -> AndroidWorldEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def expert_action(self) -> dict[str, Any] | None:
        """The task's reference solution's next action for the current screen (canonical JSON,
        not a JSONAction), or None when the expert gave up."""
        if self.session_id is None:
            raise RuntimeError("call reset() before expert_action()")
        action = self.client.expert(self.session_id).get("action")
        return dict(action) if action is not None else None

    # -- what AndroidWorld's task objects would say

    @property
    def goal(self) -> str:
        return self.last.goal if self.last else ""

    @property
    def done(self) -> bool:
        return bool(self.last and self.last.done)

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The verdict once the episode is over: ``success``, ``acp`` and each criterion."""
        return self.last.verdict if self.last else None

    def is_successful(self) -> float:
        """1.0 if the finished episode succeeded, else 0.0 (AndroidWorld's ``is_successful``).

        Raises if the episode is still running: the verdict is read when it ends (an
        AndroidWorld agent ends it with ``{"action_type": "status", "goal_status": ...}``).
        """
        if self.verdict is None:
            raise RuntimeError("the episode is not over: end it with a status action first")
        return 1.0 if self.verdict.get("success") else 0.0

    @property
    def logical_screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        if self._state is None:
            return (1080, 2400)
        height, width = self._state.pixels.shape[:2]
        return (width, height)

    # -- internals

    def _update(self, result: StepResult) -> None:
        self.last = result
        o = result.observation
        shot = o.get("screenshot")
        pixels = decode_rgb(shot) if shot else np.zeros((0, 0, 3), dtype=np.uint8)
        screen = (pixels.shape[1], pixels.shape[0])
        # A JSONAction's index is a position in ui_elements: order by the server's index.
        raw = sorted(o.get("elements") or [], key=lambda e: int(e.get("index", 0)))
        elements = [UIElement.from_server(e, screen) for e in raw]
        self._state = State(
            pixels=pixels,
            forest=None,
            ui_elements=elements,
            auxiliaries={
                "goal": result.goal,
                "step": o.get("step"),
                "message": o.get("message"),
                "last_action_error": o.get("last_action_error"),
                "text": o.get("text"),
                "info": result.info,
            },
        )
