"""The SkyRL text environment, driven by a stand-in "model" that writes the task's expert action
in the usual `Reason: ... / Action: ...` form. In SkyRL the trainer's generator calls ``init`` and
``step`` the same way, with the policy's text.

    PHONEBENCH_BIN=target/release/phonebench PYTHONPATH=python python python/examples/skyrl_env.py
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from phonebench import LocalServer
from phonebench.adapters.skyrl import PhonebenchTextEnv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="ask.sister_code")
    args = parser.parse_args()

    with LocalServer() as server, server.client() as client:
        # SkyRL constructs envs as Env(env_config, extras); extras come from the dataset row.
        env = PhonebenchTextEnv({"base_url": server.url}, {"task": args.task})
        messages, metadata = env.init([])
        print(messages[-1]["content"][:400], "...\n")
        out: dict[str, Any] = {"done": False}
        while not out["done"]:
            action = client.expert(metadata["session_id"])["action"]  # the stand-in policy
            out = env.step(f"Reason: the next step of the plan.\nAction: {json.dumps(action)}")
            print(f"turn {env.turns}: {out['postprocessed_action']}  reward={out['reward']}")
            for message in out["observations"]:
                if "Message:" in message["content"]:  # the simulated user's answer, an MCP result
                    print("   ", message["content"].split("\n\n")[0])
        print(f"done: reward {out['reward']}, metrics {env.get_metrics()}")
        env.close()


if __name__ == "__main__":
    main()
