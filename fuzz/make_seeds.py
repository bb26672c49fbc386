"""Builds the committed seed corpora of the fuzz targets from tests/vectors/*.json.

    python3 fuzz/make_seeds.py
"""
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent
vectors = sorted((root.parent / "tests" / "vectors").glob("*.json"))


def encode(records):
    """The byte format of connect_state_core::fuzzing::decode."""
    out = bytearray()
    for r in records:
        key = (r["key"] or "").encode()[:255]
        value = (r["payload"] or "").encode()
        if len(value) % 2:
            value += b" "  # JSON tolerates trailing whitespace; lengths are stored halved
        value = value[:510]
        control = 12 | ((r.get("partition", 0) & 3) << 4)
        if r["payload"] is None:
            control |= 0x40
        if r["key"] is None:
            control |= 0x80
        out += bytes([control, 0, len(key)]) + key + bytes([len(value) // 2]) + value
    return bytes(out)


for vector_path in vectors:
    vector = json.loads(vector_path.read_text())
    name = "seed-" + vector_path.stem
    records = vector["records"]
    targets = {"config": ["config_records"], "status": ["status_records"], "offsets": ["offsets_records"]}
    for target in targets[vector["topic"]]:
        d = root / "corpus" / target
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(encode(records))
    lines = "".join(json.dumps({"topic": "t", "partition": r.get("partition", 0), "offset": r["offset"],
                                "key": r["key"], "payload": r["payload"]}) + "\n" for r in records)
    d = root / "corpus" / "kcat_lines"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(lines)
print("seeds written")

# The structured targets decode any bytes (through `arbitrary`); their seeds are fixed
# pseudo-random inputs long enough to decode to a full run or log.
import random

for target, size in [("simulator", 160), ("differential", 400)]:
    d = root / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    for n in range(1, 5):
        (d / f"seed-random-{n}").write_bytes(random.Random(f"{target}-{n}").randbytes(size))
