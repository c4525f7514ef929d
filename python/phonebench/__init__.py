"""phonebench from Python: a client of `phonebench serve`, a local server launcher, a Gymnasium
environment, an AndroidWorld-style adapter, SkyRL and verl adapters and Ray helpers.

The core (this module) needs only httpx. The rest is imported on use and needs its extra:
``phonebench.gym`` and ``phonebench.androidworld`` (``[gym]``), WebSocket sessions (``[ws]``),
``phonebench.ray`` (``[ray]``).
"""

from .client import (
    AsyncClient,
    AsyncWebSocketSession,
    Client,
    PhonebenchError,
    Session,
    StepResult,
    WebSocketSession,
    decode_rgb,
)
from .server import LocalServer, LocalServerError, default_client, find_binary, shared_server

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncWebSocketSession",
    "Client",
    "LocalServer",
    "LocalServerError",
    "PhonebenchError",
    "Session",
    "StepResult",
    "WebSocketSession",
    "__version__",
    "decode_rgb",
    "default_client",
    "find_binary",
    "shared_server",
]
