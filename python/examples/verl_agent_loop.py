"""verl's multi-turn masking with phonebench: the agent loop plays a task token in / token out.

A stand-in tokenizer (bytes) and a scripted server manager (answers each turn with the task's
expert action) replace verl's tokenizer and model servers, so this runs without a model. The
output shows the response's turns: model tokens (mask 1) and environment tokens (mask 0).

    PHONEBENCH_BIN=target/release/phonebench PYTHONPATH=python python python/examples/verl_agent_loop.py

In verl, register the loop in the agent-loop config (``_target_:
phonebench.adapters.verl.PhonebenchAgentLoop``, or by name ``phonebench_agent`` once
``phonebench.adapters.verl`` is imported) and put ``extra_info.task`` in the dataset rows.
"""

from __future__ import annotations

import argparse
import asyncio

from phonebench import LocalServer
from phonebench.adapters.verl import ExpertServerManager, PhonebenchAgentLoop, StandInTokenizer


async def play(url: str, task: str) -> None:
    tokenizer = StandInTokenizer()
    manager = ExpertServerManager(tokenizer, url)
    loop = PhonebenchAgentLoop(None, manager, tokenizer, None, base_url=url)
    try:
        out = await loop.run(
            {"temperature": 0.0},
            raw_prompt=[{"role": "user", "content": "Complete the task on the phone."}],
            extra_info={"task": task},
        )
    finally:
        await manager.close()

    print(f"prompt: {len(out.prompt_ids)} tokens; response: {len(out.response_ids)} tokens, {out.num_turns} turns")
    start = 0
    while start < len(out.response_mask):
        bit = out.response_mask[start]
        end = start
        while end < len(out.response_mask) and out.response_mask[end] == bit:
            end += 1
        text = tokenizer.decode(out.response_ids[start:end], skip_special_tokens=True).strip()
        who = "model" if bit else "env  "
        print(f"  mask={bit} {who} {end - start:>5} tokens  {text.splitlines()[-1][:90] if bit else text[:60]!r}")
        start = end
    print(f"reward_score {out.reward_score}, {out.extra_fields['phonebench']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="mcp.geo_place_contact")
    args = parser.parse_args()
    with LocalServer() as server:
        asyncio.run(play(server.url, args.task))


if __name__ == "__main__":
    main()
