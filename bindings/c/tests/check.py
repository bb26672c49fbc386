#!/usr/bin/env python3
"""The C ABI's tests: a C host (replay.c) compiled with cc under AddressSanitizer and
UndefinedBehaviorSanitizer replays every conformance vector, and its snapshot, events and
restored snapshot must equal `connect-state replay --format json --events` on the same dump;
then the hostile calls each get their status code, with no sanitizer error and no leak.

    python3 bindings/c/tests/check.py [--target-dir target/debug]

It builds what it needs with cargo (the C library and the CLI) unless --no-build is given.
Numbers are compared by their text (the same printer made both), so -0.0 is not 0.0.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[3]


def hex_or_dash(text):
    return "-" if text is None else text.encode("utf-8").hex()


def exact(text):
    """JSON with every number kept as its text."""
    return json.loads(text, parse_float=str, parse_int=str)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-dir", default=str(ROOT / "target" / "debug"))
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    target = pathlib.Path(args.target_dir)
    if not args.no_build:
        subprocess.run(
            ["cargo", "build", "-j2", "-p", "connect-state-c", "-p", "connect-state-cli"],
            cwd=ROOT, check=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="connect-state-c-"))
    host = work / "replay"
    compile_cmd = [
        os.environ.get("CC", "cc"), "-std=c11", "-D_DEFAULT_SOURCE", "-Wall", "-Wextra", "-Werror",
        "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g",
        str(ROOT / "bindings/c/tests/replay.c"), "-I", str(ROOT / "bindings/c/include"),
        str(target / "libconnect_state_c.a"), "-lpthread", "-ldl", "-lm", "-o", str(host),
    ]
    subprocess.run(compile_cmd, check=True)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    topics = {"config": 0, "status": 1, "offsets": 2}
    failures = []
    vectors = sorted((ROOT / "tests/vectors").glob("*.json"))
    for path in vectors:
        vector = json.loads(path.read_text())
        live_from = vector.get("live_from")
        lines, dump = [], []
        live = False
        for r in vector["records"]:
            if live_from is not None and not live and r["offset"] >= live_from:
                lines.append("LIVE")
                live = True
            lines.append(" ".join([str(r.get("partition", 0)), str(r["offset"]),
                                   hex_or_dash(r.get("key")), hex_or_dash(r.get("payload")), "-"]))
            dump.append(json.dumps({"partition": r.get("partition", 0), "offset": r["offset"],
                                    "key": r.get("key"), "payload": r.get("payload")}))
        ran = subprocess.run([str(host), str(topics[vector["topic"]])], input="\n".join(lines) + "\n",
                             capture_output=True, text=True, env=env)
        if ran.returncode != 0:
            failures.append(f"{path.name}: the C host exited {ran.returncode}: {ran.stderr[-2000:]}")
            continue
        out = {"EVENT": [], "SNAPSHOT": None, "RESTORED": None}
        for line in ran.stdout.splitlines():
            label, _, text = line.partition(" ")
            if label == "EVENT":
                out["EVENT"].append(exact(text))
            else:
                out[label] = exact(text)
        dump_file = work / f"{path.stem}.jsonl"
        dump_file.write_text("\n".join(dump) + "\n")
        cli = [str(target / "connect-state"), "replay", "--topic", vector["topic"], "--format", "json",
               "--events", str(dump_file)]
        if live_from is not None:
            cli[-1:-1] = ["--live-from", str(live_from)]
        expected = exact(subprocess.run(cli, capture_output=True, text=True, check=True).stdout)
        if out["SNAPSHOT"] != expected["snapshot"]:
            failures.append(f"{path.name}: the C host's snapshot differs from the CLI's")
        if out["RESTORED"] != out["SNAPSHOT"]:
            failures.append(f"{path.name}: the restored machine's snapshot differs")
        if out["EVENT"] != expected["events"]:
            failures.append(f"{path.name}: the C host's events differ from the CLI's")
    hostile = subprocess.run([str(host), "--hostile"], capture_output=True, text=True, env=env)
    if hostile.returncode != 0:
        failures.append(f"hostile calls: {hostile.stderr[-4000:]}")
    version = subprocess.run([str(host), "--contract-version"], capture_output=True, text=True,
                             env=env, check=True).stdout.strip()
    shown = subprocess.run([str(target / "connect-state"), "--version"], capture_output=True,
                           text=True, check=True).stdout
    if f"(JSON contract {version})" not in shown:
        failures.append(f"cs_contract_version() is {version}, the CLI says {shown.strip()!r}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"C ABI: {len(vectors)} vectors replayed by a C host as the CLI replays them; "
          f"hostile calls refused; contract version {version}, the CLI's; no sanitizer error, no leak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
