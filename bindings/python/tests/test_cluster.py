"""A Python runtime against the real cluster: confluent-kafka's Consumer reads the three
internal topics (examples/cluster_state.py's read_topic), the core holds what Java's REST API
answers (connectors, configs, tasks, statuses, offsets) through a connector's life, and a KIP-875
alter and reset built in Python and sent with confluent-kafka's Producer are what Java's
GET /offsets then shows.

Needs the local cluster: CONNECT_STATE_TEST_CLUSTER=<dir>/cluster.env (scripts/local-cluster
start prints it; .ci/run sets it)."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import pytest

import connect_state
from conftest import ROOT

CLUSTER = os.environ.get("CONNECT_STATE_TEST_CLUSTER")
pytestmark = pytest.mark.skipif(
    not CLUSTER, reason="needs the local cluster: set CONNECT_STATE_TEST_CLUSTER (see .ci/run)"
)

sys.path.insert(0, str(ROOT / "bindings" / "python" / "examples"))
from cluster_state import read_topic  # noqa: E402

T = TypeVar("T")
WAIT = 90.0


def settings() -> Dict[str, List[str]]:
    values: Dict[str, List[str]] = {}
    assert CLUSTER is not None
    for line in Path(CLUSTER).read_text().splitlines():
        if "=" in line:
            name, value = line.split("=", 1)
            values.setdefault(name, []).append(value)
    return values


class Cluster:
    def __init__(self) -> None:
        env = settings()
        self.bootstrap = env["bootstrap"][0]
        self.connect = env["connect"][0]
        self.topics = {
            "config": env["config.storage.topic"][0],
            "status": env["status.storage.topic"][0],
            "offsets": env["offset.storage.topic"][0],
        }

    def rest(self, method: str, path: str, body: Optional[Any] = None) -> Tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.connect + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            text = e.read()
            return e.code, json.loads(text) if text else None

    def read(self) -> Tuple[connect_state.ConfigLog, connect_state.StatusLog, connect_state.OffsetLog, int]:
        """The three topics read to their end, and the offsets topic's partition count."""
        config, status, offsets = connect_state.ConfigLog(), connect_state.StatusLog(), connect_state.OffsetLog()
        read_topic(self.bootstrap, self.topics["config"], config)
        read_topic(self.bootstrap, self.topics["status"], status)
        partitions = read_topic(self.bootstrap, self.topics["offsets"], offsets)
        return config, status, offsets, partitions


def eventually(what: str, check: Callable[[], T], wait: float = WAIT) -> T:
    """`check()` once it stops raising AssertionError, or the last failure after `wait` s."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return check()
        except AssertionError as e:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: {e}") from e
            time.sleep(0.5)


def agrees(cluster: Cluster, connector: str) -> None:
    """The core, fed by confluent-kafka, holds what Java's REST API answers."""
    config, status, offsets, _ = cluster.read()
    configs, statuses, listed = config.snapshot(), status.snapshot(), offsets.snapshot()
    code, names = cluster.rest("GET", "/connectors")
    assert code == 200
    assert sorted(names) == sorted(configs["connectors"])
    code, java_config = cluster.rest("GET", f"/connectors/{connector}/config")
    assert code == 200 and java_config == configs["connector_configs"][connector]
    code, java_tasks = cluster.rest("GET", f"/connectors/{connector}/tasks")
    assert code == 200
    assert len(java_tasks) == configs["connector_task_counts"].get(connector, 0)
    for task in java_tasks:
        assert task["config"] == configs["task_configs"][connector][str(task["id"]["task"])]
    code, java_status = cluster.rest("GET", f"/connectors/{connector}/status")
    assert code == 200
    ours = statuses["connectors"][connector]
    assert (ours["state"], ours["worker_id"]) == (java_status["connector"]["state"], java_status["connector"]["worker_id"])
    our_tasks = {int(n): (t["state"], t["worker_id"]) for n, t in statuses["tasks"].get(connector, {}).items()}
    java_task_states = {t["id"]: (t["state"], t["worker_id"]) for t in java_status["tasks"]}
    assert {n: s for n, s in our_tasks.items() if n in java_task_states} == java_task_states
    code, java_offsets = cluster.rest("GET", f"/connectors/{connector}/offsets")
    assert code == 200
    assert java_offsets["offsets"] == listed["connectors"].get(connector, {}).get("offsets", [])


def send(cluster: Cluster, records: List[Tuple[str, int, bytes, Optional[bytes]]]) -> None:
    """Sends records built by the core to their topics and partitions with confluent-kafka."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})
    failures: List[str] = []

    def delivered(error: Any, message: Any) -> None:
        if error is not None:
            failures.append(str(error))

    for kind, partition, key, value in records:
        producer.produce(cluster.topics[kind], key=key, value=value, partition=partition, on_delivery=delivered)
    assert producer.flush(30) == 0, "records still unsent"
    assert not failures, failures


def test_a_python_runtime_reads_and_writes_as_java(tmp_path: Path) -> None:
    cluster = Cluster()
    connector = f"py-src-{os.getpid()}-{int(time.time())}"
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(1, 11)))
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": f"{connector}-lines",
        "tasks.max": "1",
        "topic.creation.default.replication.factor": "1",
        "topic.creation.default.partitions": "1",
    }
    code, body = cluster.rest("PUT", f"/connectors/{connector}/config", config)
    assert code in (200, 201), body
    try:
        def running() -> None:
            code, status = cluster.rest("GET", f"/connectors/{connector}/status")
            assert code == 200 and status["connector"]["state"] == "RUNNING", status
            assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status
            code, offsets = cluster.rest("GET", f"/connectors/{connector}/offsets")
            assert code == 200 and offsets["offsets"], offsets

        eventually("the source running with an offset", running)
        eventually("running: the core agrees with Java", lambda: agrees(cluster, connector))

        assert cluster.rest("PUT", f"/connectors/{connector}/stop")[0] == 204

        def stopped() -> Tuple[connect_state.ConfigLog, connect_state.OffsetLog, int]:
            code, status = cluster.rest("GET", f"/connectors/{connector}/status")
            assert code == 200 and status["connector"]["state"] == "STOPPED" and status["tasks"] == [], status
            config_log, _, offsets_log, partitions = cluster.read()
            # Java's precondition, from the topics: stopped, with a commit of no tasks.
            offsets_log.reset_offsets(config_log, connector, partitions=partitions)
            return config_log, offsets_log, partitions

        config_log, offsets_log, partitions = eventually(
            "stopped, as the config topic says", lambda: _retry_refused(stopped)
        )
        eventually("stopped: the core agrees with Java", lambda: agrees(cluster, connector))

        # KIP-875 alter, built in Python, sent with confluent-kafka.
        altered = offsets_log.alter_offsets(
            config_log,
            connector,
            [{"partition": {"filename": str(source)}, "offset": {"position": 3}}],
            partitions=partitions,
        )
        assert [(kind, json.loads(key)) for kind, _, key, _ in altered] == [("offsets", [connector, {"filename": str(source)}])]
        send(cluster, altered)

        def shows_the_alter() -> None:
            code, offsets = cluster.rest("GET", f"/connectors/{connector}/offsets")
            assert code == 200
            assert offsets["offsets"] == [{"partition": {"filename": str(source)}, "offset": {"position": 3}}], offsets

        eventually("Java shows the alter", shows_the_alter)
        eventually("altered: the core agrees with Java", lambda: agrees(cluster, connector))

        # KIP-875 reset, from a fresh read of the topics.
        config_log, _, offsets_log, partitions = cluster.read()
        reset = offsets_log.reset_offsets(config_log, connector, partitions=partitions)
        assert reset and all(value is None for _, _, _, value in reset)
        send(cluster, reset)

        def shows_the_reset() -> None:
            code, offsets = cluster.rest("GET", f"/connectors/{connector}/offsets")
            assert code == 200 and offsets["offsets"] == [], offsets

        eventually("Java shows the reset", shows_the_reset)
        eventually("reset: the core agrees with Java", lambda: agrees(cluster, connector))
    finally:
        cluster.rest("DELETE", f"/connectors/{connector}")

    def deleted() -> None:
        config_log, _, _, _ = cluster.read()
        assert connector not in config_log.snapshot()["connectors"]

    eventually("deleted", deleted)


def _retry_refused(check: Callable[[], T]) -> T:
    """`check()`, a refusal of the core's precondition counted as not yet."""
    try:
        return check()
    except connect_state.WriteRefusedError as e:
        raise AssertionError(str(e)) from e
