// The network movie's player (tpsim.movie; templates/movie.html.j2 puts it in the page):
// plain ES2017, no library. It builds the SVG from the JSON beside it (the section's
// .mv-data) and redraws at each animation frame while playing; the section's data-frame
// and data-time give the frame and simulated time shown. With data-url-time (tpsim
// animate's page) the URL fragment #t=SECONDS gives the time to open at, and is kept as the
// player is seeked or paused.
(function () {
  "use strict";
  var root = document.currentScript.parentElement;
  var D = JSON.parse(root.querySelector(".mv-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function q(sel) { return root.querySelector(sel); }
  var F = D.frames, step = D.step, n = D.n;
  // Per-frame indexes of the flat arrays.
  function byFrame(arr, stride) {
    var out = new Array(F);
    for (var i = 0; i < F; i++) out[i] = [];
    for (var j = 0; j < arr.length; j += stride) out[arr[j]].push(arr.slice(j + 1, j + stride));
    return out;
  }
  var hops = byFrame(D.hops, 5), drops = byFrame(D.drops, 5), deliv = byFrame(D.deliv, 4);
  // Map geometry: metres, y up; a margin around the nodes' extent of 6 % of it, or more so that
  // every node's range circles (up to R metres) fit whole.
  var a = D.area, w = Math.max(a[2] - a[0], 1), h = Math.max(a[3] - a[1], 1), side = Math.max(w, h), R = 0;
  (D.ranges || []).forEach(function (g) { R = Math.max(R, g[0] || 0, g[1] || 0); });
  var m = Math.max(side * 0.06, R * 1.02);
  var x0 = a[0] - m - (side - w) / 2, y1 = a[3] + m + (side - h) / 2, S = side + 2 * m;
  function sx(x) { return x - x0; }
  function sy(y) { return y1 - y; }
  var map = q(".mv-map");
  map.setAttribute("viewBox", "0 0 " + S + " " + S);
  // Layers, bottom to top: ranges, hops, drop rings and route changes, nodes, labels.
  var gRange = el("g", {}, map), gHop = el("g", {}, map), gMark = el("g", {}, map), gNode = el("g", {}, map);
  var gLabel = el("g", {}, map);
  var r = S / 110;
  var rangeRx = el("circle", {"class": "mv-range", fill: "rgba(0,114,178,0.06)", stroke: "#0072B2", "stroke-width": 1,
                              "vector-effect": "non-scaling-stroke", visibility: "hidden"}, gRange);
  var rangeCs = el("circle", {"class": "mv-cs-range", fill: "none", stroke: "#0072B2", "stroke-dasharray": "4 4", "stroke-width": 1,
                              "vector-effect": "non-scaling-stroke", visibility: "hidden"}, gRange);
  var info = q(".mv-info");
  var hovered = -1;
  var nodes = [], labels = [], rings = [];
  for (var i = 0; i < n; i++) {
    rings.push(el("circle", {r: r * 2, fill: "none", "stroke-width": 3, "vector-effect": "non-scaling-stroke",
                             "class": "mv-drop", "data-node": i, visibility: "hidden"}, gMark));
    var c = el("circle", {r: r, fill: "#fff", "stroke-width": 1.2, "vector-effect": "non-scaling-stroke",
                          "class": "mv-node", "data-node": i}, gNode);
    el("title", {}, c).textContent = "node " + i;
    (function (k) {
      c.addEventListener("mouseenter", function () { hovered = k; draw(); });
      c.addEventListener("mouseleave", function () { hovered = -1; draw(); });
    })(i);
    nodes.push(c);
    // Above every ring, line and node, with a white halo so that a ring across it leaves it readable.
    var lab = el("text", {"font-size": r * 1.5, "text-anchor": "middle", fill: "#333", stroke: "#fff",
                          "stroke-width": r * 0.45, "stroke-linejoin": "round", "paint-order": "stroke",
                          "pointer-events": "none", "class": "mv-label", "data-node": i}, gLabel);
    lab.textContent = i;
    labels.push(lab);
  }
  // Flow endpoints get their flow's colour.
  D.flows.forEach(function (f) {
    if (f.src != null && f.src < n) nodes[f.src].setAttribute("fill", f.color);
    if (f.dst != null && f.dst < n) nodes[f.dst].setAttribute("fill", f.color);
  });
  var routeLines = [];
  var hopPool = [];
  function hopLine(k) {
    while (hopPool.length <= k) {
      hopPool.push(el("line", {"stroke-linecap": "round", "vector-effect": "non-scaling-stroke",
                               "class": "mv-hop", "marker-end": ""}, gHop));
    }
    return hopPool[k];
  }
  function posAt(i, t) {
    var p = D.pos[i];
    if (!p || p.length === 0) return [0, 0];
    var lo = 0, hi = p.length / 3 - 1;
    if (t <= p[0]) return [p[1], p[2]];
    if (t >= p[hi * 3]) return [p[hi * 3 + 1], p[hi * 3 + 2]];
    while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (p[mid * 3] <= t) lo = mid; else hi = mid; }
    var ta = p[lo * 3], tb = p[hi * 3], f = (t - ta) / (tb - ta);
    return [p[lo * 3 + 1] + f * (p[hi * 3 + 1] - p[lo * 3 + 1]), p[lo * 3 + 2] + f * (p[hi * 3 + 2] - p[lo * 3 + 2])];
  }
  function stateAt(i, t) {
    var s = "up";
    for (var k = 0; k < D.events.length; k++) {
      var e = D.events[k];
      if (e[0] > t) break;
      if (e[1] !== i) continue;
      if (e[2] === "energy") return "dead";
      s = (e[2] === "down" || e[2] === "radio_down") ? "down" : "up";
    }
    return s;
  }
  function fmt(t) { return t.toFixed(t < 100 ? 2 : 1) + " s"; }
  // --- the plot: each flow direction's delivered kbit/s, mean over the last PLOT_MEAN_S
  // (at least a frame); drops per frame as ticks below.
  var plot = q(".mv-plot"), PW = 1000, PH = 180, PL = 50, PR = 10, PT = 10, PB = 40;
  plot.setAttribute("viewBox", "0 0 " + PW + " " + PH);
  var win = Math.max(1, Math.round(D.plot_mean / step));
  var rate = D.flows.map(function () { return new Float64Array(F); });
  var dropsPer = new Float64Array(F), ymax = 0, dmax = 0;
  for (var fr = 0; fr < F; fr++) {
    deliv[fr].forEach(function (d) { if (d[0] >= 0) rate[d[0]][fr] += d[2] * 8 / 1000 / (win * step); });
    drops[fr].forEach(function (d) { dropsPer[fr] += d[3]; });
    dmax = Math.max(dmax, dropsPer[fr]);
  }
  rate = rate.map(function (s) {
    var out = new Float64Array(F), acc = 0;
    for (var k = 0; k < F; k++) { acc += s[k]; if (k >= win) acc -= s[k - win]; out[k] = acc; }
    return out;
  });
  rate.forEach(function (s) { for (var k = 0; k < F; k++) ymax = Math.max(ymax, s[k]); });
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  var end = D.end || F * step;
  function px(t) { return PL + (PW - PL - PR) * t / end; }
  function py(v) { return PT + (PH - PT - PB) * (1 - v / ymax); }
  el("line", {x1: PL, y1: PH - PB, x2: PW - PR, y2: PH - PB, stroke: "#999"}, plot);
  el("line", {x1: PL, y1: PT, x2: PL, y2: PH - PB, stroke: "#999"}, plot);
  // Ticks at 1, 2 or 5 times a power of ten, 4 to 10 of them.
  var tstep = Math.pow(10, Math.floor(Math.log10(end / 4)));
  if (end / (tstep * 5) >= 4) tstep *= 5; else if (end / (tstep * 2) >= 4) tstep *= 2;
  for (var tt = 0; tt <= end + 1e-9; tt += tstep) {
    el("line", {x1: px(tt), x2: px(tt), y1: PH - PB, y2: PH - PB + 4, stroke: "#999"}, plot);
    el("text", {x: px(tt), y: PH - PB + 15, "font-size": 11, "text-anchor": "middle", fill: "#555"}, plot).textContent = +tt.toPrecision(6) + "";
  }
  el("text", {x: (PL + PW) / 2, y: PH - 4, "font-size": 11, "text-anchor": "middle", fill: "#555"}, plot).textContent = "time (s)";
  el("text", {x: PL - 6, y: PT + 8, "font-size": 11, "text-anchor": "end", fill: "#555"}, plot).textContent = +ymax.toPrecision(2) + "";
  el("text", {x: PL - 6, y: PH - PB, "font-size": 11, "text-anchor": "end", fill: "#555"}, plot).textContent = "0";
  el("text", {x: 12, y: (PT + PH - PB) / 2, "font-size": 11, "text-anchor": "middle", fill: "#555",
              transform: "rotate(-90 12 " + (PT + PH - PB) / 2 + ")"}, plot).textContent = "kbit/s";
  if (dmax > 0) {
    var dpath = "";
    for (var k2 = 0; k2 < F; k2++) if (dropsPer[k2] > 0) {
      var hgt = 12 * dropsPer[k2] / dmax;
      dpath += "M" + px(k2 * step).toFixed(1) + " " + (PH - PB) + "v" + (-hgt).toFixed(1);
    }
    el("path", {d: dpath, stroke: "#C00000", "stroke-width": 1.5, fill: "none"}, plot);
  }
  rate.forEach(function (s, fi) {
    var pts = [];
    for (var k = 0; k < F; k++) pts.push(px((k + 1) * step).toFixed(1) + "," + py(s[k]).toFixed(1));
    el("polyline", {points: pts.join(" "), fill: "none", stroke: D.flows[fi].color, "stroke-width": 1.2}, plot);
  });
  var cursor = el("line", {y1: PT, y2: PH - PB, stroke: "#000", "stroke-width": 1.5, "class": "mv-cursor"}, plot);
  plot.addEventListener("click", function (ev) {
    var b = plot.getBoundingClientRect();
    var x = (ev.clientX - b.left) / b.width * PW;
    seek(Math.max(0, Math.min(end, (x - PL) / (PW - PL - PR) * end)));
  });
  // --- legend and log.
  var legend = q(".mv-legend");
  function li(list, color, text) {
    var it = document.createElement("li");
    var sw = document.createElement("span");
    sw.className = "mv-sw"; sw.style.background = color;
    it.appendChild(sw); it.appendChild(document.createTextNode(text));
    list.appendChild(it);
  }
  var lf = document.createElement("ul"); legend.appendChild(lf);
  D.flows.forEach(function (f) { li(lf, f.color, f.label); });
  if (D.hops.some(function (v, k) { return k % 5 === 3 && v === -1; })) li(lf, "#999", "packets without data (ACKs)");
  if (D.reasons.length) {
    var ld = document.createElement("ul"); legend.appendChild(ld);
    D.reasons.forEach(function (rn, k) { li(ld, D.reason_colors[k], "drop: " + rn); });
  }
  var log = q(".mv-log");
  // --- playback.
  var t = 0, playing = false, last = null;
  var speedSel = q(".mv-speed"), seekIn = q(".mv-seek"), playBtn = q(".mv-play"), timeOut = q(".mv-time");
  seekIn.max = F - 1;
  function frameOf(tm) { return Math.max(0, Math.min(F - 1, Math.floor(tm / step + 1e-9))); }
  function draw() {
    var fr = frameOf(t);
    root.setAttribute("data-frame", fr);
    root.setAttribute("data-time", t.toFixed(3));
    timeOut.textContent = fmt(t);
    seekIn.value = fr;
    cursor.setAttribute("x1", px(t)); cursor.setAttribute("x2", px(t));
    var P = [];
    for (var i = 0; i < n; i++) {
      var p = posAt(i, t); P.push(p);
      var st = stateAt(i, t);
      nodes[i].setAttribute("cx", sx(p[0]).toFixed(2)); nodes[i].setAttribute("cy", sy(p[1]).toFixed(2));
      nodes[i].setAttribute("class", "mv-node" + (st === "dead" ? " mv-dead" : st === "down" ? " mv-down" : ""));
      labels[i].setAttribute("x", sx(p[0]).toFixed(2)); labels[i].setAttribute("y", (sy(p[1]) - r * 1.4).toFixed(2));
      rings[i].setAttribute("visibility", "hidden");
    }
    // Hops of the last TRAIL seconds, the newest on top, fading with age.
    var trail = Math.max(1, Math.round(D.trail / step)), used = 0, seen = {};
    for (var k = 0; k < trail && fr - k >= 0; k++) {
      hops[fr - k].forEach(function (hp) {
        var key = hp[0] + ">" + hp[1] + ":" + hp[2];
        if (seen[key] || hp[0] >= n || hp[1] >= n) return;
        seen[key] = 1;
        var ln = hopLine(used++), A = P[hp[0]], B = P[hp[1]];
        ln.setAttribute("x1", sx(A[0])); ln.setAttribute("y1", sy(A[1]));
        ln.setAttribute("x2", sx(B[0])); ln.setAttribute("y2", sy(B[1]));
        ln.setAttribute("stroke", hp[2] >= 0 ? D.flows[hp[2]].color : "#999");
        ln.setAttribute("stroke-width", Math.min(8, 2 + Math.log2(1 + hp[3])));
        ln.setAttribute("opacity", (1 - k / trail) * 0.9 + 0.1);
        ln.setAttribute("data-from", hp[0]); ln.setAttribute("data-to", hp[1]);
        ln.setAttribute("visibility", "visible");
      });
    }
    for (var u = used; u < hopPool.length; u++) hopPool[u].setAttribute("visibility", "hidden");
    root.setAttribute("data-hops", used);
    // Drops of the last second: a ring in the reason's colour.
    var recent = Math.max(1, Math.round(1 / step));
    for (var k3 = 0; k3 < recent && fr - k3 >= 0; k3++) {
      drops[fr - k3].forEach(function (d) {
        if (d[0] >= n) return;
        var ring = rings[d[0]];
        ring.setAttribute("cx", sx(P[d[0]][0])); ring.setAttribute("cy", sy(P[d[0]][1]));
        ring.setAttribute("stroke", D.reason_colors[d[1]]);
        ring.setAttribute("visibility", "visible");
      });
    }
    // Next-hop changes of the last second: a dashed line to the new next hop.
    routeLines.forEach(function (l) { l.remove(); });
    routeLines = [];
    for (var j = 0; j < D.routes.length; j += 5) {
      var rt = D.routes[j];
      if (rt > t) break;
      if (rt < t - 1) continue;
      var nd = D.routes[j + 1], nw = D.routes[j + 4];
      if (nd >= n || nw >= n) continue;
      routeLines.push(el("line", {x1: sx(P[nd][0]), y1: sy(P[nd][1]), x2: sx(P[nw][0]), y2: sy(P[nw][1]),
                                  stroke: "#D55E00", "stroke-dasharray": "5 4", "stroke-width": 1.5,
                                  "vector-effect": "non-scaling-stroke", "class": "mv-route"}, gMark));
    }
    // Radio ranges of the node under the pointer.
    if (hovered >= 0 && D.ranges) {
      var hp2 = P[hovered], rg = D.ranges[hovered];
      [[rangeRx, rg[0]], [rangeCs, rg[1]]].forEach(function (c) {
        c[0].setAttribute("cx", sx(hp2[0])); c[0].setAttribute("cy", sy(hp2[1]));
        c[0].setAttribute("r", c[1] || 0); c[0].setAttribute("visibility", c[1] ? "visible" : "hidden");
      });
    } else {
      rangeRx.setAttribute("visibility", "hidden"); rangeCs.setAttribute("visibility", "hidden");
    }
    if (hovered >= 0) {
      var hp3 = P[hovered];
      info.textContent = "node " + hovered + " at (" + hp3[0].toFixed(0) + ", " + hp3[1].toFixed(0) + ") m" +
        (D.ranges ? "; receive range " + D.ranges[hovered][0] + " m, carrier sense " + D.ranges[hovered][1] + " m" : "");
    } else {
      info.textContent = "Hover a node for its radio ranges.";
    }
    writeLog(fr);
  }
  var logKey = null;
  function writeLog(fr) {
    // Events of the last 5 s, newest first: route changes, drops, node events.
    var from = t - 5, items = [];
    for (var j = 0; j < D.routes.length; j += 5) {
      var rt = D.routes[j];
      if (rt > t) break;
      if (rt < from) continue;
      var fl = D.routes[j + 2];
      items.push([rt, "node " + D.routes[j + 1] + ": next hop " + D.routes[j + 3] + " \u2192 " + D.routes[j + 4] +
                  (fl >= 0 ? " (" + D.flows[fl].label.split(" (")[0] + ")" : "")]);
    }
    for (var k = fr; k >= 0 && k * step >= from - step; k--) {
      drops[k].forEach(function (d) {
        items.push([k * step, d[3] + " drop" + (d[3] > 1 ? "s" : "") + " (" + D.reasons[d[1]] + ") at node " + d[0]]);
      });
    }
    D.events.forEach(function (e) {
      if (e[0] <= t && e[0] >= from) {
        var what = {energy: "out of energy", down: "down", up: "up", radio_down: "radio off", radio_up: "radio on"}[e[2]] || e[2];
        items.push([e[0], "node " + e[1] + " " + what]);
      }
    });
    items.sort(function (p, q2) { return q2[0] - p[0]; });
    items = items.slice(0, 14);
    var key = items.map(function (x) { return x[0] + x[1]; }).join("|");
    if (key === logKey) return;
    logKey = key;
    while (log.firstChild) log.removeChild(log.firstChild);
    items.forEach(function (x) {
      var it = document.createElement("li");
      it.textContent = fmt(x[0]) + "  " + x[1];
      log.appendChild(it);
    });
  }
  // The URL fragment #t=SECONDS (with data-url-time): read at load and when edited; written
  // (replacing, not adding, a history entry) 0.2 s after the last seek, or at a pause.
  var urlTime = root.hasAttribute("data-url-time"), urlTimer = null;
  function timeInUrl() {
    var mt = /(?:^#|&)t=(\d+(?:\.\d*)?|\.\d+)s?(?:&|$)/.exec(location.hash);
    return mt ? parseFloat(mt[1]) : null;
  }
  function keepInUrl() {
    if (!urlTime) return;
    clearTimeout(urlTimer);
    urlTimer = setTimeout(function () {
      var hs = "#t=" + (+t.toFixed(3));
      if (location.hash === hs) return;
      try { history.replaceState(history.state, "", hs); } catch (e) { /* a page that may not change its URL */ }
    }, 200);
  }
  function seek(tm) { t = Math.max(0, Math.min(end, tm)); draw(); keepInUrl(); }
  function tick(now) {
    if (!playing) return;
    if (last !== null) t += (now - last) / 1000 * parseFloat(speedSel.value);
    last = now;
    if (t >= end) { t = end; setPlaying(false); }
    draw();
    if (playing) requestAnimationFrame(tick);
  }
  function setPlaying(on) {
    playing = on; last = null;
    playBtn.textContent = on ? "Pause" : "Play";
    root.setAttribute("data-playing", on ? "1" : "0");
    if (on) { if (t >= end) t = 0; requestAnimationFrame(tick); } else keepInUrl();
  }
  playBtn.addEventListener("click", function () { setPlaying(!playing); });
  seekIn.addEventListener("input", function () { seek(parseInt(seekIn.value, 10) * step); });
  if (urlTime) {
    window.addEventListener("hashchange", function () { var u = timeInUrl(); if (u !== null) seek(u); });
    var u0 = timeInUrl();
    if (u0 !== null) t = Math.max(0, Math.min(end, u0));
  }
  draw();
})();
