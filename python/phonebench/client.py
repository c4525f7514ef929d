"""Clients of `phonebench serve` (docs/env-server.md): HTTP (sync and async) and WebSocket.

Every reply that is not a success becomes a :class:`PhonebenchError` carrying the server's
`{"error", "code"}` body, so callers never parse error JSON themselves. An action the agent got
wrong is *not* an error: it comes back as a normal :class:`StepResult` whose
``observation["last_action_error"]`` says what was wrong (``info["format_error"]`` is true).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import httpx

if TYPE_CHECKING:  # websockets is the optional `ws` extra: imported only when a socket opens
    from websockets.asyncio.client import ClientConnection as AsyncConnection
    from websockets.sync.client import ClientConnection

__all__ = [
    "AsyncClient",
    "AsyncWebSocketSession",
    "Client",
    "PhonebenchError",
    "Session",
    "StepResult",
    "WebSocketSession",
    "decode_rgb",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds an HTTP request may take (a step is well under a millisecond of phone time, but an
MCP task's tool call or a large RGB screenshot can take longer)."""

URL_ENV = "PHONEBENCH_URL"
TOKEN_ENV = "PHONEBENCH_TOKEN"


class PhonebenchError(Exception):
    """A request the server refused, with the HTTP status and the server's error code.

    ``status`` is None for WebSocket errors (they arrive as ``{"type": "error"}`` messages on an
    open connection, not as HTTP statuses).
    """

    def __init__(self, status: int | None, code: str | None, message: str) -> None:
        super().__init__(f"{status if status is not None else 'ws'} {code or ''}: {message}".strip())
        self.status = status
        self.code = code
        self.message = message


@dataclass
class StepResult:
    """One reply of `/reset` or `/step` (and a WebSocket `observation`)."""

    observation: dict[str, Any]
    reward: float
    done: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> StepResult:
        """Build from the server's JSON reply."""
        return cls(
            observation=dict(body["observation"]),
            reward=float(body.get("reward") or 0.0),
            done=bool(body.get("done", False)),
            truncated=bool(body.get("truncated", False)),
            info=dict(body.get("info") or {}),
        )

    @property
    def terminated(self) -> bool:
        """Gymnasium's `terminated`: over, and not by the step budget or time limit."""
        return self.done and not self.truncated

    @property
    def session_id(self) -> str:
        return str(self.info.get("session_id", ""))

    @property
    def text(self) -> str:
        """The screen in the session's format; element indexes are what actions take."""
        return str(self.observation.get("text", ""))

    @property
    def goal(self) -> str:
        return str(self.observation.get("goal") or "")

    @property
    def message(self) -> str | None:
        """Feedback besides the screen: the user's reply, an MCP result, a rejection."""
        return self.observation.get("message")

    @property
    def last_action_error(self) -> str | None:
        return self.observation.get("last_action_error")

    @property
    def format_error(self) -> bool:
        return bool(self.info.get("format_error", False))

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The verdict once the episode is over (success, ACP, each criterion), else None."""
        return self.info.get("verdict")

    @property
    def elements(self) -> list[dict[str, Any]]:
        """The indexed elements, when the session asked for them (``elements=True``)."""
        return list(self.observation.get("elements") or [])


def decode_rgb(screenshot: Mapping[str, Any]) -> Any:
    """An ``rgb`` screenshot (``{"format": "rgb", "width", "height", "data"}``) as a NumPy
    ``(height, width, 3)`` uint8 array, without an image library."""
    import numpy as np  # numpy is the `gym` extra: only needed by callers that want pixels

    if screenshot.get("format") != "rgb":
        raise ValueError(f"not an rgb screenshot: format {screenshot.get('format')!r}")
    width, height = int(screenshot["width"]), int(screenshot["height"])
    raw = base64.b64decode(screenshot["data"])
    if len(raw) != width * height * 3:
        raise ValueError(f"rgb screenshot of {len(raw)} bytes is not {width}x{height}x3")
    return np.frombuffer(raw, dtype=np.uint8).reshape(height, width, 3)


# ---------------------------------------------------------------------------------------------
# Request bodies, shared by the HTTP and WebSocket clients so both send the same thing.


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def reset_body(
    task: str | None = None,
    seed: int | None = None,
    instance: int | None = None,
    episode_id: str | None = None,
    session_id: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of `/reset` (fields left None are left out, so the server's defaults hold)."""
    body = _drop_none(
        {"task": task, "seed": seed, "instance": instance, "episode_id": episode_id, "session_id": session_id}
    )
    opts = _drop_none(options or {})
    if opts:
        body["options"] = opts
    return body


def step_body(
    action: Any,
    session_id: str | None = None,
    request_id: str | None = None,
    timeout_s: float | None = None,
    view: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of `/step`. ``view`` holds this step's ``screenshot``/``som``/``elements``."""
    body: dict[str, Any] = {"action": action}
    body.update(_drop_none({"session_id": session_id, "request_id": request_id, "timeout_s": timeout_s}))
    opts = _drop_none(view or {})
    if opts:
        body["options"] = opts
    return body


def _error_of(response: httpx.Response) -> PhonebenchError:
    try:
        body = response.json()
        return PhonebenchError(response.status_code, body.get("code"), str(body.get("error", body)))
    except (ValueError, AttributeError):  # not JSON (a proxy's page, an empty 502): keep the text
        return PhonebenchError(response.status_code, None, response.text.strip() or response.reason_phrase)


def _checked(response: httpx.Response) -> httpx.Response:
    if response.is_success:
        return response
    raise _error_of(response)


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _base_url(base_url: str | None) -> str:
    url = base_url or os.environ.get(URL_ENV)
    if not url:
        raise ValueError(f"no server URL: pass base_url or set ${URL_ENV} (or start a LocalServer)")
    return url.rstrip("/")


def ws_url(base_url: str) -> str:
    """The `/ws` URL of a server's HTTP base URL."""
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base[len("https://") :] + "/ws"
    if base.startswith("http://"):
        return "ws://" + base[len("http://") :] + "/ws"
    return base + "/ws"


# ---------------------------------------------------------------------------------------------
# HTTP


class Client:
    """A synchronous HTTP client of one `phonebench serve`.

    ``base_url`` defaults to ``$PHONEBENCH_URL`` and ``token`` to ``$PHONEBENCH_TOKEN``. The
    connection pool is reused across calls; close it with :meth:`close` or a ``with`` block.
    Sessions are server-side: :meth:`session` wraps one id in a :class:`Session`.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = _base_url(base_url)
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.timeout = timeout
        self._http = httpx.Client(
            base_url=self.base_url, headers=_headers(self.token), timeout=timeout, transport=transport
        )

    # -- plumbing

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Send a request; a non-2xx reply raises :class:`PhonebenchError`."""
        return _checked(self._http.request(method, path, **kwargs))

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        return cast("dict[str, Any]", self.request(method, path, **kwargs).json())

    # -- routes

    def health(self) -> dict[str, Any]:
        """``{"status": "healthy", "sessions": N, "max_sessions": M}`` (needs no token)."""
        return self._json("GET", "/health")

    def metadata(self) -> dict[str, Any]:
        """Name, version, suite, task count and apps."""
        return self._json("GET", "/metadata")

    def schema(self) -> dict[str, Any]:
        """JSON schemas of the action, the observation and the state."""
        return self._json("GET", "/schema")

    def tasks(self, pattern: str | None = None) -> list[dict[str, Any]]:
        """The served suite's tasks (``{"id", "category", "apps"}``), optionally filtered by a glob.

        The whole reply (with the suite's name and seed) is :meth:`task_list`.
        """
        return list(self.task_list(pattern)["tasks"])

    def task_list(self, pattern: str | None = None) -> dict[str, Any]:
        """The raw `/tasks` reply: ``{"suite", "seed", "tasks": [...]}``."""
        return self._json("GET", "/tasks", params=_drop_none({"pattern": pattern}))

    def reset(
        self,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> StepResult:
        """Start an episode of ``task`` (or a free phone without one) and return its first reply.

        Without ``session_id`` the server opens a new session (its id is in
        ``result.session_id``); with one, that session starts over. ``options`` are the reset
        options of the protocol (``format``, ``screenshot``, ``som``, ``elements``,
        ``max_steps``, ``format_errors``, ``stop_on_repetition``, ``reward``, ``app``); the
        server refuses unknown ones (422), so a misspelt option is never silently ignored.
        """
        body = reset_body(task, seed, instance, episode_id, session_id, options)
        return StepResult.from_json(self._json("POST", "/reset", json=body))

    def step(
        self,
        session_id: str,
        action: Any,
        *,
        request_id: str | None = None,
        timeout_s: float | None = None,
        **view: Any,
    ) -> StepResult:
        """Play one action: agent text (``"click [3]"``), a JSONAction dict or canonical JSON.

        ``view`` overrides the session's ``screenshot``/``som``/``elements`` for this step.
        """
        body = step_body(action, session_id, request_id, timeout_s, view)
        return StepResult.from_json(self._json("POST", "/step", json=body))

    def state(self, session_id: str) -> dict[str, Any]:
        """The session's state: task, step count, whether it is over, and the verdict."""
        return self._json("GET", "/state", params={"session_id": session_id})

    def expert(self, session_id: str) -> dict[str, Any]:
        """``{"action", "gave_up"}``: the reference solution's next action for the current screen."""
        return self._json("POST", "/expert", json={"session_id": session_id})

    def screenshot(self, session_id: str, som: bool = False) -> bytes:
        """The current (or last) screen as PNG bytes, with set-of-marks when ``som``."""
        params = {"session_id": session_id}
        if som:
            params["som"] = "true"
        return self.request("GET", "/screenshot", params=params).content

    def close_session(self, session_id: str) -> dict[str, Any]:
        """End a session and free its place: ``{"closed": id}``."""
        return self._json("POST", "/close", json={"session_id": session_id})

    def session(self, session_id: str | None = None) -> Session:
        """A :class:`Session` on this client (a new one at its first :meth:`Session.reset`)."""
        return Session(self, session_id)

    def close(self) -> None:
        """Close the HTTP connections (sessions on the server stay until closed or idle)."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Session:
    """One server session: the id is remembered, so calls need only the action.

    A second :meth:`reset` starts over in the same session (the server keeps its place).
    Leaving a ``with`` block closes the session.
    """

    def __init__(self, client: Client, session_id: str | None = None) -> None:
        self.client = client
        self.id = session_id
        self.last: StepResult | None = None

    def _id(self) -> str:
        if self.id is None:
            raise RuntimeError("the session has not started: call reset() first")
        return self.id

    def reset(
        self,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        **options: Any,
    ) -> StepResult:
        """Start (or start over) an episode; see :meth:`Client.reset`."""
        result = self.client.reset(task, seed, instance, episode_id, self.id, **options)
        self.id = result.session_id
        self.last = result
        return result

    def step(self, action: Any, **kwargs: Any) -> StepResult:
        """Play one action; see :meth:`Client.step`."""
        result = self.client.step(self._id(), action, **kwargs)
        self.last = result
        return result

    def state(self) -> dict[str, Any]:
        return self.client.state(self._id())

    def expert(self) -> dict[str, Any]:
        return self.client.expert(self._id())

    def screenshot(self, som: bool = False) -> bytes:
        return self.client.screenshot(self._id(), som)

    def close(self) -> None:
        """Close the server session (a session already gone is not an error)."""
        if self.id is None:
            return
        try:
            self.client.close_session(self.id)
        except PhonebenchError as e:
            if e.status != 404:
                raise
        self.id = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """The asyncio twin of :class:`Client` (httpx.AsyncClient), for agent loops that must not
    block their event loop (verl, AReaL, benchmarks). Same methods, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_connections: int = 256,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = _base_url(base_url)
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.timeout = timeout
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=_headers(self.token), timeout=timeout, limits=limits, transport=transport
        )

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Send a request; a non-2xx reply raises :class:`PhonebenchError`."""
        return _checked(await self._http.request(method, path, **kwargs))

    async def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        return cast("dict[str, Any]", (await self.request(method, path, **kwargs)).json())

    async def health(self) -> dict[str, Any]:
        return await self._json("GET", "/health")

    async def metadata(self) -> dict[str, Any]:
        return await self._json("GET", "/metadata")

    async def schema(self) -> dict[str, Any]:
        return await self._json("GET", "/schema")

    async def tasks(self, pattern: str | None = None) -> list[dict[str, Any]]:
        body = await self._json("GET", "/tasks", params=_drop_none({"pattern": pattern}))
        return list(body["tasks"])

    async def reset(
        self,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        session_id: str | None = None,
        **options: Any,
    ) -> StepResult:
        body = reset_body(task, seed, instance, episode_id, session_id, options)
        return StepResult.from_json(await self._json("POST", "/reset", json=body))

    async def step(
        self,
        session_id: str,
        action: Any,
        *,
        request_id: str | None = None,
        timeout_s: float | None = None,
        **view: Any,
    ) -> StepResult:
        body = step_body(action, session_id, request_id, timeout_s, view)
        return StepResult.from_json(await self._json("POST", "/step", json=body))

    async def state(self, session_id: str) -> dict[str, Any]:
        return await self._json("GET", "/state", params={"session_id": session_id})

    async def expert(self, session_id: str) -> dict[str, Any]:
        return await self._json("POST", "/expert", json={"session_id": session_id})

    async def screenshot(self, session_id: str, som: bool = False) -> bytes:
        params = {"session_id": session_id}
        if som:
            params["som"] = "true"
        return (await self.request("GET", "/screenshot", params=params)).content

    async def close_session(self, session_id: str) -> dict[str, Any]:
        return await self._json("POST", "/close", json={"session_id": session_id})

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


# ---------------------------------------------------------------------------------------------
# WebSocket: one connection is one session (OpenEnv's messages).


def _ws_reply(raw: str | bytes, expect: str) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(raw)
    kind = reply.get("type")
    if kind == "error":
        data = reply.get("data") or {}
        raise PhonebenchError(None, data.get("code"), str(data.get("message", data)))
    if kind != expect:
        raise PhonebenchError(None, "UNEXPECTED_REPLY", f"expected a `{expect}` message, got {reply!r:.300}")
    return reply


def _ws_connect_args(token: str | None, max_size: int | None, open_timeout: float) -> dict[str, Any]:
    # max_size=None: an `rgb` screenshot of a 1080x2400 screen is ~10 MB of base64, far over the
    # library's 1 MiB default for incoming messages.
    return {
        "additional_headers": _headers(token),
        "max_size": max_size,
        "open_timeout": open_timeout,
        # The server's replies are immediate; keepalive pings only matter to idle connections,
        # which the server ends itself after its idle limit.
        "ping_interval": None,
    }


class WebSocketSession:
    """One session over `/ws` (synchronous, ``websockets.sync``): the connection is the session.

    Methods mirror :class:`Session`; a server ``error`` message raises :class:`PhonebenchError`
    (status None) and the connection stays usable. :meth:`exchange` sends any message and
    returns the reply as it is, for probing the protocol.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_size: int | None = None,
    ) -> None:
        from websockets.sync.client import connect

        self.base_url = _base_url(base_url)
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.timeout = timeout
        # Entered as a context manager (closed in close()): websockets >= 17.1 deprecates
        # using connect()'s return value directly, and older versions return the same object.
        self._ws: ClientConnection | None = connect(
            ws_url(self.base_url), **_ws_connect_args(self.token, max_size, timeout)
        ).__enter__()
        self.last: StepResult | None = None

    def _conn(self) -> ClientConnection:
        if self._ws is None:
            raise RuntimeError("the WebSocket session is closed")
        return self._ws

    def exchange(self, message: Mapping[str, Any] | str) -> dict[str, Any]:
        """Send one message (a dict, or raw text sent verbatim) and return the reply, errors included."""
        ws = self._conn()
        ws.send(message if isinstance(message, str) else json.dumps(message))
        return cast("dict[str, Any]", json.loads(ws.recv(timeout=self.timeout)))

    def _call(self, message: Mapping[str, Any], expect: str) -> dict[str, Any]:
        ws = self._conn()
        ws.send(json.dumps(message))
        return _ws_reply(ws.recv(timeout=self.timeout), expect)

    def reset(
        self,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        **options: Any,
    ) -> StepResult:
        """Start (or start over) this connection's episode; see :meth:`Client.reset`."""
        data = reset_body(task, seed, instance, episode_id, None, options)
        self.last = StepResult.from_json(self._call({"type": "reset", "data": data}, "observation")["data"])
        return self.last

    def step(
        self, action: Any, *, request_id: str | None = None, timeout_s: float | None = None, **view: Any
    ) -> StepResult:
        """Play one action; see :meth:`Client.step`."""
        data = step_body(action, None, request_id, timeout_s, view)
        self.last = StepResult.from_json(self._call({"type": "step", "data": data}, "observation")["data"])
        return self.last

    def state(self) -> dict[str, Any]:
        return cast("dict[str, Any]", self._call({"type": "state"}, "state")["data"])

    def expert(self) -> dict[str, Any]:
        return cast("dict[str, Any]", self._call({"type": "expert"}, "expert")["data"])

    @property
    def session_id(self) -> str | None:
        """The server's id of this connection's session (known after the first reset)."""
        return self.last.session_id if self.last else None

    def close(self) -> None:
        """Say `close` (the server frees the place) and close the connection. Idempotent."""
        ws, self._ws = self._ws, None
        if ws is None:
            return
        try:
            ws.send(json.dumps({"type": "close"}))
            _ws_reply(ws.recv(timeout=self.timeout), "closed")
        except Exception:  # noqa: BLE001 - already closed by the server or the network: nothing to free
            pass
        finally:
            ws.close()

    def __enter__(self) -> WebSocketSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncWebSocketSession:
    """The asyncio twin of :class:`WebSocketSession`.

    Open it with ``session = await AsyncWebSocketSession.connect(url)``; ``async with session``
    closes it at the end.
    """

    def __init__(self, ws: AsyncConnection, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._ws: AsyncConnection | None = ws
        self.timeout = timeout
        self.last: StepResult | None = None

    @classmethod
    async def connect(
        cls,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_size: int | None = None,
    ) -> AsyncWebSocketSession:
        from websockets.asyncio.client import connect

        token = token if token is not None else os.environ.get(TOKEN_ENV)
        ws = await connect(ws_url(_base_url(base_url)), **_ws_connect_args(token, max_size, timeout))
        return cls(ws, timeout)

    def _conn(self) -> AsyncConnection:
        if self._ws is None:
            raise RuntimeError("the WebSocket session is closed")
        return self._ws

    async def exchange(self, message: Mapping[str, Any] | str) -> dict[str, Any]:
        """Send one message and return the reply as it is, errors included."""
        ws = self._conn()
        await ws.send(message if isinstance(message, str) else json.dumps(message))
        return cast("dict[str, Any]", json.loads(await asyncio.wait_for(ws.recv(), self.timeout)))

    async def _call(self, message: Mapping[str, Any], expect: str) -> dict[str, Any]:
        ws = self._conn()
        await ws.send(json.dumps(message))
        return _ws_reply(await asyncio.wait_for(ws.recv(), self.timeout), expect)

    async def reset(
        self,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        **options: Any,
    ) -> StepResult:
        data = reset_body(task, seed, instance, episode_id, None, options)
        reply = await self._call({"type": "reset", "data": data}, "observation")
        self.last = StepResult.from_json(reply["data"])
        return self.last

    async def step(
        self, action: Any, *, request_id: str | None = None, timeout_s: float | None = None, **view: Any
    ) -> StepResult:
        data = step_body(action, None, request_id, timeout_s, view)
        self.last = StepResult.from_json((await self._call({"type": "step", "data": data}, "observation"))["data"])
        return self.last

    async def state(self) -> dict[str, Any]:
        return cast("dict[str, Any]", (await self._call({"type": "state"}, "state"))["data"])

    async def expert(self) -> dict[str, Any]:
        return cast("dict[str, Any]", (await self._call({"type": "expert"}, "expert"))["data"])

    async def close(self) -> None:
        ws, self._ws = self._ws, None
        if ws is None:
            return
        try:
            await ws.send(json.dumps({"type": "close"}))
            _ws_reply(await asyncio.wait_for(ws.recv(), self.timeout), "closed")
        except Exception:  # noqa: BLE001 - already closed: nothing to free
            pass
        finally:
            await ws.close()

    async def __aenter__(self) -> AsyncWebSocketSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
