"""Ray helpers on a local two-CPU cluster: a suite run sharded over Ray tasks merges into the
unsharded run's episodes.jsonl byte for byte, and an EnvPool plays tasks in its actors."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from phonebench.ray import EnvPool, run_suite

# The whole starter suite, one instance of each task: the acceptance case (a machine that has
# not validated the suite with this build yet spends most of the test validating it).
TASKS: str | None = None
INSTANCES = 1


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_sharded_run_merges_into_the_unsharded_episodes(local_cluster: None, binary: str, tmp_path: Path) -> None:
    out = run_suite(
        "starter", "reference", shards=4, out=tmp_path / "sharded", tasks=TASKS, instances=INSTANCES, binary=binary
    )
    assert out == tmp_path / "sharded"
    shards = sorted(p.name for p in (out / "shards").iterdir())
    assert shards == ["shard-0", "shard-1", "shard-2", "shard-3"]
    assert (out / "results.sqlite").exists()

    single = tmp_path / "single"
    command = [binary, "run", "--suite", "starter", "--agent", "reference", "--instances", str(INSTANCES)]
    if TASKS is not None:
        command += ["--tasks", TASKS]
    command += ["--out", str(single), "--fresh", "--no-report", "--quiet"]
    subprocess.run(command, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    merged = (out / "episodes.jsonl").read_bytes()
    assert merged == (single / "episodes.jsonl").read_bytes()
    shard_lines = [(out / "shards" / s / "episodes.jsonl").read_bytes().count(b"\n") for s in shards]
    assert all(n > 0 for n in shard_lines)
    assert merged.count(b"\n") == sum(shard_lines) >= 100


def test_env_pool_plays_tasks_in_two_actors(local_cluster: None, binary: str) -> None:
    with EnvPool(num_actors=2, envs_per_actor=2, binary=binary, num_cpus_per_actor=0.5) as pool:
        assert pool.num_envs == 4
        envs = [0, 3]  # one in each actor
        results = {i: pool.reset(i, "settings.screen_timeout") for i in envs}
        assert results[0].session_id != results[3].session_id
        assert results[0].observation == results[3].observation  # same task, seed and instance
        while not all(r.done for r in results.values()):
            moves = {i: pool.expert(i)["action"] for i, r in results.items() if not r.done}
            results.update(pool.step_many(moves))
        assert all(r.reward == 1.0 and r.terminated for r in results.values())
        assert pool.state(3)["verdict"]["success"] is True

        # A single env steps on its own, with per-episode options.
        first = pool.reset(1, "settings.screen_timeout", max_steps=1)
        last = pool.step(1, "press [back]")
        assert first.observation["step"] == 0 and last.truncated
