#!/usr/bin/python3
"""Writes TFRecord files with an implementation independent of edl's: framing
and CRC-32C (table-driven, in Python) from the format's definition, gzip by
Python's gzip module. Usage: write_tfrecords.py OUT_PREFIX N
Writes OUT_PREFIX.tfrecord and OUT_PREFIX.tfrecord.gz, each holding records
b"python-record-<i>-" + b"x" * (i % 50) for i in 0..N-1."""
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


def main():
    prefix, n = sys.argv[1], int(sys.argv[2])
    data = b"".join(frame(b"python-record-%d-" % i + b"x" * (i % 50)) for i in range(n))
    with open(prefix + ".tfrecord", "wb") as f:
        f.write(data)
    with gzip.open(prefix + ".tfrecord.gz", "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
