"""Ray: a suite run in shards across a cluster (merged into one results folder), and an EnvPool
of environments in actors stepping in parallel.

    PHONEBENCH_BIN=target/release/phonebench PYTHONPATH=python python python/examples/ray_suite.py --out /tmp/ray-run

With a cluster, `ray.init(address="auto")` instead of a local one; the binary must be at
$PHONEBENCH_BIN (or on PATH) on every node. Nothing needs a shared filesystem.
"""

from __future__ import annotations

import argparse
import json

import ray

from phonebench.ray import EnvPool, run_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="results/ray-starter")
    parser.add_argument("--tasks", default=None, help="only tasks matching this glob")
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args()

    ray.init(num_cpus=2, include_dashboard=False)
    try:
        out = run_suite("starter", "reference", shards=args.shards, out=args.out, tasks=args.tasks)
        episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
        wins = sum(e["success"] for e in episodes)
        print(f"{len(episodes)} episodes in {args.shards} shards, {wins} successes: {out / 'episodes.jsonl'}")

        with EnvPool(num_actors=2, envs_per_actor=2) as pool:
            results = {i: pool.reset(i, "settings.screen_timeout") for i in range(pool.num_envs)}
            while not all(r.done for r in results.values()):
                moves = {i: pool.expert(i)["action"] for i, r in results.items() if not r.done}
                results.update(pool.step_many(moves))
            print("EnvPool rewards:", {i: r.reward for i, r in results.items()})
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
