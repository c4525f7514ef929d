"""The package builds as a wheel holding every module and the py.typed marker."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_the_modules_and_py_typed(tmp_path: Path) -> None:
    # Build from a copy so the build leaves no build/ or egg-info/ in the source tree.
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", ".pytest_cache"))
    out = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet"]
    subprocess.run([*pip, str(source), "-w", str(out)], check=True, capture_output=True, stdin=subprocess.DEVNULL)
    wheels = list(out.glob("phonebench-*.whl"))
    assert len(wheels) == 1, wheels
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    expected = {p.relative_to(ROOT).as_posix() for p in (ROOT / "phonebench").rglob("*.py")}
    assert expected <= names, expected - names
    assert "phonebench/py.typed" in names
    assert {"phonebench/client.py", "phonebench/gym.py", "phonebench/adapters/verl.py"} <= names
    assert not any(n.startswith("tests/") for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheels[0]).read(metadata).decode()
    assert "Requires-Dist: httpx" in text and "Provides-Extra: gym" in text
