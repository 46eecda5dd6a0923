#!/usr/bin/python3
"""Writes TFRecord files with an implementation independent of edl's: framing
and CRC-32C (table-driven, in Python) from the format's definition, gzip by
Python's gzip module, tf.train.Examples encoded by hand from the protobuf
wire format. Usage: write_tfrecords.py OUT_PREFIX N
Writes OUT_PREFIX.tfrecord and OUT_PREFIX.tfrecord.gz, each holding records
b"python-record-<i>-" + b"x" * (i % 50) for i in 0..N-1, and
OUT_PREFIX.examples.tfrecord: N Examples with features "label" (int64 i % 2),
"dense" (floats 0.5 i, 1, 2), "words" (bytes w0..w<i % 4>) and, except in
record 7, "sometimes" (int64 42)."""
import gzip
import struct
import sys

POLY = 0x82F63B78  # CRC-32C, reflected
TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload):
    length = struct.pack("<Q", len(payload))
    return (length + struct.pack("<I", masked(crc32c(length))) + payload +
            struct.pack("<I", masked(crc32c(payload))))


def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def field(number, payload):  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def example(i):
    features = {
        "label": field(3, field(1, varint(i % 2))),
        "dense": field(2, field(1, struct.pack("<3f", 0.5 * i, 1.0, 2.0))),
        "words": field(1, b"".join(field(1, b"w%d" % w) for w in range(i % 4 + 1))),
    }
    if i != 7:
        features["sometimes"] = field(3, field(1, varint(42)))
    entries = b"".join(field(1, field(1, k.encode()) + field(2, v)) for k, v in features.items())
    return field(1, entries)


def main():
    prefix, n = sys.argv[1], int(sys.argv[2])
    data = b"".join(frame(b"python-record-%d-" % i + b"x" * (i % 50)) for i in range(n))
    with open(prefix + ".tfrecord", "wb") as f:
        f.write(data)
    with gzip.open(prefix + ".tfrecord.gz", "wb") as f:
        f.write(data)
    with open(prefix + ".examples.tfrecord", "wb") as f:
        f.write(b"".join(frame(example(i)) for i in range(n)))


if __name__ == "__main__":
    main()
