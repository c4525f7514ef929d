"""Steps per second through `phonebench serve` with N concurrent sessions (asyncio).

Warm-up: one session records each task's expert action list once (POST /expert, then step).
Timed phase: every session loops ``reset(task)`` + replay of the recorded actions for T seconds
(tasks taken round-robin, each session starting at its own offset). Prints a table and one JSON
line ``{"sessions", "steps_per_s", "resets_per_s", "p50_ms", "p99_ms", ...}`` (latencies are of
steps; resets have their own columns).

    # from python/ of a checkout (or with the package installed):
    PYTHONPATH=. python benchmarks/ws_throughput.py         # starts a LocalServer ($PHONEBENCH_BIN)
    python benchmarks/ws_throughput.py --url http://127.0.0.1:8000 --sessions 64 --seconds 20
    python benchmarks/ws_throughput.py --http                # the same through POST /reset, /step

Traffic goes only to the given server (loopback by default); the loops stop after --seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from phonebench import AsyncClient, AsyncWebSocketSession, LocalServer


class _HttpSession:
    """The HTTP variant with the WebSocket session's reset/step/expert/close surface."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.id: str | None = None

    async def reset(self, task: str) -> Any:
        result = await self.client.reset(task, session_id=self.id)
        self.id = result.session_id
        return result

    async def step(self, action: Any) -> Any:
        assert self.id is not None
        return await self.client.step(self.id, action)

    async def expert(self) -> dict[str, Any]:
        assert self.id is not None
        return await self.client.expert(self.id)

    async def close(self) -> None:
        if self.id is not None:
            await self.client.close_session(self.id)


async def _open(url: str, token: str | None, http: AsyncClient | None) -> Any:
    if http is not None:
        return _HttpSession(http)
    return await AsyncWebSocketSession.connect(url, token)


async def record(url: str, token: str | None, http: AsyncClient | None, tasks: list[str]) -> dict[str, list[Any]]:
    """Each task's expert actions from its first screen to the end (tasks whose expert gives up
    are left out)."""
    session = await _open(url, token, http)
    plans: dict[str, list[Any]] = {}
    try:
        for task in tasks:
            result = await session.reset(task)
            actions: list[Any] = []
            while not result.done:
                reply = await session.expert()
                if reply.get("action") is None:
                    break
                actions.append(reply["action"])
                result = await session.step(reply["action"])
            if result.done:
                plans[task] = actions
    finally:
        await session.close()
    return plans


async def worker(
    index: int,
    url: str,
    token: str | None,
    http: AsyncClient | None,
    plans: list[tuple[str, list[Any]]],
    deadline: float,
    step_ms: list[float],
    reset_ms: list[float],
) -> None:
    session = await _open(url, token, http)
    try:
        k = index
        while time.perf_counter() < deadline:
            task, actions = plans[k % len(plans)]
            k += 1
            t0 = time.perf_counter()
            await session.reset(task)
            reset_ms.append((time.perf_counter() - t0) * 1000)
            for action in actions:
                if time.perf_counter() >= deadline:
                    return
                t0 = time.perf_counter()
                await session.step(action)
                step_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        await session.close()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bench(
    url: str, token: str | None, sessions: int, seconds: float, use_http: bool, pattern: str | None
) -> dict[str, Any]:
    http = AsyncClient(url, token, max_connections=sessions + 4) if use_http else None
    meta_client = AsyncClient(url, token)
    try:
        tasks = [t["id"] for t in await meta_client.tasks(pattern)]
        t0 = time.perf_counter()
        plans = await record(url, token, http, tasks)
        warmup_s = time.perf_counter() - t0
        plan_list = sorted(plans.items())
        if not plan_list:
            raise SystemExit("no task could be recorded")
        step_ms: list[float] = []
        reset_ms: list[float] = []
        start = time.perf_counter()
        deadline = start + seconds
        await asyncio.gather(
            *(worker(i, url, token, http, plan_list, deadline, step_ms, reset_ms) for i in range(sessions))
        )
        elapsed = time.perf_counter() - start
    finally:
        await meta_client.close()
        if http is not None:
            await http.close()
    return {
        "sessions": sessions,
        "transport": "http" if use_http else "ws",
        "seconds": round(elapsed, 3),
        "tasks": len(plan_list),
        "warmup_s": round(warmup_s, 3),
        "steps": len(step_ms),
        "resets": len(reset_ms),
        "steps_per_s": round(len(step_ms) / elapsed, 1),
        "resets_per_s": round(len(reset_ms) / elapsed, 1),
        "p50_ms": round(_pct(step_ms, 0.50), 3),
        "p99_ms": round(_pct(step_ms, 0.99), 3),
        "reset_p50_ms": round(_pct(reset_ms, 0.50), 3),
        "reset_p99_ms": round(_pct(reset_ms, 0.99), 3),
        "mean_ms": round(statistics.fmean(step_ms), 3) if step_ms else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server (default: start a LocalServer)")
    parser.add_argument("--token", help="its bearer token")
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tasks", help="only tasks matching this glob (default: the whole suite)")
    parser.add_argument("--http", action="store_true", help="use POST /reset and /step instead of /ws")
    parser.add_argument("--max-sessions", type=int, default=None, help="the LocalServer's --max-sessions")
    args = parser.parse_args(argv)

    server = None
    url, token = args.url, args.token
    if url is None:
        extra = ["--max-sessions", str(max(args.max_sessions or 0, args.sessions + 8))]
        server = LocalServer(args=extra)
        url, token = server.url, server.token
    try:
        result = asyncio.run(bench(url, token, args.sessions, args.seconds, args.http, args.tasks))
    finally:
        if server is not None:
            server.close()

    rows = [
        ("transport", result["transport"]),
        ("sessions", result["sessions"]),
        ("tasks replayed", result["tasks"]),
        ("steps / s", result["steps_per_s"]),
        ("resets / s", result["resets_per_s"]),
        ("step p50 ms", result["p50_ms"]),
        ("step p99 ms", result["p99_ms"]),
        ("reset p50 ms", result["reset_p50_ms"]),
        ("reset p99 ms", result["reset_p99_ms"]),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
