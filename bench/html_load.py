#!/usr/bin/env python3
"""html_load.py PAGE... -- how long capprof's HTML pages take to become
interactive in headless Chromium (docs/performance.md): per page, its size,
and over REPS loads (default 3) the best time from Page.navigate to the page's
code having drawn the flame graph and wired its handlers (window.capprof.ready),
and the part of it spent in the page's own code (JSON.parse, tree
preparation, first drawing). A figure, not a test: it prints, it does not
judge. Uses tests/html/cdp.py (Chromium over the DevTools protocol).
"""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "html"))
import cdp  # noqa: E402

reps = int(os.environ.get("REPS", "3"))
exe = cdp.find_chromium()
if not exe:
    sys.exit("html_load: no chromium found (.ci/deps installs it)")
b = cdp.Browser(exe, timeout=120)
try:
    for page in sys.argv[1:]:
        best = code = None
        for _ in range(reps):
            b.navigate("about:blank")
            t0 = time.monotonic()
            b.call("Page.navigate", url="file://" + os.path.abspath(page))
            b.wait_for("window.capprof && window.capprof.ready", 120)
            t = time.monotonic() - t0
            if best is None or t < best:
                best, code = t, b.eval("window.capprof.initMs") / 1000
            errs = b.errors()
            if errs:
                sys.exit("html_load: %s: %s" % (page, errs))
        print("html page %s: %.1f MB, interactive after %.2f s (page code %.2f s), best of %d, "
              "load average %.1f" % (os.path.basename(page), os.path.getsize(page) / 1e6, best, code,
                                     reps, os.getloadavg()[0]))
finally:
    b.close()
