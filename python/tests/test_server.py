"""LocalServer: start, token, clear failures; the server's refusal to serve beyond loopback
without a token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from phonebench import Client, LocalServer, LocalServerError, PhonebenchError


def test_token_is_required_when_set(binary: str) -> None:
    with LocalServer(binary, token="s3cret-token") as server:
        # /health needs no token (load balancers and LocalServer itself poll it).
        assert httpx.get(server.url + "/health").status_code == 200
        bare = httpx.get(server.url + "/tasks")
        assert bare.status_code == 401
        with Client(server.url, token="") as anonymous, pytest.raises(PhonebenchError) as refused:
            anonymous.metadata()
        assert refused.value.status == 401
        with Client(server.url, token="wrong") as wrong, pytest.raises(PhonebenchError) as refused:
            wrong.reset(task="settings.screen_timeout")
        assert refused.value.status == 401
        with server.client() as client:
            assert client.metadata()["name"] == "phonebench"
            result = client.reset(task="settings.screen_timeout")
            client.close_session(result.session_id)
        # The token travels in the environment, never on the command line.
        assert "s3cret-token" not in " ".join(server.command)


def test_close_stops_the_process(binary: str) -> None:
    server = LocalServer(binary)
    assert server.running and server.port > 0
    server.close()
    assert not server.running
    server.close()  # idempotent


def test_the_server_does_not_outlive_a_killed_python(binary: str) -> None:
    # A Python process that owns a LocalServer is killed with SIGKILL (no finalizer runs):
    # the server sees its stdin close and stops.
    script = (
        "import sys, time\n"
        "from phonebench import LocalServer\n"
        "server = LocalServer(sys.argv[1])\n"
        "print(server.process.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", script, binary], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        assert owner.stdout is not None
        server_pid = int(owner.stdout.readline())
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(30)
        deadline = time.monotonic() + 30
        while _alive(server_pid):
            assert time.monotonic() < deadline, "the server outlived the Python process that started it"
            time.sleep(0.05)
    finally:
        if owner.poll() is None:
            owner.kill()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an exited child of nobody's waiting)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def test_missing_binary_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LocalServerError, match="does not exist"):
        LocalServer(tmp_path / "no-phonebench-here")


def test_early_exit_reports_the_servers_stderr(binary: str) -> None:
    with pytest.raises(LocalServerError) as failed:
        LocalServer(binary, suite="no-such-suite-anywhere")
    assert "exited with status" in str(failed.value)
    assert "no-such-suite-anywhere" in str(failed.value)


def test_serving_beyond_loopback_needs_a_token(binary: str) -> None:
    done = subprocess.run(
        [binary, "serve", "--bind", "0.0.0.0:0"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert done.returncode != 0
    assert "token" in done.stderr


def test_a_full_server_answers_503_over_http_and_websocket(binary: str) -> None:
    from websockets.exceptions import InvalidStatus

    from phonebench import WebSocketSession

    with LocalServer(binary, args=["--max-sessions", "1"]) as server, server.client() as client:
        first = client.reset(task="settings.screen_timeout")
        with pytest.raises(PhonebenchError) as full:
            client.reset(task="settings.screen_timeout")
        assert full.value.status == 503 and full.value.code == "CAPACITY_REACHED"
        with pytest.raises(InvalidStatus):
            WebSocketSession(server.url)
        client.close_session(first.session_id)  # the place is free again
        with server.ws_session() as ws:
            assert ws.reset(task="settings.screen_timeout").observation["step"] == 0
