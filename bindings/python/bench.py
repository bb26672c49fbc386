#!/usr/bin/env python3
"""Replay throughput of the connect_state package from Python, for `connect-state bench --python`.

    connect-state bench --python [bindings/python/bench.py]

The bench writes its synthetic topics as record files and runs this script on them, so both
sides replay the very same records; it prints this script's figures beside the Rust replay's and
their ratios. By hand:

    bench.py [--runs N] config=FILE status=FILE offsets=FILE

Record files are big-endian frames: i32 partition, i64 offset, i32 key length (-1: no key), the
key, i32 value length (-1: a tombstone), the value. The records are decoded before the clock
starts; what is timed is `handle_records` over them (a fresh log each run, the best of `--runs`
for the config and status topics; the offsets topic streamed once in batches, as the Rust bench
does), then `mark_caught_up`. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import struct
import sys
import time
from typing import BinaryIO, Callable, Dict, Iterator, List, Optional, Tuple, Union

import connect_state

Record = Tuple[Optional[bytes], Optional[bytes], int, int]
Log = Union[connect_state.ConfigLog, connect_state.StatusLog, connect_state.OffsetLog]
HEAD = struct.Struct(">iqi")
LENGTH = struct.Struct(">i")
BATCH = 8_192


def frames(stream: BinaryIO) -> Iterator[Record]:
    """The records of a record file, as (key, value, offset, partition) tuples."""

    def exactly(n: int) -> bytes:
        data = stream.read(n)
        if len(data) != n:
            raise ValueError(f"a record file ends inside a record ({len(data)} of {n} bytes)")
        return data

    while True:
        head = stream.read(HEAD.size)
        if not head:
            return
        if len(head) != HEAD.size:
            raise ValueError("a record file ends inside a record head")
        partition, offset, key_length = HEAD.unpack(head)
        key = None if key_length < 0 else exactly(key_length)
        (value_length,) = LENGTH.unpack(exactly(LENGTH.size))
        value = None if value_length < 0 else exactly(value_length)
        yield key, value, offset, partition


def best_replay(make: Callable[[], Log], records: List[Record], runs: int) -> Tuple[float, Log]:
    """The best of `runs` replays of `records` into fresh logs: (records per second, the log)."""
    best, log = float("inf"), make()
    for _ in range(runs):
        log = make()
        start = time.perf_counter()
        log.handle_records(records)
        log.mark_caught_up()
        best = min(best, time.perf_counter() - start)
    return len(records) / best, log


def streamed_replay(path: str) -> Tuple[float, connect_state.OffsetLog]:
    """The offsets topic streamed once in batches (decoding untimed): (records per second, log)."""
    log = connect_state.OffsetLog()
    busy, count = 0.0, 0
    with open(path, "rb") as stream:
        records = frames(stream)
        while True:
            batch = [r for _, r in zip(range(BATCH), records)]
            if not batch:
                break
            start = time.perf_counter()
            log.handle_records(batch)
            busy += time.perf_counter() - start
            count += len(batch)
    start = time.perf_counter()
    log.mark_caught_up()
    busy += time.perf_counter() - start
    return count / busy, log


def main(argv: List[str]) -> Dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("files", nargs=3, metavar="TOPIC=FILE")
    args = parser.parse_args(argv)
    files = dict(f.split("=", 1) for f in args.files if "=" in f)
    if sorted(files) != ["config", "offsets", "status"]:
        parser.error("give config=FILE status=FILE offsets=FILE")
    runs = max(1, args.runs)
    with open(files["config"], "rb") as stream:
        config_records = list(frames(stream))
    config_rate, config = best_replay(connect_state.ConfigLog, config_records, runs)
    del config_records
    with open(files["status"], "rb") as stream:
        status_records = list(frames(stream))
    status_rate, status = best_replay(connect_state.StatusLog, status_records, runs)
    del status_records
    offsets_rate, offsets = streamed_replay(files["offsets"])
    return {
        "python_version": platform.python_version(),
        "package_version": connect_state.__version__,
        "config_records_per_sec": config_rate,
        "config_connectors": len(config.snapshot()["connectors"]),
        "status_records_per_sec": status_rate,
        "status_connectors": len(status.snapshot()["connectors"]),
        "offsets_records_per_sec": offsets_rate,
        "offsets_live_entries": len(offsets.snapshot()["entries"]),
    }


if __name__ == "__main__":
    json.dump(main(sys.argv[1:]), sys.stdout)
    sys.stdout.write("\n")
