"""A Gymnasium loop on the simulated phone: the task's expert plays to success, then a seeded
random agent runs out of steps.

    PHONEBENCH_BIN=target/release/phonebench PYTHONPATH=python python python/examples/gym_loop.py
    python examples/gym_loop.py --url http://127.0.0.1:8000 --task contacts.edit_phone
"""

from __future__ import annotations

import argparse
import random

import gymnasium

from phonebench.gym import PhonebenchEnv  # importing it registers phonebench/Phone-v0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running `phonebench serve` (default: start one)")
    parser.add_argument("--task", default="settings.screen_timeout")
    args = parser.parse_args()

    # Without base_url the env starts its own LocalServer ($PHONEBENCH_BIN or PATH).
    env = gymnasium.make("phonebench/Phone-v0", task=args.task, base_url=args.url, elements=True)
    phone: PhonebenchEnv = env.unwrapped  # type: ignore[assignment]
    obs, info = env.reset(seed=0)
    print(f"goal: {obs['goal']}")
    terminated = truncated = False
    while not (terminated or truncated):
        action = phone.expert_action()  # the task's reference solution, one step at a time
        obs, reward, terminated, truncated, info = env.step(action)
        print(f"step {obs['step']:>2}  {action}  reward={reward}")
    print(f"expert: reward {reward}, terminated {terminated}, verdict success {info['verdict']['success']}")

    # A random agent: tap a random element, scroll or go back, for at most 15 steps.
    rng = random.Random(0)
    obs, info = env.reset(seed=0, options={"max_steps": 15})
    terminated = truncated = False
    while not (terminated or truncated):
        kind = rng.choice(["click", "scroll", "back"])
        random_action: str | dict[str, str]
        if kind == "click" and info["elements"]:
            random_action = f"click [{rng.randrange(len(info['elements']))}]"
        elif kind == "scroll":
            random_action = {"action_type": "scroll", "direction": rng.choice(["up", "down"])}
        else:
            random_action = "press [back]"
        obs, reward, terminated, truncated, info = env.step(random_action)
    print(f"random: reward {reward}, truncated {truncated} after {obs['step']} steps")
    env.close()


if __name__ == "__main__":
    main()
