#!/usr/bin/env python3
"""test_page.py CAPPROF CALLS WORKDIR GEN_DUMP -- the HTML page in a real browser.

Profiles the bundled example (CALLS, examples/calls.c), writes its page with
'capprof export --format=html' and a diff page with 'capprof diff
--format=html' (60 rounds against 200, two runs each), opens both from
file:// in headless Chromium (driven through the DevTools protocol, cdp.py)
and checks: no console error, no exception, no network request; the canvas
is drawn; the known most-called function heads the table sorted by calls;
clicking a known function's node zooms to it and the breadcrumb names it;
its figures are those 'capprof tree' prints; hovering shows its tooltip; the
callers pane lists its caller; search finds a known name. Names that hold
markup (GEN_DUMP's 'markup' dump) show as text and run nothing. Screenshots
(report.png, diff.png) stay in WORKDIR as artifacts. Fails loudly when
Chromium is missing (.ci/deps installs it).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

CAPPROF, CALLS, W, GEN = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
failures = []


def same_cell(a, b):
    """Two printed figures agree: equal, or the same unit and within one unit
    of the last printed digit (the page divides totals it keeps in ns, the
    tool ticks: a quotient on a rounding boundary may round either way)."""
    if a == b:
        return True
    fa, fb = a.replace(",", "").split(), b.replace(",", "").split()
    if len(fa) != len(fb) or fa[1:] != fb[1:]:
        return False
    try:
        x, y = float(fa[0].rstrip("%")), float(fb[0].rstrip("%"))
    except ValueError:
        return False
    decimals = len(fa[0].rstrip("%").partition(".")[2])
    return abs(x - y) <= 1.01 * 10 ** -decimals


def same_rows(got, want):
    return len(got) == len(want) and all(
        len(g) == len(w) and all(same_cell(x, y) for x, y in zip(g, w)) for g, w in zip(got, want))

def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def run(*args, env=None):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode not in (0, 3):     # 3: output written, a module not symbolized
        sys.exit("test_page: %s exited %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def profile(name, rounds):
    path = os.path.join(W, name + ".capprof")
    if os.path.exists(path):
        os.remove(path)
    env = dict(os.environ, CAPPROF_OUTPUT=path, CAPPROF_SAMPLE="off")   # the hooks' times
    run(CALLS, str(rounds), env=env)
    return path


PIXELS = """(function () {
  var c = document.getElementById('flame'), d = c.getContext('2d')
    .getImageData(0, 0, c.width, c.height).data, n = 0, red = 0, blue = 0, magenta = 0;
  for (var i = 0; i < d.length; i += 4) {
    var r = d[i], g = d[i + 1], b = d[i + 2];
    if (d[i + 3] === 0 || (r > 245 && g > 245 && b > 245)) continue;
    n++;
    if (r > 150 && g < 110 && b < 110) red++;
    if (b > 150 && r < 110) blue++;
    if (r > 180 && g < 120 && b > 180) magenta++;
  }
  return {painted: n, all: d.length / 4, red: red, blue: blue, magenta: magenta};
})()"""


def click_node(b, name):
    b.eval("window.scrollTo(0, 0); document.getElementById('flame-box').scrollTop = 0")
    pos = b.eval("window.capprof.nodeCenter(%r)" % name)
    check(pos is not None, "a node of %s is drawn" % name)
    if pos:
        b.click(pos["x"], pos["y"])
    return pos


def click_header(b, key):
    pos = b.eval("""(function () {
      var th = document.querySelector('#flat th[data-key="%s"]');
      if (!th) return null;
      th.scrollIntoView({block: 'center'});
      var r = th.getBoundingClientRect();
      return {x: r.left + r.width / 2, y: r.top + r.height / 2};
    })()""" % key)
    check(pos is not None, "the table has a '%s' column" % key)
    if pos:
        b.click(pos["x"], pos["y"])


def first_row(b):
    return b.eval("(function () { var td = document.querySelector('#flat tbody tr td.fn');"
                  " return td ? td.textContent : ''; })()")


def search(b, text):
    b.eval("window.scrollTo(0, 0); var s = document.getElementById('search'); s.value = '';"
           " s.focus()")
    b.type_text(text)
    b.call("Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter",
           windowsVirtualKeyCode=13)
    b.call("Input.dispatchKeyEvent", type="keyUp", key="Enter", code="Enter",
           windowsVirtualKeyCode=13)
    b.wait_for("document.getElementById('search-result').textContent !== ''", 10)
    return b.eval("document.getElementById('search-result').textContent")


def load(b, page):
    url = "file://" + os.path.abspath(page)
    b.navigate(url)
    b.wait_for("window.capprof && window.capprof.ready", 30)
    b.pump(0.3)
    errs = b.errors()
    check(not errs, "%s: no console error or exception %s" % (os.path.basename(page), errs or ""))
    other = [u for u in b.requests() if u != url]
    check(not other, "%s: no network request %s" % (os.path.basename(page), other or ""))
    px = b.eval(PIXELS)
    check(px["painted"] > px["all"] * 0.05,
          "%s: the canvas is drawn (%d of %d pixels painted)"
          % (os.path.basename(page), px["painted"], px["all"]))
    return px


def test_report(b):
    dump = profile("demo", 200)
    page = os.path.join(W, "report.html")
    run(CAPPROF, "export", "--format=html", "-o", page, dump)
    # What the tool itself says: the most-called function, and main -> sort in the tree.
    top = run(CAPPROF, "report", "-q", "--sort=calls", "--limit", "1", dump).splitlines()[1]
    most_called = re.sub(r"\s+\(.*\)$", "", top).split()[-1]
    tree = run(CAPPROF, "tree", "--depth", "2", dump)
    sort_line = [ln for ln in tree.splitlines() if re.search(r"\d%    sort$", ln)]
    check(len(sort_line) == 1, "capprof tree shows main -> sort")

    load(b, page)
    b.screenshot(os.path.join(W, "report.png"))

    click_header(b, "calls")
    row = first_row(b)
    check(row.startswith(most_called + " "),
          "sorted by calls, the table starts with %s (got %r)" % (most_called, row))
    # the same rows and figures as 'capprof report --sort=calls'
    lines = run(CAPPROF, "report", "-q", "--width=0", "--sort=calls", "--limit", "3", "-F",
                "elapsed-self%,elapsed-self,elapsed-incl,calls,self/call,incl/call,incl-min,incl-max",
                dump).splitlines()
    want = [" ".join(ln.split()) for ln in lines[1:4]]
    got = b.eval("""Array.prototype.slice.call(document.querySelectorAll('#flat tbody tr'), 0, 3)
      .map(function (tr) { return Array.prototype.map.call(tr.children, function (td) {
        return td.textContent; }).join(' ').replace(/\\s+/g, ' ').trim(); })""")
    check(got == want, "the table's first rows are capprof report's (%s; %s)" % (got, want))
    click_header(b, "calls")
    check(not first_row(b).startswith(most_called + " "), "a second click reverses the order")

    fig = b.eval("window.capprof.nodeFigures('sort')")
    if sort_line and fig:
        cols = sort_line[0].split()
        check(fig["calls"] == cols[0] and fig["incl"] == cols[1] + " " + cols[2],
              "the widest sort node has capprof tree's calls and inclusive time "
              "(page %s, %s; tree %s, %s %s)" % (fig["calls"], fig["incl"], cols[0], cols[1], cols[2]))

    pos = click_node(b, "sort")
    if pos:
        b.wait_for("window.capprof.zoomName() === 'sort'", 5)
        crumb = b.eval("document.querySelector('#crumbs .here').textContent")
        check(crumb == "sort", "clicking sort zooms to it: the breadcrumb names it (%r)" % crumb)
        path = b.eval("document.getElementById('crumbs').textContent")
        check("main" in path, "the breadcrumbs lead back through main (%r)" % path)
        pane = b.eval("""Array.prototype.map.call(document.querySelectorAll('#calls tbody tr'),
          function (tr) { return Array.prototype.map.call(tr.children, function (td) {
            return td.textContent; }); })""")
        got = [[c.strip() for c in r[:6]] + [re.sub(r"\s+\(.*$|\s+(caller|callee)$", "", r[6].strip())]
               for r in pane]
        want = []           # callers' lines, then callees' without sort's own line again
        for cmd, skip in (("callers", 1), ("callees", 2)):
            for ln in run(CAPPROF, cmd, "sort", dump).splitlines()[skip:]:
                f = ln.split()      # calls, incl, self, incl/call, self/call (value unit), incl%
                want.append([f[0], f[1] + " " + f[2], f[3] + " " + f[4], f[5] + " " + f[6],
                             f[7] + " " + f[8], f[9], re.sub(r"\s+\(.*$", "", " ".join(f[10:]))])
        check(not b.eval("document.getElementById('calls-sec').hidden") and same_rows(got, want),
              "the callers and callees pane of sort shows what capprof callers/callees print "
              "(%s; %s)" % (got, want))
        b.eval("window.scrollTo(0, 0)")
        pos = b.eval("window.capprof.nodeCenter('sort')")
        b.hover(pos["x"], pos["y"])
        tip = b.eval("document.getElementById('tip').hidden ? '' : "
                     "document.getElementById('tip').textContent")
        check("incl (inclusive)" in tip and "calls.c:" in tip and "incl max" in tip,
              "hovering sort shows its tooltip (%r)" % tip[:80])
        b.eval("document.querySelector('#crumbs a').click()")
        check(b.eval("window.capprof.zoomName()").startswith("thread"),
              "the first breadcrumb zooms back out")

    b.hover(2, 2)                                   # the tooltip goes away
    res = search(b, "parse_")
    check(res.startswith("3 functions in") and "match" in res,
          "search 'parse_' finds parse_expr, parse_term, parse_primary (%r)" % res)
    res = search(b, "sort")
    check(re.match(r"\d+ functions? in ", res) is not None and b.eval(PIXELS)["magenta"] > 0,
          "search 'sort' highlights its paths (%r)" % res)
    b.screenshot(os.path.join(W, "report-search.png"))


def test_diff(b):
    base = [profile("base%d" % i, 60) for i in (1, 2)]
    new = [profile("new%d" % i, 200) for i in (1, 2)]
    page = os.path.join(W, "diff.html")
    run(CAPPROF, "diff", "--format=html", "-o", page, *base, "--", *new)
    text = run(CAPPROF, "diff", *base, "--", *new)
    sort_verdict = [ln.split()[-2] for ln in text.splitlines() if ln.endswith(" sort")]

    load(b, page)
    b.screenshot(os.path.join(W, "diff.png"))
    verdict = b.eval("""(function () {
      var rows = document.querySelectorAll('#flat tbody tr');
      for (var i = 0; i < rows.length; i++) {
        var fn = rows[i].querySelector('td.fn').textContent;
        if (/^sort /.test(fn)) {
          var th = document.querySelectorAll('#flat th'), cells = rows[i].children;
          for (var k = 0; k < th.length; k++) if (th[k].dataset.key === 'self_v') return cells[k].textContent;
        }
      }
      return null; })()""")
    check(sort_verdict and verdict == sort_verdict[0],
          "sort's verdict on the page is capprof diff's (%r, %r)" % (verdict, sort_verdict))

    # Calls do not vary between runs of the example: every change in them is real.
    b.eval("var s = document.getElementById('metric-sel'); s.value = '2';"
           " s.dispatchEvent(new Event('change'))")
    px = b.eval(PIXELS)
    check(px["red"] > px["painted"] * 0.5,
          "compared by calls, the paths that run more often are red (%d of %d pixels)"
          % (px["red"], px["painted"]))
    key = b.eval("document.querySelector('#flat th.sorted').dataset.key")
    row = first_row(b)
    check(key == "calls_d" and row.startswith("sort "),
          "by change in calls (%s), the table starts with sort (%r)" % (key, row))
    click_header(b, "calls_a")
    row = first_row(b)
    check(row.startswith("sort "), "sorted by calls after, the table starts with sort (%r)" % row)
    b.screenshot(os.path.join(W, "diff-calls.png"))

    pos = click_node(b, "sort")
    if pos:
        b.wait_for("window.capprof.zoomName() === 'sort'", 5)
        crumb = b.eval("document.querySelector('#crumbs .here').textContent")
        check(crumb == "sort", "diff: clicking sort zooms to it (%r)" % crumb)
    res = search(b, "sort")
    check(re.match(r"\d+ functions? in ", res) is not None, "diff: search finds sort (%r)" % res)


def test_markup(b):
    dump = os.path.join(W, "markup.capprof")
    run(GEN, dump, "markup", "12")
    page = os.path.join(W, "markup.html")
    run(CAPPROF, "export", "--format=html", "-o", page, dump)
    load(b, page)
    names = b.eval("Array.prototype.map.call(document.querySelectorAll('#flat td.fn'),"
                   " function (td) { return td.textContent; }).join('|')")
    check("</script><script>console.error('escaped')</script>" in names and "<!-- a & b -->" in names,
          "names holding markup show as text (%r)" % names[:120])


def test_run(b):
    """A 'capprof run' dump: intercepted library calls shown as such."""
    for old in os.listdir(W):
        if old.startswith("run.") and old.endswith(".capprof"):
            os.remove(os.path.join(W, old))
    run(CAPPROF, "run", "-q", "-o", os.path.join(W, "run.%p.capprof"), "--", CALLS, "20")
    dump = [os.path.join(W, x) for x in os.listdir(W) if x.startswith("run.") and x.endswith(".capprof")]
    check(len(dump) == 1, "capprof run wrote one dump")
    page = os.path.join(W, "run.html")
    run(CAPPROF, "export", "--format=html", "-o", page, dump[0])
    load(b, page)
    check("interception on" in b.eval("document.getElementById('facts').textContent"),
          "the header says library calls were intercepted")
    b.eval("document.getElementById('api-only').click()")
    names = b.eval("Array.prototype.map.call(document.querySelectorAll('#flat td.fn'),"
                   " function (td) { return td.textContent; })")
    check(names and all("intercepted" in n for n in names) and
          any(n.startswith("__ctype_b_loc ") for n in names),
          "'library calls only' lists the intercepted functions (%s)" % names)


def test_sampled(b):
    """A sampled run (CAPPROF_SAMPLE): the page has report's cpu% and cpu self
    columns and lists functions by cpu self, as 'capprof report' does."""
    path = os.path.join(W, "sampled.capprof")
    if os.path.exists(path):
        os.remove(path)
    run(CALLS, "500", env=dict(os.environ, CAPPROF_OUTPUT=path, CAPPROF_SAMPLE="time:100us"))
    page = os.path.join(W, "sampled.html")
    run(CAPPROF, "export", "--format=html", "-o", page, path)
    lines = run(CAPPROF, "report", "--limit", "1", path).splitlines()
    head = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("cpu self%")), None)
    top = re.sub(r"\s+\(.*$", "", lines[head + 1]).split()[-1] if head is not None else None
    check(top is not None and any(ln.startswith("ranked by cpu") for ln in lines),
          "capprof report on the sampled dump is sorted by cpu self (%s)" % top)
    load(b, page)
    heads = b.eval("Array.prototype.map.call(document.querySelectorAll('#flat th'),"
                   " function (th) { return th.dataset.key; })")
    check("cpuself" in heads and "cpupct" in heads,
          "sampled.html: the table has the cpu%% and cpu self columns (%s)" % heads)
    sorted_by = b.eval("(function () { var th = document.querySelector('#flat th.sorted');"
                       " return th ? th.dataset.key : ''; })()")
    first = re.sub(r"\s+\(.*$", "", first_row(b).strip())
    check(sorted_by == "cpupct" and first == top,
          "sampled.html: sorted by cpu self, %r first as in capprof report (%r, %r)"
          % (top, sorted_by, first))


def main():
    exe = cdp.find_chromium()
    if not exe:
        sys.exit("test_page: FAIL: no chromium found (Debian package 'chromium', installed by "
                 ".ci/deps): the HTML page cannot be tested")
    os.makedirs(W, exist_ok=True)
    b = cdp.Browser(exe)
    try:
        test_report(b)
        test_diff(b)
        test_markup(b)
        test_run(b)
        test_sampled(b)
    finally:
        b.close()
    print("screenshots: %s/report.png, %s/diff.png" % (W, W))
    if failures:
        sys.exit("test_page: %d check(s) failed" % len(failures))


main()
