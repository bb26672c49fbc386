"""`connect-state bench --python` runs bench.py on the bench's own synthetic records: the Python
replay must reach the states the Rust replay reached (the bench fails otherwise), and the row is
in the report. No assertion on times or ratios."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import connect_state
from conftest import ROOT, cli_binary


def test_the_bench_replays_the_same_records_from_python() -> None:
    env = dict(os.environ)
    # bench.py runs as a program: the python3 on PATH must be this interpreter, with the package.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    script = ROOT / "bindings" / "python" / "bench.py"
    done = subprocess.run(
        [cli_binary(), "bench", "--scale", "tiny", "--format", "json", "--python", str(script)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["python_package_version"] == connect_state.__version__
    assert report["python_version"] == ".".join(map(str, sys.version_info[:3]))
    for topic in ("config", "status", "offsets"):
        assert report[f"python_{topic}_replay_records_per_sec"] > 0
        assert report[f"python_{topic}_to_rust_ratio"] > 0
