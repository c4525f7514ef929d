#!/usr/bin/env python3
"""Chooses the `lite` suite: a balanced subset of `full` for quick model comparisons.

Usage: phonebench task-report --suite full --random-runs 1 --json > tasks.jsonl
       python3 tools/lite.py tasks.jsonl > suites/lite/suite.toml

Deterministic greedy coverage from task metadata only (never from results): category quotas,
every app at least once (up to three times), and some cross-app, long (20+ reference steps),
memory, vague/underspecified and infeasible tasks.
"""

import collections
import json
import pathlib
import re
import sys

QUOTA = {"completion": 20, "retrieval": 12, "ask_user": 8, "mcp": 10, "testing": 8}
WANT = {"multi": 12, "long": 8, "recall": 8, "vague": 8, "infeasible": 4}
SIZE = 60


def main(path: str) -> None:
    tasks = [json.loads(line) for line in open(path) if line.startswith('{"task"')]
    root = pathlib.Path(__file__).resolve().parent.parent / "suites" / "full" / "tasks"
    infeasible = set()
    for f in root.glob("*.toml"):
        text = f.read_text()
        if re.search(r"^finish = ", text, re.M):
            m = re.search(r'^id = "([^"]+)"', text, re.M)
            if m:
                infeasible.add(m.group(1))

    def tag(t: dict, axis: str) -> list:
        return t["tags"].get(axis, [])

    features = {
        "multi": lambda t: len(t["apps"]) > 1,
        "long": lambda t: (t["reference_steps"] or 0) >= 20,
        "recall": lambda t: "recall" in tag(t, "memory"),
        "vague": lambda t: bool(set(tag(t, "goal")) & {"vague", "underspecified"}),
        "infeasible": lambda t: t["task"] in infeasible,
    }
    chosen: list = []
    have: collections.Counter = collections.Counter()
    per_app: collections.Counter = collections.Counter()
    per_category: collections.Counter = collections.Counter()
    pool = sorted(tasks, key=lambda t: t["task"])
    while len(chosen) < SIZE:
        best, best_score = None, -1
        for t in pool:
            if t in chosen:
                continue
            if per_category[t["category"]] >= QUOTA[t["category"]]:
                continue
            score = sum(3 if per_app[a] == 0 else (1 if per_app[a] < 3 else 0) for a in t["apps"])
            score += sum(2 for k, f in features.items() if f(t) and have[k] < WANT[k])
            if score > best_score:
                best, best_score = t, score
        if best is None:
            break
        chosen.append(best)
        per_category[best["category"]] += 1
        per_app.update(best["apps"])
        have.update(k for k, f in features.items() if f(best))
    ids = sorted(t["task"] for t in chosen)
    print('name = "lite"')
    print('description = """')
    print(f"A quick, balanced subset of `full` for comparing models: {len(ids)} tasks over all the apps,")
    print("every category (" + ", ".join(f"{c} {n}" for c, n in sorted(per_category.items())) + "),")
    print(f"with {have['multi']} cross-app, {have['long']} long (20+ steps), {have['recall']} memory, "
          f"{have['vague']} vague or underspecified")
    print(f"and {have['infeasible']} infeasible tasks among them. Chosen by tools/lite.py from task metadata, not results.")
    print('"""')
    print('base = "full"')
    print("tasks = [")
    for i in ids:
        print(f'  "{i}",')
    print("]")


if __name__ == "__main__":
    main(sys.argv[1])
