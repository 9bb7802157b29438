/*
** report.js -- the code of the capprof HTML page (inlined by embed.cmake).
** It reads the JSON that tools/export/export_html.c writes into the page and
** draws the call tree as an icicle on a canvas (click to zoom, breadcrumbs,
** hover tooltips, search), the flat table (sortable, filterable) and a selected
** function's callers and callees. It loads nothing and needs no library.
**
** Trees arrive in preorder as columns: n (children of each entry), f
** (function), c (calls), t (inclusive ns), mn/mx (min/max per call ns) or,
** in a diff, bc/bt (the base side's calls and inclusive ns). Exclusive time
** is recomputed here as export_html.c's model does: inclusive minus the
** children's inclusive, clamped at 0.
*/
(function () {
  'use strict';

  var ROW = 18;              /* pixels per tree level */
  var MAX_ROWS = 300;        /* levels drawn below the zoomed node */
  var MAX_TABLE_ROWS = 1000; /* table rows rendered at once */

  var D = null;              /* the page's data */
  var F = null;              /* D.funcs */
  var diff = false;
  var trees = [];
  var cur = null;            /* the tree shown (prepared) */
  var zoom = 0;              /* its zoomed entry */
  var metric = 0;            /* diff: 0 self, 1 total, 2 calls */
  var selFunc = -1;          /* function selected in the table or the graph */
  var match = null;          /* Uint8Array per function when searching */
  var rects = null;          /* what was drawn: {x, w, row, node}, and per row */
  var sortCol = null, sortDesc = true;

  function $(id) { return document.getElementById(id); }

  /* What '~' means, in the words of report and tree (prof_legend). */
  var TILDE = '~ mostly probe cost (over twice what is left was subtracted): may be off by half';

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  /* ---- numbers, as the tool prints them (tools/model/tool.c) --------------- */

  function fmtNs(ns) {
    if (ns === null || ns === undefined || ns !== ns) return '-';
    if (ns < 0) return '-' + fmtNs(-ns);
    if (ns > 1e15) return ns.toPrecision(3) + ' ns';
    var u = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']], i = 0;
    while (i < 3 && ns < u[i][0]) i++;
    var v = ns / u[i][0];
    var dec = i === 3 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
    var scale = dec === 2 ? 100 : dec === 1 ? 10 : 1;
    var x = Math.floor(v * scale + 0.5);
    var s = String(Math.floor(x / scale));
    if (dec) {
      var fr = x % scale;
      s += '.' + (dec === 2 && fr < 10 ? '0' : '') + fr;
    }
    return s + ' ' + u[i][1];
  }

  /* The ranking figure's name and a value of it: ns, or a count. */
  function wname() { return diff ? 'elapsed' : (D.weight || 'elapsed'); }
  function fmtW(v) { return diff || D.weight_time !== false ? fmtNs(v) : fmtCount(Math.round(v)); }

  function fmtCount(v) {
    var s = String(Math.round(v));
    return s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }

  /* A mean count: thousands separators, one decimal unless whole (fmt_mean). */
  function fmtMean(v) {
    var t = Math.floor(v * 10 + 0.5);
    return fmtCount(Math.floor(t / 10)) + (t % 10 ? '.' + (t % 10) : '');
  }

  function fmtDec1(v) { return v === null ? '-' : (Math.round(v * 10) / 10).toFixed(1); }

  function fmtPct(part, whole) {
    var v = whole > 0 ? 100 * part / whole : 0;
    return (Math.floor(v * 10 + 0.5) / 10).toFixed(1) + '%';
  }

  function signed(v, s) { return (v > 0 ? '+' : v < 0 ? '-' : '') + s; }

  function baseName(p) { return p ? p.replace(/^.*[\/\\]/, '') : ''; }

  /* ---- functions ------------------------------------------------------------ */

  function fname(f) {
    var n = F.name[f];
    if (F.kind[f] === 2 && n === '[root]') return '[thread start]';
    return n;
  }

  function floc(f) {
    if (F.kind[f] === 1) return '[zone]';
    if (F.kind[f] === 3) return (F.module[f] || 'library') + ', intercepted';
    if (F.file[f]) return baseName(F.file[f]) + ':' + F.line[f];
    if (F.module[f] && F.kind[f] === 0) return F.module[f];
    return '';
  }

  function funcCell(td, f, extra) {
    if (!extra && F.unhooked && F.unhooked[f]) extra = '[unhooked]';
    else if (!extra && F.throttled && F.throttled[f]) extra = '[throttled]';
    td.appendChild(document.createTextNode(fname(f)));
    var loc = floc(f);
    if (loc) td.appendChild(el('span', 'loc', '  (' + loc + ')'));
    if (extra) td.appendChild(el('span', 'tag', '  ' + extra));
    if (F.file[f]) td.title = F.file[f] + ':' + F.line[f];
  }

  /* ---- trees ---------------------------------------------------------------- */

  /* Parent, subtree end, depth, horizontal start and exclusive time of every
  ** entry, from the preorder child counts: one pass with a stack. */
  /* Widths come from g: the profile's ranking figure (T.w: cpu from the
  ** samples in a sampled run, else elapsed), or elapsed time (a diff). */
  function prepare(T) {
    if (T.parent) return T;
    var N = T.f.length, nk = T.n, t = T.t, g = T.w || T.t;
    var parent = new Int32Array(N), end = new Int32Array(N), depth = new Int32Array(N);
    var start = new Float64Array(N), excl = new Float64Array(N), cursor = new Float64Array(N);
    var gexcl = new Float64Array(N);
    var bexcl = diff ? new Float64Array(N) : null, bt = T.bt;
    var stk = new Int32Array(N + 1), rem = new Float64Array(N + 1), sp = 0, maxDepth = 0;
    for (var i = 0; i < N; i++) {
      var ti = t[i], gi = g[i];
      excl[i] = ti;
      gexcl[i] = gi;
      if (diff) bexcl[i] = bt[i];
      if (sp) {
        var p = stk[sp - 1];
        parent[i] = p;
        depth[i] = depth[p] + 1;
        if (depth[i] > maxDepth) maxDepth = depth[i];
        start[i] = cursor[p];
        cursor[p] += gi;
        excl[p] -= ti;
        gexcl[p] -= gi;
        if (diff) bexcl[p] -= bt[i];
        rem[sp - 1]--;
      } else {
        parent[i] = -1;
      }
      cursor[i] = start[i];
      stk[sp] = i;
      rem[sp] = nk[i];
      sp++;
      while (sp && rem[sp - 1] <= 0) { end[stk[sp - 1]] = i + 1; sp--; }
    }
    while (sp) end[stk[--sp]] = N;
    for (i = 0; i < N; i++) {
      if (excl[i] < 0) excl[i] = 0;
      if (gexcl[i] < 0) gexcl[i] = 0;
      if (diff && bexcl[i] < 0) bexcl[i] = 0;
    }
    T.other = T.other || [];
    var other = {};
    for (i = 0; i + 1 < T.other.length; i += 2) other[T.other[i]] = T.other[i + 1];
    var open = {};
    for (i = 0; i < (T.open || []).length; i++) open[T.open[i]] = 1;
    T.parent = parent; T.end = end; T.depth = depth; T.start = start; T.excl = excl;
    T.g = g; T.gexcl = gexcl;
    T.bexcl = bexcl; T.otherOf = other; T.openOf = open; T.maxDepth = maxDepth;
    return T;
  }

  function nodeName(T, i) {
    if (i === 0) return T.label;
    return fname(T.f[i]);
  }

  /* ---- colours -------------------------------------------------------------- */

  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }

  var colourCache = {};

  function baseColour(f) {
    if (colourCache[f]) return colourCache[f];
    var c, h = hash(F.name[f]);
    if (F.kind[f] === 2) c = '#c8c8c8';
    else if (F.kind[f] === 1) c = 'hsl(' + (190 + h % 30) + ',55%,' + (62 + (h >> 8) % 12) + '%)';
    else if (F.kind[f] === 3) c = 'hsl(' + (95 + h % 40) + ',45%,' + (58 + (h >> 8) % 12) + '%)';
    else c = 'hsl(' + (h % 50) + ',' + (72 + (h >> 6) % 20) + '%,' + (56 + (h >> 12) % 12) + '%)';
    colourCache[f] = c;
    return c;
  }

  /* Diff: the change of node i in the chosen metric, per run, as a value in
  ** [-1, 1] (negative: less in NEW), and the function's verdict. */
  function nodeChange(T, i) {
    var na = D.base.runs || 1, nb = D['new'].runs || 1, a, b;
    if (metric === 0) { a = T.bexcl[i] / na; b = T.excl[i] / nb; }
    else if (metric === 1) { a = T.bt[i] / na; b = T.t[i] / nb; }
    else { a = T.bc[i] / na; b = T.c[i] / nb; }
    var m = Math.max(Math.abs(a), Math.abs(b));
    return { before: a, after: b, rel: m > 0 ? (b - a) / m : 0 };
  }

  function verdictOf(f) {
    if (f >= F.name.length - 1) return -1;
    var v = D.verdict[f * 3 + metric];
    return v === undefined ? -1 : v;
  }

  function mix(c0, c1, k) {
    var r = Math.round(c0[0] + (c1[0] - c0[0]) * k), g = Math.round(c0[1] + (c1[1] - c0[1]) * k),
      b = Math.round(c0[2] + (c1[2] - c0[2]) * k);
    return 'rgb(' + r + ',' + g + ',' + b + ')';
  }

  var NEUTRAL = [214, 214, 214], UP = [214, 48, 39], DOWN = [44, 110, 210], WEAK = [238, 238, 238];

  function diffColour(T, i) {
    var f = T.f[i];
    if (i === 0 || F.kind[f] === 2) return mix(NEUTRAL, NEUTRAL, 0);
    var v = verdictOf(f), ch = nodeChange(T, i);
    if (v === 0 || v === 2 || ch.rel === 0) return mix(NEUTRAL, NEUTRAL, 0);
    var k = 0.25 + 0.75 * Math.min(1, Math.abs(ch.rel));
    if (v < 0) return mix(WEAK, ch.rel > 0 ? UP : DOWN, k * 0.45);   /* no verdict possible */
    return mix(WEAK, ch.rel > 0 ? UP : DOWN, k);
  }

  /* ---- drawing -------------------------------------------------------------- */

  var canvas, ctx, charW = 7;

  function draw() {
    var T = cur, box = $('flame-box');
    var W = Math.max(200, box.clientWidth);
    var z = zoom, tz = T.g[z], scale = tz > 0 ? W / tz : 0;
    var x0 = T.start[z], dz = T.depth[z], e = T.end[z];
    var xs = [], ws = [], rs = [], ns = [], maxRow = 0, deeper = false;
    var i = z;
    while (i < e) {
      var row = T.depth[i] - dz;
      var w = i === z ? W : T.g[i] * scale;
      if (i !== z && (w < 0.4 || row >= MAX_ROWS)) {
        if (row >= MAX_ROWS && w >= 0.4) deeper = true;
        i = T.end[i];
        continue;
      }
      xs.push(i === z ? 0 : (T.start[i] - x0) * scale);
      ws.push(w);
      rs.push(row);
      ns.push(i);
      if (row > maxRow) maxRow = row;
      i++;
    }
    var H = (maxRow + 1) * ROW, dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    canvas.style.width = W + 'px';
    canvas.style.height = H + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace';
    ctx.textBaseline = 'middle';
    charW = ctx.measureText('mmmmmmmmmm').width / 10 || 7;
    ctx.clearRect(0, 0, W, H);
    var byRow = [];
    for (var r = 0; r <= maxRow; r++) byRow.push([]);
    for (var k = 0; k < ns.length; k++) {
      var n = ns[k], f = T.f[n], x = xs[k], wk = ws[k], y = rs[k] * ROW;
      byRow[rs[k]].push(k);
      var fill;
      if (diff) fill = diffColour(T, n);
      else if (n === 0) fill = '#d8d8d8';
      else fill = baseColour(f);
      if (match) fill = match[f] && n !== 0 ? '#d04fd8' : diff ? fill : '#e6e0d8';
      ctx.fillStyle = fill;
      ctx.fillRect(x, y, Math.max(wk - 0.5, 0.5), ROW - 1);
      if (f === selFunc && n !== 0) {
        ctx.strokeStyle = '#111';
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x + 0.75, y + 0.75, Math.max(wk - 2, 0.5), ROW - 2.5);
      }
      if (wk > charW * 3 + 6) {
        var label = nodeName(T, n), max = Math.floor((wk - 6) / charW);
        if (T.otherOf[n] !== undefined) label = '[other: ' + T.otherOf[n] + ' paths]';
        if (label.length > max) label = label.slice(0, Math.max(1, max - 2)) + '..';
        ctx.fillStyle = '#111';
        ctx.fillText(label, x + 3, y + ROW / 2);
      }
    }
    rects = { x: xs, w: ws, row: rs, node: ns, byRow: byRow };
    var note = [];
    if (deeper) note.push('Levels deeper than ' + MAX_ROWS + ' below the shown node are not drawn: click a node to zoom in.');
    if (cur.pruned) {
      note.push('This tree has ' + fmtCount(cur.nodes) + ' call paths; the page holds the ' +
        fmtCount(cur.written - cur.pruned - 1) + ' with the most inclusive time and sums the other ' +
        'paths of each parent into one "[other]" node (' + fmtCount(cur.pruned) + ' of them): ' +
        'a page holds at most ' + fmtCount(D.max_nodes) + ' nodes (capprof export --max-nodes).');
    }
    $('flame-note').textContent = note.join(' ');
    crumbs();
    searchShare();
  }

  function crumbs() {
    var nav = $('crumbs'), path = [];
    for (var i = zoom; i >= 0; i = cur.parent[i]) path.unshift(i);
    nav.textContent = '';
    if (path.length > 40) {            /* a deep zoom: the first and the last levels */
      var skipped = path.length - 30;
      path = path.slice(0, 10).concat([-skipped]).concat(path.slice(path.length - 20));
    }
    path.forEach(function (n, k) {
      if (k) nav.appendChild(el('span', 'sep', '>'));
      if (n < 0) { nav.appendChild(el('span', 'loc', '(' + fmtCount(-n) + ' levels)')); return; }
      var name = nodeName(cur, n);
      if (n === zoom) {
        nav.appendChild(el('span', 'here', name));
      } else {
        var a = el('a', null, name);
        a.addEventListener('click', function () { setZoom(n); });
        nav.appendChild(a);
      }
    });
  }

  function hit(ev) {
    if (!rects) return -1;
    var b = canvas.getBoundingClientRect(), x = ev.clientX - b.left, y = ev.clientY - b.top;
    var row = Math.floor(y / ROW);
    if (row < 0 || row >= rects.byRow.length) return -1;
    var list = rects.byRow[row], lo = 0, hi = list.length - 1;
    while (lo <= hi) {                       /* a row's rectangles go left to right */
      var mid = (lo + hi) >> 1, k = list[mid];
      if (x < rects.x[k]) hi = mid - 1;
      else if (x >= rects.x[k] + rects.w[k]) lo = mid + 1;
      else return rects.node[k];
    }
    return -1;
  }

  function setZoom(n) {
    zoom = n;
    draw();
  }

  function tipRow(tb, label, value) {
    var tr = el('tr');
    tr.appendChild(el('td', null, label));
    tr.appendChild(el('td', 'n', value));
    tb.appendChild(tr);
  }

  function tooltip(ev) {
    var tip = $('tip'), n = hit(ev);
    if (n < 0) { tip.hidden = true; return; }
    var T = cur, f = T.f[n];
    tip.textContent = '';
    tip.appendChild(el('div', 'name', T.otherOf[n] !== undefined ? '[other]' : nodeName(T, n)));
    var loc = n ? floc(f) : '';
    if (F.file[f]) loc = F.file[f] + ':' + F.line[f];
    if (loc) tip.appendChild(el('div', 'loc', loc));
    if (T.otherOf[n] !== undefined)
      tip.appendChild(el('div', 'loc', T.otherOf[n] + ' smaller call paths of this parent, summed ' +
        '(pruned from the page)'));
    if (T.openOf[n]) tip.appendChild(el('div', 'tag', '[still running] at dump time'));
    var tb = el('table');
    if (!diff) {
      var c = T.c[n];
      var u = T.u ? T.u[n] : 0, ti = u & 1 ? '~' : '', ts = u & 2 ? '~' : '';
      if (n) tipRow(tb, 'calls', fmtCount(c));
      if (T.tm && T.tm[n] !== c) {        /* throttled: the times cover the timed calls */
        tipRow(tb, 'timed calls [throttled]', fmtCount(T.tm[n]));
        c = T.tm[n];
      }
      if (T.w && D.weight !== 'elapsed') {   /* the ranking figure first */
        tipRow(tb, D.weight + ' incl', fmtW(T.w[n]));
        tipRow(tb, D.weight + ' self', fmtW(T.gexcl[n]));
      }
      tipRow(tb, 'elapsed incl (inclusive)', ti + fmtNs(T.t[n]));
      tipRow(tb, 'elapsed self (exclusive)', ts + fmtNs(T.excl[n]));
      if (n) {
        tipRow(tb, 'incl/call', ti + fmtNs(c ? T.t[n] / c : 0));
        tipRow(tb, 'self/call', ts + fmtNs(c ? T.excl[n] / c : 0));
        tipRow(tb, 'incl min (one call)', fmtNs(T.mn[n]));
        tipRow(tb, 'incl max (one call)', fmtNs(T.mx[n]));
      }
      tipRow(tb, wname() + ' incl% of the tree', fmtPct(T.g[n], T.g[0]));
      if (zoom) tipRow(tb, wname() + ' incl% of ' + nodeName(T, zoom), fmtPct(T.g[n], T.g[zoom]));
    } else {
      var na = D.base.runs || 1, nb = D['new'].runs || 1;
      var rows = [['calls per run', T.bc[n] / na, T.c[n] / nb, 1],
        ['incl per run', T.bt[n] / na, T.t[n] / nb, 0],
        ['self per run', T.bexcl[n] / na, T.excl[n] / nb, 0]];
      var hd = el('tr');
      ['', 'before', 'after', 'change'].forEach(function (h) { hd.appendChild(el('td', 'n', h)); });
      tb.appendChild(hd);
      rows.forEach(function (r) {
        var tr = el('tr'), fm = r[3] ? fmtDec1 : fmtNs, d = r[2] - r[1];
        tr.appendChild(el('td', null, r[0]));
        tr.appendChild(el('td', 'n', fm(r[1])));
        tr.appendChild(el('td', 'n', fm(r[2])));
        tr.appendChild(el('td', 'n', r[1] > 0 ? signed(d, '') + (Math.abs(100 * d / r[1])).toFixed(1) + '%'
          : r[2] > 0 ? 'new' : ''));
        tb.appendChild(tr);
      });
      tipRow(tb, 'share of the tree (after)', fmtPct(T.t[n], T.t[0]));
      if (n && F.kind[f] !== 2 && f < F.name.length - 1) {
        var words = ['self', 'incl', 'calls'], v = [];
        for (var m = 0; m < 3; m++) {
          var x = D.verdict[f * 3 + m];
          v.push(words[m] + ' ' + (x < 0 ? '-' : x === 1 ? 'real' : x === 2 ? 'same' : 'noise'));
        }
        tipRow(tb, 'verdict (function)', v.join(', '));
      }
    }
    tip.appendChild(tb);
    if (!diff && T.u && T.u[n]) tip.appendChild(el('div', 'tag', TILDE));
    tip.hidden = false;
    /* fixed to the viewport, kept inside it */
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth - 4) x = Math.max(4, ev.clientX - tip.offsetWidth - 10);
    if (y + tip.offsetHeight > window.innerHeight - 4) y = Math.max(4, ev.clientY - tip.offsetHeight - 10);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }

  function onClick(ev) {
    var n = hit(ev);
    if (n < 0) return;
    if (n === zoom && n !== 0) n = cur.parent[n];
    var f = cur.f[n];
    if (n && F.kind[f] !== 2) select(f, false);
    setZoom(n);
  }

  /* ---- search --------------------------------------------------------------- */

  function runSearch() {
    var q = $('search').value.trim(), re = null;
    match = null;
    $('search-result').textContent = '';
    if (q) {
      try {
        var m = /^\/(.*)\/([a-z]*)$/.exec(q);
        re = m ? new RegExp(m[1], m[2].indexOf('i') >= 0 ? 'i' : '') : null;
      } catch (err) {
        $('search-result').textContent = 'bad regular expression: ' + err.message;
        draw();
        return;
      }
      var ql = q.toLowerCase();
      match = new Uint8Array(F.name.length);
      for (var f = 0; f < F.name.length; f++) {
        var name = F.name[f];
        match[f] = re ? re.test(name) : name.toLowerCase().indexOf(ql) >= 0;
      }
    }
    draw();
  }

  /* The share of the shown node's time spent in matching functions: the
  ** outermost matching paths only, so nested matches do not count twice. */
  function searchShare() {
    if (!match) return;
    var T = cur, z = zoom, e = T.end[z], sum = 0, paths = 0, skip = -1, funcs = {}, nf = 0;
    for (var i = z === 0 ? 1 : z; i < e; i++) {
      var f = T.f[i];
      if (!match[f]) continue;
      paths++;
      if (!funcs[f]) { funcs[f] = 1; nf++; }
      if (i >= skip) { sum += T.g[i]; skip = T.end[i]; }
    }
    $('search-result').textContent = nf ? nf + ' function' + (nf > 1 ? 's' : '') + ' in ' +
      fmtCount(paths) + ' call path' + (paths > 1 ? 's' : '') + ' match: ' + fmtW(sum) + ', ' +
      fmtPct(sum, T.g[z]) + ' of ' + nodeName(T, z) : 'no match in ' + nodeName(T, z);
  }

  /* ---- the table -------------------------------------------------------------- */

  function colValue(c, v) {
    if (v === null || v === undefined) return null;
    if (c.kind === 'pm' || c.kind === 'pmc') return v[0];
    if (c.kind === 't') return v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v;
    return v;
  }

  function sortKey(c, v) {
    var x = colValue(c, v);
    if (x === null) return -Infinity;
    if (c.kind === 'sns' || c.kind === 'snum' || c.kind === 'spct' || c.kind === 't') return Math.abs(x);
    return x;
  }

  function fmtCell(c, v) {
    if (v === null || v === undefined) {
      return c.kind === 'spct' ? 'new' : c.kind === 't' ? '-' : '';
    }
    switch (c.kind) {
      case 'ns': return fmtNs(v);
      case 'count': return fmtCount(v);
      case 'mean': return fmtMean(v);
      case 'dec1': return fmtDec1(v);
      case 'pct': return (Math.floor(v * 10 + 0.5) / 10).toFixed(1) + '%';
      case 'sns': return signed(v, fmtNs(Math.abs(v)));
      case 'snum': return signed(v, fmtDec1(Math.abs(v)));
      case 'spct': return signed(v, Math.abs(v).toFixed(1) + '%');
      case 'pm': return fmtNs(v[0]) + ' +- ' + fmtNs(v[1]);
      case 'pmc': return fmtDec1(v[0]) + ' +- ' + fmtDec1(v[1]);
      case 't': return typeof v === 'string' ? v : v.toFixed(2);
      default: return String(v);
    }
  }

  var metricNames = ['self', 'incl', 'calls'];

  function visibleCols() {
    var cols = [];
    D.flat.cols.forEach(function (c, k) {
      if (!c.group || c.group === metricNames[metric]) cols.push(k);
    });
    return cols;
  }

  function rowTag(k) {
    if (!diff) return '';
    var cols = D.flat.cols, v = D.flat.v, b = -1, a = -1;
    for (var j = 0; j < cols.length; j++) {
      if (cols[j].key === 'calls_b') b = colValue(cols[j], v[j][k]);
      if (cols[j].key === 'calls_a') a = colValue(cols[j], v[j][k]);
    }
    return b === 0 && a > 0 ? '[new]' : a === 0 && b > 0 ? '[gone]' : '';
  }

  function renderTable() {
    var fl = D.flat, cols = visibleCols(), thead = $('flat').tHead, tbody = $('flat').tBodies[0];
    if (sortCol !== null && cols.indexOf(sortCol) < 0 && sortCol >= 0) {
      /* the metric changed: sort by the same kind of column of the new metric */
      var key = fl.cols[sortCol].key.replace(/^[a-z]+_/, '');
      sortCol = null;
      cols.forEach(function (k) { if (fl.cols[k].key.replace(/^[a-z]+_/, '') === key) sortCol = k; });
    }
    thead.textContent = '';
    var tr = el('tr');
    cols.forEach(function (k) {
      var c = fl.cols[k], th = el('th', sortCol === k ? 'sorted' + (sortDesc ? '' : ' asc') : '', c.label);
      th.title = c.title + (/^(sns|snum|spct|t)$/.test(c.kind) ? ' (sorts by size)' : '');
      th.dataset.key = c.key;
      th.addEventListener('click', function () { setSort(k); });
      tr.appendChild(th);
    });
    var thf = el('th', 'fn' + (sortCol === -1 ? ' sorted' + (sortDesc ? '' : ' asc') : ''), 'function');
    thf.dataset.key = 'function';
    thf.addEventListener('click', function () { setSort(-1); });
    tr.appendChild(thf);
    thead.appendChild(tr);

    var q = $('filter').value.trim().toLowerCase(), idx = [], apiOnly = $('api-only').checked;
    for (var k = 0; k < fl.rows.length; k++)
      if ((!q || F.name[fl.rows[k]].toLowerCase().indexOf(q) >= 0) && (!apiOnly || F.kind[fl.rows[k]] === 3))
        idx.push(k);
    if (sortCol === -1) {
      idx.sort(function (a, b) {
        var x = F.name[fl.rows[a]], y = F.name[fl.rows[b]];
        return (x < y ? -1 : x > y ? 1 : 0) * (sortDesc ? -1 : 1);
      });
    } else if (sortCol !== null) {
      var c = fl.cols[sortCol], col = fl.v[sortCol];
      idx.sort(function (a, b) {
        var x = sortKey(c, col[a]), y = sortKey(c, col[b]);
        if (typeof x === 'string' || typeof y === 'string') { x = String(x); y = String(y); }
        if (x !== y) return (x < y ? -1 : 1) * (sortDesc ? -1 : 1);
        var p = F.name[fl.rows[a]], r = F.name[fl.rows[b]];
        return p < r ? -1 : p > r ? 1 : 0;
      });
    }
    tbody.textContent = '';
    var frag = document.createDocumentFragment(), marks = 0;
    idx.slice(0, MAX_TABLE_ROWS).forEach(function (k) {
      var f = fl.rows[k], row = el('tr', f === selFunc ? 'sel' : '');
      cols.forEach(function (j) {
        var c = fl.cols[j], v = fl.v[j][k], td = el('td', 'n', fmtCell(c, v));
        if (c.mark && fl.marks && (fl.marks[k] & c.mark)) {      /* mostly probe cost */
          td.textContent = '~' + td.textContent;
          marks++;
        }
        if (c.kind === 'text' && (v === 'real')) {
          var up = 0;
          cols.forEach(function (jj) { if (fl.cols[jj].kind === 'sns' || fl.cols[jj].kind === 'snum') up = fl.v[jj][k]; });
          td.className = 'n ' + (up > 0 ? 'real-up' : 'real-down');
        } else if (c.kind === 'text' && (v === 'noise' || v === 'same')) {
          td.className = 'n noise';
        }
        row.appendChild(td);
      });
      var td = el('td', 'fn');
      funcCell(td, f, rowTag(k));
      row.appendChild(td);
      row.addEventListener('click', function () { select(f, true); });
      frag.appendChild(row);
    });
    tbody.appendChild(frag);
    $('table-note').textContent = (idx.length > MAX_TABLE_ROWS ? 'showing ' + MAX_TABLE_ROWS + ' of ' : '') +
      fmtCount(idx.length) + ' function' + (idx.length === 1 ? '' : 's') +
      (q ? ' matching "' + q + '"' : '') + '; click a column to sort' +
      (diff ? ', a row to mark its paths in the graph' : ', a row for its callers and callees') +
      (marks ? '. ' + TILDE : '');
  }

  function setSort(k) {
    if (sortCol === k) sortDesc = !sortDesc;
    else { sortCol = k; sortDesc = k !== -1; }
    renderTable();
  }

  /* ---- callers and callees ---------------------------------------------------- */

  function select(f, fromTable) {
    selFunc = f;
    renderTable();
    if (!diff) renderCalls(f);
    draw();
    if (fromTable && !diff) $('calls-sec').scrollIntoView({ block: 'nearest' });
  }

  function renderCalls(f) {
    var sec = $('calls-sec'), box = $('calls'), E = D.edges || [];
    sec.hidden = false;
    $('calls-title').textContent = 'Callers and callees of ' + fname(f);
    var callers = [], callees = [];
    for (var i = 0; i + 5 < E.length; i += 6) {
      if (E[i + 1] === f) callers.push(i);
      if (E[i] === f && F.kind[E[i]] !== 2) callees.push(i);
    }
    var byIncl = function (a, b) { return E[b + 3] - E[a + 3] || (fname(E[a]) < fname(E[b]) ? -1 : 1); };
    callers.sort(byIncl);
    callees.sort(function (a, b) { return E[b + 3] - E[a + 3] || (fname(E[a + 1]) < fname(E[b + 1]) ? -1 : 1); });
    var self = { calls: F.calls[f], incl: F.incl[f], excl: F.excl[f], all: F.incl_all[f] };
    var t = el('table', 'data'), th = el('tr');
    ['calls', 'incl', 'self', 'incl/call', 'self/call', 'incl%'].forEach(function (h) {
      th.appendChild(el('th', null, h));
    });
    th.appendChild(el('th', 'fn', 'function'));
    t.appendChild(el('thead')).appendChild(th);
    var tb = el('tbody');
    var line = function (g, calls, incl, excl, all, cls, where) {
      var tr = el('tr');
      tr.appendChild(el('td', 'n', fmtCount(calls)));
      tr.appendChild(el('td', 'n', fmtNs(incl)));
      tr.appendChild(el('td', 'n', fmtNs(excl)));
      tr.appendChild(el('td', 'n', fmtNs(calls ? all / calls : 0)));
      tr.appendChild(el('td', 'n', fmtNs(calls ? excl / calls : 0)));
      tr.appendChild(el('td', 'n', fmtPct(incl, self.incl)));
      var td = el('td', 'fn ' + cls);
      funcCell(td, g, where);
      tr.appendChild(td);
      if (g !== f && F.kind[g] !== 2) tr.addEventListener('click', function () { select(g, false); });
      tb.appendChild(tr);
    };
    callers.forEach(function (i) { line(E[i], E[i + 2], E[i + 3], E[i + 4], E[i + 5], 'ind', 'caller'); });
    line(f, self.calls, self.incl, self.excl, self.all, 'self', '');
    callees.forEach(function (i) { line(E[i + 1], E[i + 2], E[i + 3], E[i + 4], E[i + 5], 'ind', 'callee'); });
    t.appendChild(tb);
    box.textContent = '';
    box.appendChild(el('p', null, 'Per caller: the calls it made to ' + fname(f) + ' and the time ' +
      fname(f) + ' spent on them; per callee: the calls from ' + fname(f) + ' and the time spent in ' +
      'them, summed over every call path and thread (as capprof callers/callees print them). ' +
      'incl: inclusive time (outermost calls of a pair), self: exclusive time, incl/call: the mean ' +
      'inclusive time of one call; incl% is of ' + fname(f) + '\'s incl.'));
    box.appendChild(t);
  }

  /* ---- header -------------------------------------------------------------------- */

  function fact(tb, label, value) {
    var tr = el('tr');
    tr.appendChild(el('td', null, label));
    var td = el('td');
    if (typeof value === 'string') td.textContent = value;
    else td.appendChild(value);
    tr.appendChild(td);
    tb.appendChild(tr);
  }

  /* Facts about a set of dumps, as [label, text] rows. */
  function dumpFacts(dumps) {
    if (!dumps.length) return [];
    var d0 = dumps[0], rows = [['program', d0.exe], ['command line', d0.cmdline]];
    if (dumps.length === 1) {
      rows.push(['dump', d0.path + ' (pid ' + d0.pid + (d0.merged ? ', merged by capprof merge' : '') + ')']);
      rows.push(['duration', fmtNs(d0.duration_ns) + ' from start to dump']);
    } else {
      rows.push(['dumps', dumps.length + ' (one run each): ' +
        dumps.map(function (d) { return baseName(d.path); }).join(', ')]);
      rows.push(['duration', dumps.map(function (d) { return fmtNs(d.duration_ns); }).join(', ') +
        ' (each run, start to dump)']);
    }
    var probes = dumps.map(function (d) {
      return fmtNs(d.probe_inner_ns) + ' own + ' + fmtNs(d.probe_outer_ns) + ' caller\'s';
    });
    var uniq = probes.filter(function (p, k) { return probes.indexOf(p) === k; });
    rows.push(['probe overhead', uniq.join('; ') + ' per call (calibrated at start-up; clock: ' + d0.clock + ')']);
    dumps.forEach(function (d) {
      var ic = d.intercept;
      if (!ic) return;
      rows.push(['library calls', (dumps.length > 1 ? baseName(d.path) + ': ' : '') + 'interception ' + ic.status +
        (ic.spec ? ' (' + ic.spec + ')' : '') + ', ' + fmtCount(ic.modules) + ' modules and ' + fmtCount(ic.slots) +
        ' import slots patched; probe ' + fmtNs(ic.inner_ns) + ' own + ' + fmtNs(ic.outer_ns) +
        ' caller\'s per intercepted call' + (ic.unrecorded ? '; ' + fmtCount(ic.unrecorded) +
        ' calls passed through unrecorded' : '')]);
    });
    return rows;
  }

  function header() {
    var tb = $('facts'), dumps = diff ? D['new'].dumps : D.dumps;
    var prog = dumps.length ? baseName(dumps[0].exe) : '';
    document.title = (diff ? 'capprof diff: ' : 'capprof: ') + prog;
    $('title').textContent = (diff ? 'capprof diff: ' : 'capprof report: ') + prog;
    var comp = D.compensated ? 'compensated: each call\'s probe overhead is subtracted (per call and per call below, clamped at 0)'
      : 'raw: as measured, the probe overhead included (--raw)';
    if (!diff) {
      dumpFacts(D.dumps).forEach(function (r) { fact(tb, r[0], r[1]); });
      fact(tb, 'threads', String(D.threads));
      fact(tb, 'calls', fmtCount(D.calls));
      fact(tb, 'total time', fmtNs(D.total_ns) + ' elapsed (all threads, inclusive)');
      if (D.weight_line) fact(tb, 'ranked by', D.weight_line);
      if (D.flat.runs) {
        fact(tb, 'runs', D.flat.runs + ' (one per dump); time per run ' + fmtNs(D.flat.run_mean) + ', spread ' +
          fmtNs(D.flat.run_sd) + ' (sd), ' + fmtNs(D.flat.run_min) + ' to ' + fmtNs(D.flat.run_max));
      }
    } else {
      var a = dumpFacts(D.base.dumps), b = dumpFacts(D['new'].dumps), hd = el('tr');
      ['', 'before (BASE)', 'after (NEW)'].forEach(function (h) { hd.appendChild(el('th', null, h)); });
      tb.appendChild(hd);
      for (var i = 0; i < Math.max(a.length, b.length); i++) {
        var tr = el('tr');
        tr.appendChild(el('td', null, (a[i] || b[i])[0]));
        tr.appendChild(el('td', null, a[i] ? a[i][1] : ''));
        tr.appendChild(el('td', null, b[i] ? b[i][1] : ''));
        tb.appendChild(tr);
      }
      fact(tb, 'runs', D.base.runs + ' before, ' + D['new'].runs + ' after');
      fact(tb, 'verdict', 'per function, a change is "real" when it exceeds the run-to-run spread ' +
        '(Welch\'s t test, two-sided, 95%), "noise" when it does not, as capprof diff BASE... -- NEW... ' +
        'says' + (D.base.runs < 2 || D['new'].runs < 2 ? '; each side needs two runs or more for a verdict, ' +
        'so none is given here' : ''));
    }
    fact(tb, 'times', comp);
    $('foot-comp').textContent = 'times are ' + comp + '.';
    var w = $('warnings');
    w.textContent = '';
    if (D.warnings.length) {
      var ul = el('ul');
      D.warnings.forEach(function (s) { ul.appendChild(el('li', null, 'warning: ' + s)); });
      w.appendChild(ul);
    } else {
      w.appendChild(el('div', 'none', 'The tool printed no warnings (no unterminated zones, no lost calls, no missing or rebuilt modules).'));
    }
  }

  function legend() {
    var lg = $('legend');
    lg.textContent = '';
    var sw = function (c, text) {
      var s = el('span', 'sw');
      s.style.background = c;
      lg.appendChild(s);
      lg.appendChild(document.createTextNode(text));
    };
    if (diff) {
      lg.appendChild(document.createTextNode('Width: incl (inclusive) time per run after. Colour: the change of each path\'s ' +
        metricNames[metric] + (metric === 2 ? '' : ' time') + ' per run, where its function\'s change is real:'));
      sw(mix(WEAK, UP, 1), 'more');
      sw(mix(WEAK, DOWN, 1), 'less');
      sw(mix(NEUTRAL, NEUTRAL, 0), 'noise or unchanged');
      sw(mix(WEAK, UP, 0.4), 'changed, no verdict (fewer than two runs on a side)');
    } else {
      lg.appendChild(document.createTextNode('Width: ' + wname() + ' incl (inclusive; ' + (D.weight_line || '') +
        '); self is exclusive. Callers above ' +
        'callees, siblings largest first (as capprof tree). Click a node to zoom, the top node to zoom out; ' +
        'hover for its figures.'));
      sw('#d04fd8', 'search match');
      sw('hsl(200,55%,65%)', 'zone');
      if (F.kind.indexOf(3) >= 0) sw('hsl(115,45%,62%)', 'library call (capprof run)');
      sw('#c8c8c8', 'synthetic or [other]');
    }
  }

  /* ---- start -------------------------------------------------------------------- */

  function selectTree(k) {
    cur = prepare(trees[k]);
    zoom = 0;
    draw();
  }

  function init() {
    var t0 = performance.now();
    D = JSON.parse($('capprof-data').textContent);
    F = D.funcs;
    diff = D.kind === 'diff';
    trees = D.trees;
    canvas = $('flame');
    ctx = canvas.getContext('2d');
    header();
    $('flame-title').textContent = diff ? 'Differential call tree (icicle)' : 'Call tree (icicle)';
    $('table-title').textContent = D.flat.title;
    var sel = $('tree-sel');
    trees.forEach(function (T, k) {
      var o = el('option', null, T.label + ' (' + fmtNs(T.t[0]) + ', ' + fmtCount(T.calls) + ' calls)');
      o.value = String(k);
      sel.appendChild(o);
    });
    sel.addEventListener('change', function () { selectTree(+sel.value); });
    if (diff) {
      metric = D.metric >= 0 && D.metric <= 2 ? D.metric : 0;      /* diff --sort */
      $('metric-sel').value = String(metric);
      $('metric-box').hidden = false;
      $('metric-sel').addEventListener('change', function () {
        metric = +$('metric-sel').value;
        legend();
        renderTable();
        draw();
      });
    }
    legend();
    var timer = null;
    $('search').addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(runSearch, 120);
    });
    $('search').addEventListener('keydown', function (ev) { if (ev.key === 'Enter') { clearTimeout(timer); runSearch(); } });
    var ft = null;
    $('filter').addEventListener('input', function () { clearTimeout(ft); ft = setTimeout(renderTable, 120); });
    if (F.kind.indexOf(3) >= 0) {      /* 'capprof run': library calls can be shown alone */
      $('api-box').hidden = false;
      $('api-only').addEventListener('change', renderTable);
    }
    canvas.addEventListener('mousemove', tooltip);
    canvas.addEventListener('mouseleave', function () { $('tip').hidden = true; });
    canvas.addEventListener('click', onClick);
    document.addEventListener('keydown', function (ev) {
      if (ev.key === 'Escape' && cur && zoom) setZoom(cur.parent[zoom]);
    });
    var rt = null;
    window.addEventListener('resize', function () { clearTimeout(rt); rt = setTimeout(draw, 100); });
    D.flat.cols.forEach(function (c, k) {      /* a sampled run: cpu self first, as report */
      if (sortCol === null && D.flat.sort && c.key === D.flat.sort) sortCol = k;
    });
    D.flat.cols.forEach(function (c, k) {
      if (sortCol === null && (c.key === 'self' || c.key === metricNames[metric] + '_d')) sortCol = k;
    });
    renderTable();
    if (trees.length) selectTree(0);
    else $('flame-note').textContent = 'No call tree: the dump holds no profiled thread.';
    api.ready = true;
    api.readyMs = performance.now();
    api.initMs = api.readyMs - t0;
  }

  /* For tests and benchmarks (tests/html/): where a function is drawn, what is shown. */
  var api = {
    ready: false,
    /* The centre of the widest drawn node of the function named name, in
    ** viewport coordinates, or null. */
    nodeCenter: function (name) {
      if (!rects) return null;
      var best = -1;
      for (var k = 0; k < rects.node.length; k++) {
        var n = rects.node[k];
        if (n && F.name[cur.f[n]] === name && (best < 0 || rects.w[k] > rects.w[best])) best = k;
      }
      if (best < 0) return null;
      var b = canvas.getBoundingClientRect();
      return { x: b.left + rects.x[best] + rects.w[best] / 2, y: b.top + rects.row[best] * ROW + ROW / 2 };
    },
    /* Calls and inclusive time (as 'capprof tree' prints them) of the
    ** widest drawn node of a function. */
    nodeFigures: function (name) {
      var best = -1;
      for (var k = 0; rects && k < rects.node.length; k++) {
        var n = rects.node[k];
        if (n && F.name[cur.f[n]] === name && (best < 0 || rects.w[k] > rects.w[best])) best = k;
      }
      if (best < 0) return null;
      var i = rects.node[best];
      return { calls: fmtCount(cur.c[i]), incl: fmtNs(cur.t[i]), excl: fmtNs(cur.excl[i]),
        depth: cur.depth[i] };
    },
    zoomName: function () { return cur ? nodeName(cur, zoom) : null; },
    drawn: function () { return rects ? rects.node.length : 0; }
  };
  window.capprof = api;

  try {
    init();
  } catch (err) {
    var p = el('p', 'error', 'capprof page error: ' + (err && err.stack || err));
    document.body.insertBefore(p, document.body.firstChild);
    console.error('capprof page error: ' + (err && err.stack || err));
  }
})();
