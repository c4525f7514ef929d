"""Start `phonebench serve` on this machine and wait until it answers.

The server is started on ``127.0.0.1:0`` (a port the system picks), its address is read from the
line it prints on stderr (``phonebench serve: listening on http://ADDR ...``), and `/health` is
polled until it answers or a deadline passes. The process ends when the :class:`LocalServer` is
closed, leaves its ``with`` block, is garbage-collected, or the interpreter exits.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from .client import DEFAULT_TIMEOUT, AsyncClient, Client, WebSocketSession

__all__ = ["BIN_ENV", "LocalServer", "LocalServerError", "default_client", "find_binary", "shared_server"]

BIN_ENV = "PHONEBENCH_BIN"
"""Environment variable naming the `phonebench` binary (else it is looked up on PATH)."""

TOKEN_VAR = "PHONEBENCH_SERVE_TOKEN"
"""The variable a token is handed to the server in (``--token-env``): never the command line,
where other users of the machine could read it."""

_LISTENING = re.compile(r"listening on (\S+)")


class LocalServerError(RuntimeError):
    """The server could not be started: the binary is missing, or it exited or stayed silent."""


def find_binary(binary: str | os.PathLike[str] | None = None) -> str:
    """The `phonebench` binary: ``binary`` if given, else ``$PHONEBENCH_BIN``, else PATH."""
    candidate = os.fspath(binary) if binary is not None else os.environ.get(BIN_ENV)
    if candidate:
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            raise LocalServerError(f"the phonebench binary {candidate!r} does not exist or is not executable")
        return candidate
    found = shutil.which("phonebench")
    if found is None:
        raise LocalServerError(
            f"no phonebench binary: pass binary=, set ${BIN_ENV}, or put `phonebench` on PATH "
            "(cargo install --path crates/cli)"
        )
    return found


def _stop(process: subprocess.Popen[str], grace: float = 5.0) -> None:
    """Terminate, then kill after ``grace`` seconds. Safe to call on an exited process."""
    if process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass  # already closed: the server is going anyway
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LocalServer:
    """A `phonebench serve` process owned by this Python process.

    >>> with LocalServer(suite="starter") as server:
    ...     client = server.client()
    ...     result = client.reset(task="settings.flight_mode")

    ``binary`` defaults to ``$PHONEBENCH_BIN`` or PATH. ``token`` makes the server require
    ``Authorization: Bearer TOKEN`` (handed over through an environment variable and
    ``--token-env``). ``args`` are further `serve` flags, e.g. ``["--max-sessions", "512"]``.
    Construction blocks until `/health` answers; failures raise :class:`LocalServerError` with
    the server's stderr.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        *,
        suite: str | None = None,
        args: Iterable[str] = (),
        token: str | None = None,
        bind: str = "127.0.0.1:0",
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        self.binary = find_binary(binary)
        self.token = token
        # The server exits when this pipe closes, so it never outlives Python, even a SIGKILL.
        self.command = [self.binary, "serve", "--bind", bind, "--exit-with-stdin"]
        if suite is not None:
            self.command += ["--suite", suite]
        child_env = dict(os.environ)
        child_env.update(env or {})
        if token is not None:
            child_env[TOKEN_VAR] = token
            self.command += ["--token-env", TOKEN_VAR]
        self.command += list(args)

        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._found = threading.Event()  # the listening line arrived, or stderr ended
        self._address: str | None = None
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=child_env,
            cwd=cwd,
        )
        # The finalizer also runs at interpreter exit (atexit), so no server outlives Python.
        self._finalizer = weakref.finalize(self, _stop, self.process)
        # Drain stderr for the process's whole life: a full pipe would block the server.
        self._pump = threading.Thread(target=self._read_stderr, name="phonebench-serve-stderr", daemon=True)
        self._pump.start()
        try:
            self.url = self._wait_ready(startup_timeout)
        except BaseException:
            self.close()
            raise

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line.rstrip("\n"))
            if self._address is None:
                match = _LISTENING.search(line)
                if match:
                    self._address = match.group(1)
                    self._found.set()
        self._found.set()  # EOF: the process exited (or closed stderr) without the line

    def _wait_ready(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        if not self._found.wait(timeout) or self._address is None:
            code = self.process.poll()
            if code is None and self._found.is_set():
                # stderr ended without the line: the process is exiting; collect its status.
                try:
                    code = self.process.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            what = f"exited with status {code}" if code is not None else f"printed no address in {timeout:.0f} s"
            raise LocalServerError(f"phonebench serve {what}: {' '.join(self.command)}\n{self.stderr()}")
        url = _client_url(self._address)
        # The line is printed once the socket accepts; /health proves the routes answer too.
        # Retries are bounded by the same deadline.
        while True:
            try:
                response = httpx.get(url + "/health", timeout=max(0.1, deadline - time.monotonic()))
                if response.status_code == 200:
                    return url
                problem = f"/health answered {response.status_code}: {response.text[:200]}"
            except httpx.TransportError as e:
                problem = f"/health failed: {e}"
            if self.process.poll() is not None or time.monotonic() >= deadline:
                raise LocalServerError(f"phonebench serve is not healthy ({problem})\n{self.stderr()}")
            time.sleep(0.05)

    # -- what callers use

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stderr(self) -> str:
        """The server's last stderr lines (for error messages)."""
        return "\n".join(self._stderr)

    def client(self, timeout: float = DEFAULT_TIMEOUT) -> Client:
        """A :class:`Client` of this server (with its token)."""
        return Client(self.url, self.token, timeout)

    def async_client(self, timeout: float = DEFAULT_TIMEOUT) -> AsyncClient:
        """An :class:`AsyncClient` of this server (with its token)."""
        return AsyncClient(self.url, self.token, timeout)

    def ws_session(self, **kwargs: Any) -> WebSocketSession:
        """A new :class:`WebSocketSession` on this server."""
        return WebSocketSession(self.url, self.token, **kwargs)

    def close(self) -> None:
        """Stop the server (idempotent)."""
        self._finalizer()
        # The process is gone, so its stderr ends and the reader thread finishes.
        self._pump.join(timeout=5)
        if self.process.stderr is not None and not self._pump.is_alive():
            self.process.stderr.close()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self.process.returncode}"
        return f"LocalServer({getattr(self, 'url', '?')}, {state})"


def _client_url(address: str) -> str:
    """The URL a client on this machine uses for the address the server printed."""
    url = address if "://" in address else "http://" + address
    # A wildcard bind is reached through loopback.
    return url.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:").rstrip("/")


_shared: LocalServer | None = None
_shared_lock = threading.Lock()


def shared_server(**kwargs: Any) -> LocalServer:
    """One :class:`LocalServer` per Python process, started at the first call (with that call's
    arguments) and restarted if it died. Adapters use it so that many environments in one
    worker share one server instead of starting a process each."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = LocalServer(**kwargs)
        return _shared


def default_client(base_url: str | None = None, token: str | None = None, **server_kwargs: Any) -> Client:
    """A client of ``base_url`` (or ``$PHONEBENCH_URL``), else of this process's shared server."""
    url = base_url or os.environ.get("PHONEBENCH_URL")
    if url:
        return Client(url, token)
    return shared_server(**server_kwargs).client()


class Connection:
    """The client an environment talks through, and what it must release on close.

    Given ``client``, that client is used and left open (its owner closes it); given
    ``base_url``, a client of that server is made; given neither, a :class:`LocalServer` is
    started for this environment alone. :meth:`close` closes what was made here and nothing else.
    """

    def __init__(
        self,
        client: Client | None = None,
        base_url: str | None = None,
        token: str | None = None,
        binary: str | None = None,
        suite: str | None = None,
        server_args: Iterable[str] = (),
    ) -> None:
        self.server: LocalServer | None = None
        self._owns_client = client is None
        if client is not None:
            self.client = client
        elif base_url is not None:
            self.client = Client(base_url, token)
        else:
            self.server = LocalServer(binary, suite=suite, args=server_args)
            self.client = self.server.client()

    def close(self) -> None:
        """Close the client and stop the server, if they were made here."""
        if self._owns_client:
            self.client.close()
        if self.server is not None:
            self.server.close()
            self.server = None
