"""`phonebench rollouts` + `phonebench export` read by Hugging Face `datasets`: a small run of
the starter suite is exported as SFT chats and as trajectories, loaded with
``datasets.load_dataset("json", ...)``, and every assistant turn reads back (in canonical JSON
and, through ``phonebench parse-action``, in SPHINX's syntax) as the trajectory's action."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

# No network and no shared cache: everything the test loads is a local file.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import datasets  # noqa: E402

# Two calendar tasks of the starter suite: a few seconds with the reference agent.
TASKS = "calendar.c*"


def _run(binary: str, *args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PHONEBENCH_CACHE=str(cache))
    for var in ("PHONEBENCH_MODEL", "PHONEBENCH_BASE_URL", "PHONEBENCH_API_KEY_ENV"):
        env.pop(var, None)
    return subprocess.run(
        [binary, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env, check=False
    )


@pytest.fixture(scope="module")
def run_dir(binary: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    out = root / "run"
    done = _run(
        binary,
        *("rollouts", "--suite", "starter", "--tasks", TASKS, "--agent", "reference"),
        *("--quiet", "--no-report", "--out", str(out)),
        cache=root / "cache",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verifier-confirmed: 2 of 2 scored episodes" in done.stdout, done.stdout
    for args in (["--format", "sft"], ["--format", "trajectory"]):
        exported = _run(binary, "export", str(out), *args, cache=root / "cache")
        assert exported.returncode == 0, exported.stdout + exported.stderr
    return out


def _load(path: Path, cache: Path) -> datasets.Dataset:
    return datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(cache))


def test_sft_export_loads_with_datasets_and_round_trips(binary: str, run_dir: Path, tmp_path: Path) -> None:
    export = run_dir / "export"
    sft = _load(export / "sft.jsonl", tmp_path / "hf")
    trajectory = _load(export / "trajectory.jsonl", tmp_path / "hf")
    assert sft.column_names == ["messages", "images", "episode", "task_id", "step"]
    assert set(trajectory.column_names) >= {
        "episode", "task_id", "step", "observation", "screenshot", "action", "raw", "reward", "done", "success",
    }
    assert len(sft) == len(trajectory) > 0

    # Compared as JSON text read back: `datasets` widens structs to the union of their fields,
    # filling absent ones with None, so its rows are not the records as written.
    actions = {}
    for line in (export / "trajectory.jsonl").read_text().splitlines():
        record = json.loads(line)
        actions[(record["episode"], record["step"])] = record["action"]

    for row in sft:
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["system", "user", "assistant"]
        user = row["messages"][1]["content"]
        assert user.count("<image>") == len(row["images"]) == 1
        assert (export / row["images"][0]).is_file()
        assistant = row["messages"][2]["content"]
        assert json.loads(assistant) == actions[(row["episode"], row["step"])], assistant

    # The same steps printed in SPHINX's syntax read back through the binary's own parser.
    sphinx = tmp_path / "sphinx" / "sft.jsonl"
    done = _run(
        binary, "export", str(run_dir), "--format", "sft", "--syntax", "sphinx", "--out", str(sphinx),
        cache=tmp_path / "cache",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _load(sphinx, tmp_path / "hf")
    assert len(rows) > 0
    for row in rows:
        said = row["messages"][2]["content"]
        parsed = _run(binary, "parse-action", "--syntax", "sphinx", said, cache=tmp_path / "cache")
        assert parsed.returncode == 0, parsed.stderr
        assert json.loads(parsed.stdout) == actions[(row["episode"], row["step"])], said


def test_the_dataset_card_names_the_data_files(run_dir: Path, tmp_path: Path) -> None:
    card = (run_dir / "export" / "README.md").read_text()
    assert card.startswith("---\n")
    front, _, body = card.removeprefix("---\n").partition("\n---\n")
    meta = yaml.safe_load(front)
    assert meta["configs"][0] == {"config_name": "default", "data_files": "sft.jsonl"}
    assert {"config_name": "trajectory", "data_files": "trajectory.jsonl"} in meta["configs"]
    assert meta["license"] == "apache-2.0"
    assert meta["task_categories"] == ["image-text-to-text"]
    assert "- suite: `starter`" in body and "- agent: `reference`" in body
    # The card's own configuration is what the Hub (and `datasets`, from the folder) loads.
    ds = datasets.load_dataset(str(run_dir / "export"), split="train", cache_dir=str(tmp_path / "hf"))
    assert "messages" in ds.column_names
