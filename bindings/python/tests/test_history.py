"""History through Python tells what `connect-state history --format json` tells on the same
dumps: every entry, the compaction notices, the counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

import connect_state
from conftest import Vector, run_cli, vectors

VECTORS = {v.name: v for v in vectors()}
CLUSTERS = [
    ("config-01-lifecycle", "status-01-lifecycle", "offsets-01-listing"),
    ("config-02-crash-compacted-recovery", "status-03-topics", "offsets-02-events"),
    ("config-07-deleted-connector-ghosts", "status-02-keys-and-values", "offsets-03-decimals"),
]


@pytest.mark.parametrize("names", CLUSTERS, ids=["-".join(n.split("-")[1] for n in c) for c in CLUSTERS])
@pytest.mark.parametrize("show_secrets", [False, True])
def test_history_equals_the_cli(names: List[str], show_secrets: bool, tmp_path: Path) -> None:
    args = ["history", "--format", "json"] + (["--show-secrets"] if show_secrets else [])
    history = connect_state.History(show_secrets=show_secrets)
    entries: List[Dict[str, Any]] = []
    for name in names:
        vector: Vector = VECTORS[name]
        dump = tmp_path / f"{vector.topic}.jsonl"
        dump.write_text(vector.kcat_lines())
        args += ["--from-dump", f"{vector.topic}={dump}"]
        # Records without timestamps are told topic by topic: config, status, offsets.
        for record in vector.tuples():
            entries.extend(history.handle_record(vector.topic, *record))  # type: ignore[arg-type]
    end = history.finish()
    expected = run_cli(args)
    assert entries + end["entries"] == expected["entries"]
    assert {k: end[k] for k in ("compacted", "records", "skipped")} == {
        k: expected[k] for k in ("compacted", "records", "skipped")
    }
    assert expected["entries"], "the cluster tells something"


def test_a_connector_filter_keeps_its_entries_only() -> None:
    vector = VECTORS["config-01-lifecycle"]
    everything = connect_state.History()
    only = connect_state.History(connectors=["orders"])
    none = connect_state.History(connectors=["nobody"])
    told: Dict[str, List[Dict[str, Any]]] = {"all": [], "orders": [], "nobody": []}
    for record in vector.tuples():
        told["all"] += everything.handle_records("config", [record])
        told["orders"] += only.handle_records("config", [record])
        told["nobody"] += none.handle_records("config", [record])
    assert told["orders"] == [e for e in told["all"] if e["connector"] == "orders"]
    assert told["nobody"] == []
