"""Ray helpers: a suite run sharded over a cluster, and a pool of environments in Ray actors.

Ray is the optional ``ray`` extra and is imported when a helper is called, never at import.

:func:`run_suite` runs ``phonebench run --shard I/N`` as one Ray task per shard on whichever node
Ray picks. No shared filesystem is assumed: each task returns its shard's files as bytes, the
driver writes them to ``OUT/shards/shard-I/`` and ``phonebench merge`` combines them into
``OUT/results.sqlite`` and ``OUT/episodes.jsonl`` — byte for byte what the unsharded run writes.

:class:`EnvPool` spreads environments over Ray actors, each owning a
:class:`~phonebench.LocalServer` and a few sessions, for RL rollouts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from .client import Client, StepResult
from .server import LocalServer, find_binary

__all__ = ["EnvPool", "SHARD_FILES", "run_shard", "run_suite"]

SHARD_FILES = ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "episodes.jsonl")
"""What a shard's results folder holds that the merge reads (SQLite's -wal/-shm when present)."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:  # the extra is missing: say how to get it
        raise ImportError("phonebench.ray needs Ray: pip install 'phonebench[ray]' (or pip install ray)") from e
    return ray


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_shard(
    index: int,
    count: int,
    suite: str,
    agent: str,
    tasks: str | None = None,
    instances: int | None = None,
    seed: int | None = None,
    binary: str | None = None,
    extra_args: Sequence[str] = (),
) -> dict[str, bytes]:
    """Run shard ``index`` (0-based) of ``count`` in a temporary folder; return its files.

    This is the body of each Ray task; it is a plain function, usable without Ray (e.g. under a
    Kubernetes Indexed Job or a Slurm array).
    """
    exe = find_binary(binary)
    with tempfile.TemporaryDirectory(prefix=f"phonebench-shard{index}-") as out:
        command = [exe, "run", "--suite", suite, "--agent", agent, "--shard", f"{index}/{count}"]
        command += ["--out", out, "--fresh", "--no-report", "--quiet"]
        if tasks is not None:
            command += ["--tasks", tasks]
        if instances is not None:
            command += ["--instances", str(instances)]
        if seed is not None:
            command += ["--seed", str(seed)]
        command += list(extra_args)
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(
                f"shard {index}/{count} failed (exit {done.returncode}): {' '.join(command)}\n{_tail(done.stderr)}"
            )
        return {name: (Path(out) / name).read_bytes() for name in SHARD_FILES if (Path(out) / name).exists()}


def run_suite(
    suite: str = "starter",
    agent: str = "reference",
    shards: int = 4,
    out: str | os.PathLike[str] = "results/ray",
    tasks: str | None = None,
    instances: int | None = None,
    seed: int | None = None,
    binary: str | None = None,
    extra_args: Sequence[str] = (),
    *,
    num_cpus_per_shard: float = 1,
    report: bool = False,
) -> Path:
    """Run a suite with an agent in ``shards`` Ray tasks and merge the results into ``out``.

    ``tasks`` (a glob), ``instances``, ``seed`` and ``extra_args`` (e.g. ``["--model", M,
    "--base-url", URL]``) are ``phonebench run``'s; None leaves the run's own default (the
    suite's seed, one instance). ``binary`` is the `phonebench` path on every node (default:
    ``$PHONEBENCH_BIN`` or PATH there). Starts a local Ray cluster if none is running. Returns
    ``out``, which then holds ``results.sqlite``, ``episodes.jsonl`` and ``shards/shard-I/``.
    """
    ray = _ray()
    if shards < 1:
        raise ValueError("shards must be at least 1")
    if not ray.is_initialized():
        ray.init()
    remote = ray.remote(num_cpus=num_cpus_per_shard)(run_shard)
    refs = [
        remote.remote(i, shards, suite, agent, tasks, instances, seed, binary, tuple(extra_args)) for i in range(shards)
    ]
    results: list[dict[str, bytes]] = ray.get(refs)

    out_dir = Path(out)
    shard_root = out_dir / "shards"
    dirs = []
    for i, files in enumerate(results):
        shard_dir = shard_root / f"shard-{i}"
        if shard_dir.exists():  # a previous run's files would mix with these
            shutil.rmtree(shard_dir)
        shard_dir.mkdir(parents=True)
        for name, data in files.items():
            (shard_dir / name).write_bytes(data)
        dirs.append(str(shard_dir))

    command = [find_binary(binary), "merge", "--out", str(out_dir), "--fresh"]
    if not report:
        command.append("--no-report")
    done = subprocess.run(command + dirs, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"merge failed (exit {done.returncode}): {' '.join(command)} ...\n{_tail(done.stderr)}")
    return out_dir


# ---------------------------------------------------------------------------------------------
# EnvPool


class EnvWorker:
    """The body of one :class:`EnvPool` actor: a LocalServer and ``envs`` sessions on it.

    A plain class (Ray wraps it with ``ray.remote``), so it can be tested or used without Ray.
    """

    def __init__(
        self,
        envs: int,
        binary: str | None = None,
        suite: str | None = None,
        server_args: Sequence[str] = (),
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.server = LocalServer(binary, suite=suite, args=server_args)
        self.client: Client = self.server.client()
        self.sessions: list[str | None] = [None] * envs
        self.defaults = dict(defaults or {})

    def reset(
        self,
        j: int,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> StepResult:
        opts = {**self.defaults, **(options or {})}
        result = self.client.reset(task, seed, instance, episode_id, self.sessions[j], **opts)
        self.sessions[j] = result.session_id
        return result

    def _session(self, j: int) -> str:
        session = self.sessions[j]
        if session is None:
            raise RuntimeError(f"env {j} has no episode: reset it first")
        return session

    def step(self, j: int, action: Any, view: Mapping[str, Any] | None = None) -> StepResult:
        return self.client.step(self._session(j), action, **dict(view or {}))

    def step_many(self, moves: Sequence[tuple[int, Any]]) -> list[StepResult]:
        # One actor call for many envs: the Ray round trip dominates a step's cost.
        return [self.step(j, action) for j, action in moves]

    def expert(self, j: int) -> dict[str, Any]:
        return self.client.expert(self._session(j))

    def state(self, j: int) -> dict[str, Any]:
        return self.client.state(self._session(j))

    def close(self) -> None:
        self.client.close()
        self.server.close()


class EnvPool:
    """``num_actors`` Ray actors, each owning a LocalServer and ``envs_per_actor`` environments.

    Environments are numbered ``0 .. num_envs-1``; env ``i`` lives in actor
    ``i // envs_per_actor``. ``defaults`` are reset options for every episode (e.g.
    ``format="androidworld"``). Calls block until the actor answers; :meth:`step_many` sends
    one call per actor and waits for all of them, so actors step in parallel.
    """

    def __init__(
        self,
        num_actors: int = 2,
        envs_per_actor: int = 4,
        *,
        binary: str | None = None,
        suite: str | None = None,
        server_args: Sequence[str] = (),
        num_cpus_per_actor: float = 1,
        **defaults: Any,
    ) -> None:
        ray = _ray()
        if not ray.is_initialized():
            ray.init()
        self._ray = ray
        self.envs_per_actor = envs_per_actor
        actor = ray.remote(num_cpus=num_cpus_per_actor)(EnvWorker)
        self.actors = [
            actor.remote(envs_per_actor, binary, suite, tuple(server_args), defaults) for _ in range(num_actors)
        ]

    @property
    def num_envs(self) -> int:
        return len(self.actors) * self.envs_per_actor

    def _locate(self, i: int) -> tuple[Any, int]:
        if not 0 <= i < self.num_envs:
            raise IndexError(f"env {i} is not in 0..{self.num_envs - 1}")
        return self.actors[i // self.envs_per_actor], i % self.envs_per_actor

    def reset(
        self,
        i: int,
        task: str | None = None,
        seed: int | None = None,
        instance: int | None = None,
        episode_id: str | None = None,
        **options: Any,
    ) -> StepResult:
        """Start an episode in env ``i``; ``options`` are reset options (override the defaults)."""
        actor, j = self._locate(i)
        return cast(StepResult, self._ray.get(actor.reset.remote(j, task, seed, instance, episode_id, options)))

    def step(self, i: int, action: Any, **view: Any) -> StepResult:
        actor, j = self._locate(i)
        return cast(StepResult, self._ray.get(actor.step.remote(j, action, view)))

    def expert(self, i: int) -> dict[str, Any]:
        """``{"action", "gave_up"}`` for env ``i``'s current screen."""
        actor, j = self._locate(i)
        return cast("dict[str, Any]", self._ray.get(actor.expert.remote(j)))

    def state(self, i: int) -> dict[str, Any]:
        actor, j = self._locate(i)
        return cast("dict[str, Any]", self._ray.get(actor.state.remote(j)))

    def step_many(self, moves: Mapping[int, Any] | Iterable[tuple[int, Any]]) -> dict[int, StepResult]:
        """Step several envs at once (``{env: action}``); actors work in parallel."""
        pairs = list(moves.items()) if isinstance(moves, Mapping) else list(moves)
        batches: dict[int, list[tuple[int, Any]]] = {}
        for i, action in pairs:
            self._locate(i)
            batches.setdefault(i // self.envs_per_actor, []).append((i, action))
        refs = {
            a: self.actors[a].step_many.remote([(i % self.envs_per_actor, action) for i, action in batch])
            for a, batch in batches.items()
        }
        results: dict[int, StepResult] = {}
        for a, ref in refs.items():
            for (i, _), result in zip(batches[a], self._ray.get(ref), strict=True):
                results[i] = result
        return results

    def close(self) -> None:
        """Stop every actor's server and the actors."""
        if not self.actors:
            return
        self._ray.get([a.close.remote() for a in self.actors])
        for a in self.actors:
            self._ray.kill(a)
        self.actors = []

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
