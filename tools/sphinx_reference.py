#!/usr/bin/env python3
"""Independent re-derivation of SPHINX's `tree` and `text` observations, to check our goldens.

Written from the rules (docs/observations.md, the SPHINX notes), not from upstream code, with a
different XML parser (ElementTree) than the Rust renderer (quick-xml), so a golden file that both
agree on is unlikely to share a bug with either. Usage:

    tools/sphinx_reference.py SCREEN.xml tree|list      # print one rendering
    tools/sphinx_reference.py --check                   # compare every golden, exit 1 on a diff

Rules:
- the windows are the children of <hierarchy>; those of package com.android.systemui are dropped;
- a node's actions: `text` if its class is exactly android.widget.EditText, otherwise `click` if
  clickable or checkable and `longclick` if long-clickable; then `swipe` if scrollable; a node
  whose visible-to-user is not "true" (absent counts as "true") has none;
- interactable nodes (with an action) are numbered breadth-first, window after window;
- a node reads `a View (content-desc: D, resource-id: R, text: T, class: C)` with the parts that
  are non-empty after stripping, R cut after its last '/', or just `a View`; interactable nodes
  add ` to A`, ` to A or B`, ` to A, B or C`;
- tree: every node depth-first, one tab per depth from 0, `[i] ` before interactable ones, each
  line ending in a newline; list: `[i] widget` lines in index order joined by newlines.
"""

import os
import sys
import xml.etree.ElementTree as ET
from collections import deque
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN_DIR = HERE.parent / "crates/observe/tests/golden/sphinx"
# As the Rust tests: $PHONEBENCH_SHARED, else ../shared beside the checkout.
SHARED = Path(os.environ.get("PHONEBENCH_SHARED", HERE.parent.parent / "shared"))


def screens():
    """(path under shared/sphinx-data, golden name) from the manifest the Rust test reads too."""
    rows = (GOLDEN_DIR / "screens.tsv").read_text(encoding="utf-8").splitlines()
    return [tuple(r.split("\t")[:2]) for r in rows if r.strip() and not r.startswith("#")]


def actions(e):
    if e.get("visible-to-user", "true") != "true":
        return []
    out = []
    if e.get("class", "") == "android.widget.EditText":
        out.append("text")
    else:
        if e.get("clickable") == "true" or e.get("checkable") == "true":
            out.append("click")
        if e.get("long-clickable") == "true":
            out.append("longclick")
    if e.get("scrollable") == "true":
        out.append("swipe")
    return out


def element(e):
    parts = [
        ("content-desc", e.get("content-desc", "").strip()),
        ("resource-id", e.get("resource-id", "").split("/")[-1].strip()),
        ("text", e.get("text", "").strip()),
        ("class", e.get("class", "").strip()),
    ]
    shown = [f"{k}: {v}" for k, v in parts if v]
    return "a View (" + ", ".join(shown) + ")" if shown else "a View"


def widget(e):
    acts = actions(e)
    if len(acts) == 1:
        return element(e) + " to " + acts[0]
    return element(e) + " to " + ", ".join(acts[:-1]) + " or " + acts[-1]


def windows(root):
    return [w for w in root if w.get("package") != "com.android.systemui"]


def numbering(root):
    order = {}
    for w in windows(root):
        queue = deque([w])
        while queue:
            e = queue.popleft()
            if actions(e):
                order[id(e)] = len(order)
            queue.extend(list(e))
    return order


def render_list(root):
    order = numbering(root)
    by_index = {}
    for w in windows(root):
        for e in w.iter():
            if id(e) in order:
                by_index[order[id(e)]] = e
    return "\n".join(f"[{i}] {widget(by_index[i])}" for i in range(len(by_index)))


def render_tree(root):
    order = numbering(root)
    lines = []

    def visit(e, depth):
        label = f"[{order[id(e)]}] {widget(e)}" if id(e) in order else element(e)
        lines.append("\t" * depth + label + "\n")
        for child in e:
            visit(child, depth + 1)

    for w in windows(root):
        visit(w, 0)
    return "".join(lines)


def render(path, kind):
    root = ET.parse(path).getroot()
    return render_tree(root) if kind == "tree" else render_list(root)


def check():
    failures = 0
    for screen, name in screens():
        for kind in ("tree", "list"):
            golden = GOLDEN_DIR / f"{name}.{kind}.txt"
            want = render(SHARED / "sphinx-data" / screen, kind)
            got = golden.read_text(encoding="utf-8")
            status = "ok" if got == want else "DIFFERS"
            failures += got != want
            print(f"{status:8} {golden.name}: {len(want.splitlines())} lines")
    return failures


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(1 if check() else 0)
    if len(sys.argv) != 3 or sys.argv[2] not in ("tree", "list"):
        sys.exit(__doc__)
    sys.stdout.write(render(sys.argv[1], sys.argv[2]))
