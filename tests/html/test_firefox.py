#!/usr/bin/env python3
"""test_firefox.py CAPPROF CALLS WORKDIR -- the HTML page opens in Firefox.

Profiles the bundled example, writes its page, and has headless Firefox
(Debian's firefox-esr) load it from file:// and take a screenshot
(firefox --headless --screenshot, after the load event). The page's script
must have run and drawn the flame graph: the screenshot (firefox.png, kept in
WORKDIR) must hold many pixels of the graph's warm colours, which nothing
but the canvas drawing paints (a page whose script fails shows about 1,000;
a working one about 200,000). Fails loudly when Firefox is missing.
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

CAPPROF, CALLS, W = sys.argv[1], sys.argv[2], sys.argv[3]


def read_png(path):
    """(width, height, channels, rows of bytes) of an 8-bit RGB(A) PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("PNG kind not handled: depth %d, colour %d" % (depth, ctype))
            ch = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), width * ch, [], bytearray(width * ch)
    for y in range(height):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b, c = prev[i], prev[i - ch] if i >= ch else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, ch, rows


def main():
    exe = shutil.which("firefox-esr") or shutil.which("firefox")
    if not exe:
        sys.exit("test_firefox: FAIL: no firefox-esr found (installed by .ci/deps): "
                 "the page cannot be tried in Firefox")
    os.makedirs(W, exist_ok=True)
    dump, page = os.path.join(W, "demo.capprof"), os.path.join(W, "report.html")
    shot, profile = os.path.join(W, "firefox.png"), os.path.join(W, "profile")
    for p in (dump, shot):
        if os.path.exists(p):
            os.remove(p)
    subprocess.run([CALLS], env=dict(os.environ, CAPPROF_OUTPUT=dump, CAPPROF_SAMPLE="off"), check=True,
                   stdout=subprocess.DEVNULL)
    r = subprocess.run([CAPPROF, "export", "--format=html", "-o", page, dump])
    if r.returncode not in (0, 3):
        sys.exit("test_firefox: capprof export failed")
    shutil.rmtree(profile, ignore_errors=True)
    os.makedirs(profile)
    subprocess.run([exe, "--headless", "--no-remote", "--profile", profile,
                    "--window-size=1280,900", "--screenshot", shot, "file://" + os.path.abspath(page)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
                   env=dict(os.environ, MOZ_HEADLESS="1"))
    if not os.path.exists(shot):
        sys.exit("test_firefox: FAIL: Firefox wrote no screenshot")
    width, height, ch, rows = read_png(shot)
    warm = 0
    for line in rows:
        for x in range(0, width * ch, ch):
            r, g, b = line[x], line[x + 1], line[x + 2]
            warm += r > 190 and 60 < g < 200 and b < 120   # the graph's reds, oranges, yellows
    print("firefox: %dx%d screenshot, %d flame-graph pixels" % (width, height, warm))
    if warm < width * height // 20:
        sys.exit("test_firefox: FAIL: the flame graph is not drawn in Firefox (see %s)" % shot)
    print("ok: the page opens from file:// in Firefox and draws its flame graph (%s)" % shot)


main()
