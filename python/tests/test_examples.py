"""The examples and the benchmark run as documented (small settings), so they cannot rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(binary: str, script: str, *args: str) -> str:
    env = dict(os.environ, PHONEBENCH_BIN=binary, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, str(ROOT / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("examples/gym_loop.py", "expert: reward 1.0, terminated True"),
        ("examples/skyrl_env.py", "done: reward 1.0"),
        ("examples/verl_agent_loop.py", "reward_score 1.0"),
    ],
)
def test_example_runs(binary: str, script: str, expected: str) -> None:
    assert expected in _run(binary, script)


def test_benchmark_prints_its_json_line(binary: str) -> None:
    out = _run(binary, "benchmarks/ws_throughput.py", "--sessions", "4", "--seconds", "1", "--tasks", "settings.*")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["sessions"] == 4 and result["transport"] == "ws"
    assert result["steps"] > 0 and result["steps_per_s"] > 0 and result["p99_ms"] >= result["p50_ms"]
    args = ["--sessions", "2", "--seconds", "1", "--tasks", "settings.*", "--http"]
    http = json.loads(_run(binary, "benchmarks/ws_throughput.py", *args).strip().splitlines()[-1])
    assert http["transport"] == "http" and http["steps"] > 0
