#!/usr/bin/env python3
"""Writes the small GGUF seed corpus of the fuzz tests (tests/data/gguf_corpus) with an encoder
of its own, independent of the C++ writer. Run from the repository root; the files are committed."""
import os
import random
import struct

OUT = "tests/data/gguf_corpus"
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<B",
          U64: "<Q", I64: "<q", F64: "<d"}


def s(x):
    b = x.encode() if isinstance(x, str) else x
    return struct.pack("<Q", len(b)) + b


def value(t, v):
    if t == STR:
        return s(v)
    if t == ARR:
        et, items = v
        out = struct.pack("<IQ", et, len(items))
        return out + b"".join(value(et, i) for i in items)
    return struct.pack(SCALAR[t], v)


def gguf(kvs, tensors, version=3, align=32):
    """kvs: [(key, type, value)]; tensors: [(name, ne, ggml_type, bytes)]"""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += s(k) + struct.pack("<I", t) + value(t, v)
    off, datas = 0, b""
    for name, ne, gt, data in tensors:
        out += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", gt, off)
        pad = (-len(data)) % align
        datas += data + b"\0" * pad
        off += len(data) + pad
    out += b"\0" * ((-len(out)) % align)
    return out + datas


rng = random.Random(5)
files = {
    "header_only.gguf": gguf([], []),
    "values_v2.gguf": gguf([
        ("general.architecture", STR, "llama"), ("u8", U8, 200), ("i8", I8, -7), ("u16", U16, 60000),
        ("i16", I16, -300), ("u32", U32, 4096), ("i32", I32, -1), ("f32", F32, 0.5), ("b", BOOL, 1),
        ("u64", U64, 2**40), ("i64", I64, -2**40), ("f64", F64, 1e-9),
        ("toks", ARR, (STR, ["<unk>", "<s>", "</s>", "ab"])), ("scores", ARR, (F32, [0.0, -1.0, 2.0, 3.5])),
        ("nested", ARR, (ARR, [(I32, [1, 2]), (STR, ["x"])]))], [], version=2),
    "tensors.gguf": gguf([("general.alignment", U32, 16)], [
        ("norm", [8], 0, struct.pack("<8f", *[1.0 + i / 8 for i in range(8)])),
        ("h", [4, 2], 1, struct.pack("<8H", *[0x3C00 + i for i in range(8)])),
        ("bf", [3], 30, struct.pack("<3H", 0x3F80, 0xC000, 0x0000)),
        ("q8", [32, 2], 8, bytes(rng.randrange(256) for _ in range(68))),
        ("q4", [32], 2, bytes(rng.randrange(256) for _ in range(18))),
        ("q41", [32], 3, bytes(rng.randrange(256) for _ in range(20)))], align=16),
    "kquants.gguf": gguf([], [
        ("q4k", [256], 12, bytes(rng.randrange(256) for _ in range(144))),
        ("q5k", [256], 13, bytes(rng.randrange(256) for _ in range(176))),
        ("q6k", [256], 14, bytes(rng.randrange(256) for _ in range(210)))]),
}
os.makedirs(OUT, exist_ok=True)
for name, data in files.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print(name, len(data))
