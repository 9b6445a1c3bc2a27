#!/usr/bin/env python3
"""Compare PNG files by their pixels, not their bytes (bench/analyze.sh):
two encoders may filter and deflate the same image differently.

  png_pixels.py A.png B.png    exit 0 when both decode to the same pixels

Reads 8-bit greyscale, RGB and RGBA images, not interlaced: what ptuprobe
and image/png write. The standard library only (zlib).
"""
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    pos, idat, head = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, ctype, _, _, interlace = head
    if depth != 8 or interlace or ctype not in CHANNELS:
        sys.exit("%s: depth %d, colour type %d, interlace %d: not read here" % (path, depth, ctype, interlace))
    bpp = CHANNELS[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    out = bytearray()
    for y in range(height):
        at = y * (stride + 1)
        filt, row = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        if filt == 1:
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 0xff
        elif filt == 2:
            row = bytearray((a + b) & 0xff for a, b in zip(row, prev))
        elif filt == 3:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + (left + prev[i]) // 2) & 0xff
        elif filt == 4:
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        out += row
        prev = row
    return (width, height, ctype), bytes(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = pixels(sys.argv[1]), pixels(sys.argv[2])
    if a != b:
        print("%s and %s differ in their pixels" % (sys.argv[1], sys.argv[2]), file=sys.stderr)
        sys.exit(1)
