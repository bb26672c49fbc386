"""Helpers of the Python package's tests: the vectors, kcat dumps, and the connect-state binary
the answers are compared with."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[3]
VECTORS = sorted((ROOT / "tests" / "vectors").glob("*.json"))

# Under CI (CONNECT_STATE_REQUIRE_EXTERNAL=1) what a test needs must be there: it fails instead of
# skipping.
REQUIRED = os.environ.get("CONNECT_STATE_REQUIRE_EXTERNAL") == "1"


def missing(why: str) -> None:
    """Skips the test, or fails it when CI requires everything."""
    if REQUIRED:
        pytest.fail(why)
    pytest.skip(why)


def cli_binary() -> str:
    """The connect-state binary: CONNECT_STATE_BIN, or the workspace's debug build."""
    binary = os.environ.get("CONNECT_STATE_BIN") or str(ROOT / "target" / "debug" / "connect-state")
    if not Path(binary).exists():
        missing(f"no connect-state binary at {binary} (cargo build -p connect-state-cli, or set CONNECT_STATE_BIN)")
    return binary


def run_cli(args: Sequence[str], stdin: Optional[str] = None) -> Any:
    """Runs the binary; returns its standard output parsed as JSON."""
    done = subprocess.run([cli_binary(), *args], input=stdin, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"connect-state {' '.join(args)}: exit {done.returncode}: {done.stderr}"
    return json.loads(done.stdout)


class Vector:
    """A conformance vector of tests/vectors."""

    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text())
        self.name = path.stem
        self.topic: str = data["topic"]
        self.live_from: Optional[int] = data.get("live_from")
        self.records: List[Dict[str, Any]] = data["records"]

    def tuples(self) -> List[Tuple[Optional[bytes], Optional[bytes], int, int]]:
        """The records as handle_records takes them."""
        return [
            (
                None if r["key"] is None else r["key"].encode(),
                None if r.get("payload") is None else r["payload"].encode(),
                r["offset"],
                r.get("partition", 0),
            )
            for r in self.records
        ]

    def kcat_lines(self) -> str:
        """The records as a kcat JSON-lines dump."""
        return "".join(
            json.dumps(
                {"partition": r.get("partition", 0), "offset": r["offset"], "key": r["key"], "payload": r.get("payload")}
            )
            + "\n"
            for r in self.records
        )

    def replay_args(self) -> List[str]:
        args = ["replay", "--topic", self.topic, "--format", "json", "--events"]
        if self.live_from is not None:
            args += ["--live-from", str(self.live_from)]
        return args


def vectors() -> Iterator[Vector]:
    assert len(VECTORS) >= 5, f"the vectors are missing under {ROOT / 'tests' / 'vectors'}"
    for path in VECTORS:
        yield Vector(path)


def kcat_dump(records: Sequence[Tuple[Optional[bytes], Optional[bytes], int, int]]) -> str:
    """A kcat dump of (key, value, offset, partition) records with UTF-8 keys and values."""
    return "".join(
        json.dumps(
            {
                "partition": partition,
                "offset": offset,
                "key": None if key is None else key.decode(),
                "payload": None if value is None else value.decode(),
            }
        )
        + "\n"
        for key, value, offset, partition in records
    )
