#!/usr/bin/python3
"""Writes the images the image tests read, with PIL (Debian's python3-pil),
not edl, and what PIL decodes them to (the oracle).

  write_images.py cases DIR
      good and bad JPEG/PNG files in DIR, and for each good one the pixels
      PIL decodes it to in DIR/<name>.<L|RGB>.raw; DIR/manifest.txt lists
      "name mode width height" per raw file.
  write_images.py folders DIR IDX_IMAGES IDX_LABELS COUNT EXT
      the first COUNT Fashion-MNIST records as DIR/<label>/<index>.<EXT>.
  write_images.py tfrecord FILE IDX_IMAGES IDX_LABELS COUNT EXT
      the same records as tf.train.Examples in the TF-Slim/ImageNet layout:
      "image/encoded" (the PNG or JPEG bytes), "image/format",
      "image/class/label" (int64) and "image/filename"; the Examples and
      the TFRecord framing are encoded by tests/data/write_tfrecords.py.
"""
import gzip
import random
import struct
import sys
import zlib

from PIL import Image


def noise(mode, w, h, seed):
    rnd = random.Random(seed)
    bands = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[mode]
    # Smooth-ish content so that JPEG round trips are realistic.
    data = bytearray()
    for y in range(h):
        for x in range(w):
            for b in range(bands):
                data.append((x * 17 + y * 29 + b * 71 + rnd.randrange(40)) % 256)
    return Image.frombytes(mode, (w, h), bytes(data))


def dump(d, manifest, name, img, mode):
    img = img.convert(mode) if img.mode != mode else img
    with open(f"{d}/{name}.{mode}.raw", "wb") as f:
        f.write(img.tobytes())
    manifest.append(f"{name} {mode} {img.size[0]} {img.size[1]}")


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def cases(d):
    manifest = []
    good = {
        "gray.png": noise("L", 13, 7, 1),
        "rgb.png": noise("RGB", 9, 11, 2),
        "rgba.png": noise("RGBA", 10, 6, 3),
        "la.png": noise("LA", 5, 8, 4),
        "palette.png": noise("RGB", 12, 9, 5).quantize(16),
        "bit1.png": noise("L", 17, 5, 6).convert("1"),
    }
    trns = noise("RGB", 8, 8, 7).quantize(8)
    trns.info["transparency"] = 3
    good["palette_trns.png"] = trns
    for name, img in good.items():
        img.save(f"{d}/{name}", **({"transparency": 3} if name == "palette_trns.png" else {}))
        back = Image.open(f"{d}/{name}")
        dump(d, manifest, name, back, "L")
        dump(d, manifest, name, back, "RGB")
    noise("RGB", 37, 23, 8).save(f"{d}/rgb.jpg", quality=90)
    noise("RGB", 21, 16, 9).save(f"{d}/rgb444.jpg", quality=95, subsampling=0)
    noise("L", 19, 14, 10).save(f"{d}/gray.jpg", quality=85)
    noise("RGB", 200, 120, 11).save(f"{d}/big.jpg", quality=90)
    for name in ["rgb.jpg", "rgb444.jpg", "gray.jpg", "big.jpg"]:
        dump(d, manifest, name, Image.open(f"{d}/{name}"), "RGB")
        # A JPEG wanted gray: libjpeg's own luma (PIL's draft mode "L").
        img = Image.open(f"{d}/{name}")
        img.draft("L", img.size)
        dump(d, manifest, name, img, "L")
    # DCT scaling: PIL's draft picks libjpeg's 1/4 scale for this request.
    img = Image.open(f"{d}/big.jpg")
    img.draft("RGB", (50, 30))
    dump(d, manifest, "big.jpg@4", img, "RGB")

    # Bad input.
    jpg = open(f"{d}/rgb.jpg", "rb").read()
    open(f"{d}/truncated.jpg", "wb").write(jpg[: len(jpg) * 6 // 10])
    png = bytearray(open(f"{d}/rgb.png", "rb").read())
    idat = png.find(b"IDAT")
    length = struct.unpack(">I", png[idat - 4:idat])[0]
    crc = bytearray(png)
    crc[idat + 4 + length] ^= 0x55  # the IDAT chunk's CRC, its data intact
    open(f"{d}/crc.png", "wb").write(bytes(crc))
    png[idat + 6] ^= 0x55  # a byte of the compressed data
    open(f"{d}/corrupt_data.png", "wb").write(bytes(png))
    open(f"{d}/notimage.png", "wb").write(b"label,pixels\n1,2\n")
    open(f"{d}/empty.jpg", "wb").write(b"")
    noise("RGB", 16, 16, 12).convert("CMYK").save(f"{d}/cmyk.jpg")
    Image.frombytes("I;16", (4, 3), bytes(range(24))).save(f"{d}/sixteen.png")
    # A decompression bomb: a valid 8-bit gray PNG header of 30000 x 30000
    # pixels and a tiny IDAT (edl must refuse it from the header).
    ihdr = struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(
        b"IDAT", zlib.compress(b"\0" * 100)) + png_chunk(b"IEND", b"")
    open(f"{d}/bomb.png", "wb").write(bomb)
    # The same as a JPEG: rgb.jpg with its frame header saying 30000 x 30000.
    j = bytearray(jpg)
    sof = j.find(b"\xff\xc0")
    struct.pack_into(">HH", j, sof + 5, 30000, 30000)
    open(f"{d}/bomb.jpg", "wb").write(bytes(j))
    with open(f"{d}/manifest.txt", "w") as f:
        f.write("\n".join(manifest) + "\n")


def read_idx(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def folders(d, images, labels, count, ext):
    import os
    dims, pixels = read_idx(images)
    _, ys = read_idx(labels)
    size = dims[1] * dims[2]
    for i in range(count):
        os.makedirs(f"{d}/{ys[i]}", exist_ok=True)
        img = Image.frombytes("L", (dims[2], dims[1]), pixels[i * size:(i + 1) * size])
        img.save(f"{d}/{ys[i]}/{i}.{ext}", **({"quality": 95} if ext == "jpg" else {}))


def tfrecord(path, images, labels, count, ext):
    import io
    import os
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from write_tfrecords import field, frame, varint
    dims, pixels = read_idx(images)
    _, ys = read_idx(labels)
    size = dims[1] * dims[2]
    out = bytearray()
    for i in range(count):
        img = Image.frombytes("L", (dims[2], dims[1]), pixels[i * size:(i + 1) * size])
        buf = io.BytesIO()
        img.save(buf, format="PNG" if ext == "png" else "JPEG",
                 **({"quality": 95} if ext == "jpg" else {}))
        features = {
            b"image/encoded": field(1, field(1, buf.getvalue())),
            b"image/format": field(1, field(1, ext.encode())),
            b"image/class/label": field(3, field(1, varint(ys[i]))),
            b"image/filename": field(1, field(1, b"%d.%s" % (i, ext.encode()))),
        }
        entries = b"".join(field(1, field(1, k) + field(2, v)) for k, v in features.items())
        out += frame(field(1, entries))
    open(path, "wb").write(bytes(out))


if __name__ == "__main__":
    if sys.argv[1] == "tfrecord":
        tfrecord(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    elif sys.argv[1] == "cases":
        cases(sys.argv[2])
    elif sys.argv[1] == "folders":
        folders(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    else:
        sys.exit("usage: write_images.py cases DIR | folders DIR IMAGES LABELS COUNT EXT")
