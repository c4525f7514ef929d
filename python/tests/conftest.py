"""Shared fixtures: the `phonebench` binary from $PHONEBENCH_BIN and one LocalServer per test
module. Nothing here skips: a missing binary or dependency fails the tests that need it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from phonebench import Client, LocalServer


@pytest.fixture(scope="session")
def binary() -> str:
    path = os.environ.get("PHONEBENCH_BIN")
    if not path:
        pytest.fail("set PHONEBENCH_BIN to the phonebench binary (e.g. target/release/phonebench)")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"PHONEBENCH_BIN={path} is not an executable file")
    return path


@pytest.fixture(scope="module")
def server(binary: str) -> Iterator[LocalServer]:
    with LocalServer(binary) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: LocalServer) -> Iterator[Client]:
    with server.client() as c:
        yield c


@pytest.fixture(scope="module")
def tasks_by_category(client: Client) -> dict[str, list[str]]:
    """Task ids of the served suite by category, in the server's order."""
    out: dict[str, list[str]] = {}
    for task in client.tasks():
        out.setdefault(task["category"], []).append(task["id"])
    return out


def _play_expert(session, task: str, **options):  # type: ignore[no-untyped-def]
    """Reset ``task`` and play the expert's actions to the end; returns the last StepResult."""
    result = session.reset(task=task, **options)
    while not result.done:
        reply = session.expert()
        assert reply["action"] is not None, f"the expert gave up on {task}: {reply['gave_up']}"
        result = session.step(reply["action"])
    return result


@pytest.fixture(scope="session")
def play_expert():  # type: ignore[no-untyped-def]
    """``play_expert(session, task, **options)``: the task played by its expert to the end."""
    return _play_expert
