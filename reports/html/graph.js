"use strict";
// The event graph of a livecheck report, drawn from the JSON above as SVG.
// Steps are numbered from 1 as in the text report; step 0 is the initial
// state. States are rebuilt from the initial one and per-step changes.
(function () {
  const G = JSON.parse(document.getElementById("data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const ROW = 20, LANE = 56, PAD = 24, LABEL = 400, HEAD = 44;
  const crit = G.critical ? G.critical.step : 0;
  const liveStep = G.critical ? G.critical.live_step : -1;
  const slip = G.critical && G.critical.slip_step ? G.critical.slip_step : 0;
  const visible = new Set();
  for (let i = 0; i < G.nodes; i++) visible.add(i);
  let showLive = !!G.live && liveStep >= 0;
  let selected = null; // {col, step}

  // The steps each column shows expanded, as inclusive ranges; the rest
  // are collapsed into rows that expand on a click. A long dead path
  // shows its start, the steps around the critical one and its end.
  function initialRanges(n, from, around) {
    if (n - from < 200) return [[from, n]];
    const r = [[from, Math.min(n, from + 19)]];
    if (around > 0) r.push([Math.max(from, around - 20), Math.min(n, around + 10)]);
    if (around > 0 && slip > 0 && slip < around - 20) r.push([Math.max(from, slip - 2), Math.min(n, slip + 2)]);
    r.push([Math.max(from, n - 2), n]);
    return r;
  }
  const cols = {
    dead: { name: "dead", title: "dead path", path: G.dead, first: 1, ranges: initialRanges(G.dead.steps.length, 1, crit) },
  };
  if (G.live) {
    cols.live = { name: "live", title: "nearest live path (from where it parts)", path: G.live, first: liveStep + 1,
      ranges: initialRanges(G.live.steps.length, liveStep + 1, 0) };
  }

  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function h(tag, cls, parent, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  const fmt = (n) => n.toLocaleString("en-US");
  const expanded = (col, i) => col.ranges.some((r) => i >= r[0] && i <= r[1]);
  const shown = (st) => visible.has(st.n) || (st.p >= 0 && visible.has(st.p) && (st.k === "deliver" || st.k === "drop"));

  // rows lists what a column draws, top down: the initial state (dead
  // path), steps, and collapsed runs of steps.
  function rows(col) {
    const out = [];
    if (col.first === 1) out.push({ init: true, step: 0 });
    const steps = col.path.steps;
    let gap = null;
    for (let i = col.first; i <= steps.length; i++) {
      const st = steps[i - 1];
      if (!shown(st)) continue;
      if (expanded(col, i)) {
        gap = null;
        out.push({ step: i });
      } else if (gap) {
        gap.to = i;
        gap.count++;
      } else {
        gap = { gap: true, from: i, to: i, count: 1 };
        out.push(gap);
      }
    }
    return out;
  }

  function draw() {
    const root = document.getElementById("graph");
    root.textContent = "";
    const lanes = [...visible].sort((a, b) => a - b);
    const laneX = new Map(lanes.map((n, i) => [n, PAD + i * LANE + LANE / 2]));
    const deadRows = rows(cols.dead);
    const names = showLive && cols.live ? ["dead", "live"] : ["dead"];
    let deadYOf = null;
    for (const name of names) {
      const col = cols[name];
      const rs = name === "dead" ? deadRows : rows(col);
      // The live column starts level with the dead path's first step
      // past the shared ones.
      let top = 0;
      if (name === "live" && deadYOf) {
        const y = deadYOf.get(liveStep + 1);
        if (y !== undefined) top = y - ROW / 2 - HEAD;
      }
      const labelX = PAD + lanes.length * LANE + 6;
      const width = labelX + LABEL;
      const height = HEAD + rs.length * ROW + 8;
      const svg = el("svg", { id: "col-" + name, class: "col " + name, width: width, height: height,
        style: "margin-top:" + Math.max(0, top) + "px" }, root);
      const defs = el("defs", {}, svg);
      const mk = el("marker", { id: "head-" + name, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#3367d6" }, mk);
      el("text", { x: PAD, y: 14, class: "colhead" }, svg, col.title);
      for (const n of lanes) {
        el("text", { x: laneX.get(n), y: HEAD - 8, class: "lanehead" }, svg, "node " + n);
        el("line", { x1: laneX.get(n), x2: laneX.get(n), y1: HEAD, y2: height - 4, class: "lane", "data-node": n }, svg);
      }
      // yOf maps each step to the y of its row, or of the collapsed row
      // it is in.
      const yOf = new Map();
      const gOf = new Map();
      rs.forEach((r, k) => {
        const y = HEAD + k * ROW + ROW / 2;
        if (r.gap) {
          for (let i = r.from; i <= r.to; i++) { yOf.set(i, y); gOf.set(i, r); }
        } else {
          yOf.set(r.step, y);
        }
      });
      if (name === "dead") deadYOf = yOf;
      const rowsG = el("g", {}, svg);
      const arrowsG = el("g", {}, svg);
      rs.forEach((r, k) => {
        const y0 = HEAD + k * ROW, y = y0 + ROW / 2;
        if (r.gap) {
          const g = el("g", { class: "gap" }, rowsG);
          el("rect", { x: 0, y: y0 + 1, width: width, height: ROW - 2 }, g);
          el("text", { x: labelX, y: y + 4 }, g,
            "\u2026 " + fmt(r.count) + (r.count === 1 ? " step" : " steps") + " (" + fmt(r.from) + "\u2013" + fmt(r.to) + ") collapsed: click to show " + (r.count > 200 ? "200 more" : "them"));
          g.addEventListener("click", () => { col.ranges.push([r.from, Math.min(r.to, r.from + 199)]); draw(); });
          return;
        }
        const i = r.step;
        let cls = "row";
        if (name === "dead" && crit > 0 && i === crit) cls += " critical";
        if (name === "dead" && slip > 0 && i === slip && i !== crit) cls += " slip";
        if (name === "dead" && i === liveStep && liveStep >= 0) cls += " parted";
        if (selected && selected.col === name && selected.step === i) cls += " selected";
        // A click anywhere on the row, its label and mark included.
        const rowG = el("g", { class: "step" }, rowsG);
        rowG.addEventListener("click", () => select(name, i));
        const rowAttrs = { x: 0, y: y0, width: width, height: ROW, class: cls, "data-step": i };
        if (name === "dead") rowAttrs.id = "dead-step-" + i; // the timeline's links point here
        el("rect", rowAttrs, rowG);
        if (r.init) {
          el("text", { x: labelX, y: y + 4 }, rowG, "0. initial state");
          return;
        }
        const st = col.path.steps[i - 1];
        const x = laneX.get(st.n);
        if (x !== undefined) {
          el("circle", { cx: x, cy: y, r: 4.5, class: "ev " + st.k }, rowG);
          // Letters, not symbols: every font has them.
          const mark = { reset: "R", "socket-error": "E", app: "A", duplicate: "2", partition: "P", heal: "H", crash: "C" }[st.k];
          if (mark) el("text", { x: x + 7, y: y + 4, class: "mark" }, rowG, mark);
        }
        let label = fmt(i) + ". " + st.t;
        if (st.s && st.s.length) label += "  => " + st.s.join(", ");
        const whole = label;
        if (label.length > 100) label = label.slice(0, 99) + "\u2026";
        const t = el("text", { x: labelX, y: y + 4, class: st.v ? "viol" : "" }, rowG, label);
        el("title", {}, rowG, whole); // the whole label, on hover
        if (name === "dead" && i === crit) {
          t.setAttribute("class", "critlabel");
          t.textContent = "\u2605 " + label;
        } else if (name === "dead" && i === slip) {
          t.setAttribute("class", "sliplabel");
          t.textContent = "S " + label;
        }
        // The message it delivers or drops, from the step that sent it.
        if ((st.k === "deliver" || st.k === "drop") && st.f >= 0 && laneX.has(st.p) && x !== undefined) {
          let ys = yOf.get(st.f);
          let stub = false;
          if (ys === undefined) { ys = HEAD; stub = true; } // sent on the shared steps, drawn in the dead column
          if (gOf.get(st.f) && gOf.get(st.f) === gOf.get(i)) return;
          const x1 = laneX.get(st.p);
          el("path", { d: "M" + x1 + "," + ys + " L" + x + "," + (y - 3), class: "arrow" + (st.k === "drop" ? " drop" : "") + (stub ? " stub" : ""),
            "marker-end": "url(#head-" + name + ")", "data-from": st.f, "data-to": i }, arrowsG);
          if (st.k === "drop") el("text", { x: x + 7, y: y + 4, class: "mark" }, rowG, "x"); // in the drop's own row
        }
      });
      // A column as wide as its longest label: none is clipped.
      let right = width;
      for (const tx of svg.querySelectorAll("text")) {
        const b = tx.getBBox();
        right = Math.max(right, Math.ceil(b.x + b.width) + 8);
      }
      svg.setAttribute("width", right);
      for (const r of svg.querySelectorAll("rect")) if (+r.getAttribute("width") === width) r.setAttribute("width", right); // rows too
    }
  }

  // stateAt rebuilds a path's state after step k: node lines and
  // messages in flight (a multiset).
  function stateAt(path, k) {
    const nodes = path.init.slice();
    const net = new Map();
    for (const m of path.init_net || []) net.set(m, (net.get(m) || 0) + 1);
    for (let i = 0; i < k; i++) {
      const st = path.steps[i];
      for (const c of st.c || []) nodes[c.n] = c.s;
      for (const m of st.no || []) { const n = net.get(m) - 1; if (n > 0) net.set(m, n); else net.delete(m); }
      for (const m of st.ni || []) net.set(m, (net.get(m) || 0) + 1);
    }
    return { nodes, net };
  }

  function select(name, i) {
    selected = { col: name, step: i };
    for (const r of document.querySelectorAll("rect.row.selected")) r.classList.remove("selected");
    const r = document.querySelector("#col-" + name + " rect.row[data-step='" + i + "']");
    if (r) r.classList.add("selected");
    const col = cols[name];
    const p = document.getElementById("panel");
    p.textContent = "";
    const n = col.path.steps.length;
    const st = i > 0 ? col.path.steps[i - 1] : null;
    h("h2", "", p, col.title + ", " + (i === 0 ? "the initial state" : "step " + fmt(i) + " of " + fmt(n) + ": " + st.t));
    if (name === "dead" && i === crit && G.critical) {
      h("div", "critinfo", p, "the critical step (case " + G.critical.case + ")" + (G.critical.dead ? ": after it, " + G.critical.dead : ""));
    }
    if (name === "dead" && i === slip && G.critical.slip) h("div", "slipinfo", p, "the slip: " + G.critical.slip);
    if (name === "dead" && i === liveStep && G.critical && G.critical.alive) h("div", "", p, "after it, " + G.critical.alive);
    if (name === "dead" && G.history) {
      for (const [k, o] of G.history.operations.entries()) {
        const ill = k === G.history.illegal;
        if (o.invoke_step === i) h("div", "hist", p, "client " + o.client + " invokes " + o.input);
        if (!o.pending && o.return_step === i) {
          h("div", "hist" + (ill ? " illegal" : ""), p, "client " + o.client + "'s " + o.input + " returns " + o.output + (ill ? ", which no order of the operations allows" : ""));
        }
      }
    }
    if (st) {
      if (st.s && st.s.length) h("div", "", p, "sends " + st.s.join(", "));
      for (const l of st.l || []) h("div", "", p, "log " + l);
      if (st.v) h("div", "del", p, "!! " + st.v);
      if (st.f >= 0) h("div", "", p, "its message was sent " + (st.f === 0 ? "in Init" : "at step " + fmt(st.f)));
    }
    const s = stateAt(col.path, i);
    const changed = new Map((st && st.c || []).map((c) => [c.n, c]));
    h("h2", "", p, "nodes" + (st ? " (changed ones marked)" : ""));
    s.nodes.forEach((line, k) => {
      const d = h("div", "node" + (changed.has(k) ? " changed" : ""), p, "node " + k + ": " + line + (line.includes(" timers=") ? "" : "  (no timers)"));
      d.dataset.node = k;
      const c = changed.get(k);
      if (c) for (const f of c.d) h("div", "chg", p, (f.field ? f.field + ": " : "") + f.from + " -> " + f.to);
    });
    let inflight = 0;
    for (const v of s.net.values()) inflight += v;
    h("h2", "", p, "in flight (" + inflight + ")");
    const added = new Set(st && st.ni || []);
    for (const [m, c] of s.net) h("div", added.has(m) ? "add" : "", p, m + (c > 1 ? " \u00d7" + c : ""));
    if (st && st.no && st.no.length) {
      h("h2", "", p, "taken out of flight");
      for (const m of st.no) h("div", "del", p, m);
    }
    // Where the live path runs beside, the two states at the same step.
    if (showLive && cols.live && i > liveStep && i <= Math.min(cols.dead.path.steps.length, cols.live.path.steps.length)) {
      const other = name === "dead" ? "live" : "dead";
      const o = stateAt(cols[other].path, i);
      const diffs = [];
      s.nodes.forEach((line, k) => { if (o.nodes[k] !== line) diffs.push([k, line, o.nodes[k]]); });
      h("h2", "", p, "after step " + fmt(i) + ", " + name + " vs " + other + " path");
      if (!diffs.length) h("div", "", p, "the same node states");
      for (const [k, a, b] of diffs) {
        h("div", "node changed", p, "node " + k + ": " + a);
        h("div", "chg", p, "vs " + b);
      }
    }
  }

  function summary() {
    document.getElementById("title").textContent = G.title;
    const lines = [G.config];
    if (G.message) lines.push(G.message);
    const c = G.critical;
    if (c) {
      lines.push("critical step " + fmt(c.step) + " of " + fmt(G.dead.steps.length) + " (case " + c.case + "): " + c.event);
      if (c.dead) lines.push("after step " + fmt(c.step) + ": " + c.dead);
      if (c.alive) lines.push("after step " + fmt(c.live_step) + ": " + c.alive);
      if (c.slip) lines.push((c.slip_step ? "slip (S), step " + fmt(c.slip_step) + ": " : "") + c.slip);
      if (G.live) lines.push("the nearest live path shares the first " + fmt(c.live_step) + " steps, then takes " + (c.live_event || "another step") + " (" + fmt(G.live.steps.length) + " steps in all)");
    }
    if (G.tail_text) lines.push(G.tail_text);
    document.getElementById("summary").textContent = lines.join("\n");
    const f = document.getElementById("filters");
    f.appendChild(document.createTextNode("nodes: "));
    for (let i = 0; i < G.nodes; i++) {
      const l = h("label", "", f);
      const cb = h("input", "", l);
      cb.type = "checkbox";
      cb.checked = true;
      cb.dataset.node = i;
      cb.addEventListener("change", () => { if (cb.checked) visible.add(i); else visible.delete(i); draw(); });
      l.appendChild(document.createTextNode(" " + i + " "));
    }
    const sl = document.getElementById("showlive");
    if (!cols.live) sl.parentElement.style.display = "none";
    sl.addEventListener("change", () => { showLive = sl.checked; draw(); });
    document.getElementById("expandall").addEventListener("click", () => {
      for (const k in cols) cols[k].ranges = [[cols[k].first, cols[k].path.steps.length]];
      draw();
    });
  }

  // The walk statistics: how the walks from the depth bound did, and what
  // each probe and dead test of the critical search saw, as bars.
  function walks() {
    const W = G.walks;
    const sec = document.getElementById("walks");
    if (!W) { sec.style.display = "none"; return; }
    h("h2", "", sec, "Walk statistics: how strong the \u201cdead\u201d verdict is");
    if (W.walks > 0) {
      h("div", "", sec, fmt(W.walks) + " walk" + (W.walks === 1 ? "" : "s") + " of up to " + fmt(W.walk_depth) + " steps from the depth bound: " +
        fmt(W.walks - W.suspects) + " reached a live state, " + fmt(W.suspects) + " did not (" + fmt(W.cleared) + " of those recovered on a longer walk)");
      const svg = el("svg", { width: 420, height: 22, class: "chart" }, sec);
      const okW = 400 * (W.walks - W.suspects + W.cleared) / W.walks;
      el("rect", { x: 0, y: 3, width: okW, height: 16, class: "bar live" }, svg);
      el("rect", { x: okW, y: 3, width: 400 - okW, height: 16, class: "bar dead" }, svg);
    }
    if (W.dead_test) {
      const d = W.dead_test;
      h("div", "", sec, "the trace records the dead test of its last state: a search of up to " + fmt(d.search_states) + " states, then " +
        fmt(d.walks) + " walks of " + fmt(d.walk_depth) + " steps, none of which reached a live state (the probes themselves are in the report of `check --html`)");
    }
    const T = (W.tested || []).slice().sort((a, b) => a.step - b.step || a.dead_test - b.dead_test);
    if (!T.length) return;
    h("div", "", sec, "the states the critical search tested, by step: walks run (red: none recovered; green: one did, and the walks stop there) and how deep it went");
    const maxWalks = Math.max(1, ...T.map((t) => t.walks));
    const maxDepth = Math.max(1, ...T.map((t) => t.live ? t.steps_to_live || 0 : Math.max(t.search_depth, t.walk_depth)));
    const RH = 18, LW = 170, BW = 220;
    const svg = el("svg", { width: LW + 2 * BW + 460, height: 20 + T.length * RH, class: "chart", id: "walkchart" }, sec);
    el("text", { x: LW, y: 12 }, svg, "walks");
    el("text", { x: LW + BW + 10, y: 12 }, svg, "depth (log scale)");
    T.forEach((t, k) => {
      const y = 18 + k * RH;
      el("text", { x: 0, y: y + 12 }, svg, "step " + fmt(t.step) + (t.dead_test ? " dead test" : " probe"));
      const w = Math.max(2, BW * t.walks / maxWalks);
      el("rect", { x: LW, y: y + 2, width: t.live && t.walks === 0 ? 2 : w, height: RH - 5, class: "bar " + (t.live ? "live" : "dead") }, svg);
      const depth = t.live ? (t.steps_to_live || 0) : Math.max(t.search_depth, t.walk_depth);
      // Log scale: recoveries take tens of steps, dead tests walk thousands.
      el("rect", { x: LW + BW + 10, y: y + 2, width: Math.max(2, BW * Math.log1p(depth) / Math.log1p(maxDepth)), height: RH - 5, class: "bar depth" }, svg);
      let words;
      if (t.live) words = t.by === "live" ? "live itself" : "recovered in " + fmt(t.steps_to_live) + " steps (" + t.by + ")";
      else words = "0 of " + fmt(t.walks) + " walks of " + fmt(t.walk_depth) + " steps; " + fmt(t.search_states) + " states searched to depth " + fmt(t.search_depth);
      el("text", { x: LW + 2 * BW + 20, y: y + 12 }, svg, words);
    });
  }

  // The recovery odds before the critical step: how many of a few walks
  // from the state after each step reach a live state, as a curve.
  function odds() {
    const O = G.critical && G.critical.odds;
    if (!O || !O.recovered || !O.recovered.length) return;
    const sec = document.getElementById("walks");
    sec.style.display = "";
    h("h2", "", sec, "Recovery odds along the dead path");
    // A state before the critical step that none of its walks brought
    // back still recovers where the critical search proved the one
    // before the critical step does (alive): the path leads there. It
    // is drawn hollow, at the top: proven, not sampled.
    const proven = (step, v) => !!G.critical.alive && step < crit && v === 0;
    const anyProven = O.recovered.some((v, k) => proven(O.from_step + k, v));
    h("div", "", sec, "of " + fmt(O.walks) + " walks of up to " + fmt(O.walk_depth) + " steps from the state after each step, how many reach a live state" +
      (O.suspect ? "; a sharp fall after step " + fmt(O.suspect) : "") + (slip ? "; S: the slip" : "") +
      (anyProven ? "; hollow: no walk recovered, yet the state does (the path leads to the state after step " + fmt(crit - 1) + ", which recovers)" : ""));
    const n = O.recovered.length, DX = 24, H = 120, L = 30;
    const svg = el("svg", { width: L + n * DX + 20, height: H + 40, class: "chart", id: "oddschart" }, sec);
    const yOf = (v) => 10 + H * (1 - v / O.walks);
    el("line", { x1: L, x2: L + n * DX, y1: yOf(0), y2: yOf(0), class: "lane" }, svg);
    el("text", { x: 0, y: yOf(O.walks) + 4 }, svg, String(O.walks));
    el("text", { x: 0, y: yOf(0) + 4 }, svg, "0");
    let d = "";
    O.recovered.forEach((v, k) => {
      const step = O.from_step + k, x = L + k * DX + DX / 2;
      const y = proven(step, v) ? yOf(O.walks) : yOf(v);
      d += (k ? " L" : "M") + x + "," + y;
      const cls = "oddsdot" + (step === crit ? " critical" : step === slip ? " slip" : step === O.suspect ? " suspect" : "") + (proven(step, v) ? " proven" : "");
      el("circle", { cx: x, cy: y, r: 3.5, class: cls, "data-step": step }, svg);
      el("text", { x: x - 8, y: H + 28, class: "oddsstep" }, svg, (step === slip ? "S" : step === crit ? "\u2605" : "") + fmt(step));
    });
    el("path", { d: d, class: "oddsline" }, svg);
  }

  // goStep shows step i of the dead path: its row expanded if it was
  // collapsed, selected, and scrolled to (its anchor, dead-step-i).
  function goStep(i) {
    const col = cols.dead;
    if (i > 0 && !expanded(col, i)) { col.ranges.push([Math.max(1, i - 2), Math.min(col.path.steps.length, i + 2)]); draw(); }
    select("dead", i);
    location.hash = "dead-step-" + i;
  }

  // The client history of a linearizability violation as a timeline:
  // a lane per client, x the steps of the dead path; each operation a
  // bar from the step that invoked it to the one that returned it (open
  // on the right while pending), linked to both; the longest
  // linearizable prefix shaded, with an order of it numbered; the
  // operation no order allows marked.
  function timeline() {
    const H = G.history;
    const sec = document.getElementById("timeline");
    if (!H) { sec.style.display = "none"; return; }
    const ops = H.operations;
    const ill = ops[H.illegal];
    h("h2", "", sec, "Client history: node " + H.node + ", spec " + H.spec + (H.key ? ", key " + H.key : "") + " \u2014 not linearizable");
    h("div", "hint", sec, "one lane per client; a bar per operation, from the step that invoked it to the step that returned it (dashed and open: pending); " +
      "red: client " + ill.client + "'s " + ill.input + " returned " + ill.output + ", which no order allows (the state before can be " + H.states.join(" or ") + "); " +
      "shaded: the longest linearizable prefix, every event before that response, its operations on the key numbered in an order one copy runs them" +
      (H.prefix.ordered ? "" : " (too wide to order)") + "; click a bar for the step that invoked it, its right end for the step that returned it");
    const clients = [...new Set(ops.map((o) => o.client))].sort((a, b) => a - b);
    const n = G.dead.steps.length;
    const LEFT = 70, LANEH = 30, TOP = 30;
    const DX = Math.max(3, Math.min(60, 1000 / (n + 1)));
    const xOf = (step) => LEFT + step * DX + DX / 2;
    const right = xOf(n) + DX / 2 + 16;
    const height = TOP + clients.length * LANEH + 6;
    const svg = el("svg", { width: right + 10, height: height, id: "timelinesvg" }, sec);
    // A bar's label goes in it, or past its end where the client's next
    // bar leaves room (the page widens for the last).
    const CH = 6.7, nextX = new Map();
    for (const [k, o] of ops.entries()) {
      const later = ops.filter((p, j) => j > k && p.client === o.client);
      nextX.set(k, later.length ? xOf(later[0].invoke_step) - 4 : Infinity);
    }
    let widest = right + 10;
    // Steps, as ticks far enough apart to read.
    let every = 1;
    for (const k of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]) { every = k; if (k * DX >= 24) break; }
    for (let st = 0; st <= n; st += every) {
      el("line", { x1: xOf(st), x2: xOf(st), y1: TOP - 4, y2: height - 4, class: "tick" }, svg);
      el("text", { x: xOf(st), y: TOP - 8, class: "ticklabel" }, svg, fmt(st));
    }
    el("text", { x: 4, y: TOP - 8, class: "ticklabel", style: "text-anchor:start" }, svg, "step");
    const laneY = new Map(clients.map((c, k) => [c, TOP + k * LANEH]));
    for (const c of clients) {
      el("rect", { x: LEFT, y: laneY.get(c) + 2, width: right - LEFT, height: LANEH - 4, class: "clientlane", "data-client": c }, svg);
      el("text", { x: 4, y: laneY.get(c) + LANEH / 2 + 4, class: "lanehead", style: "text-anchor:start" }, svg, "client " + c);
    }
    // The prefix ends with the illegal response, which it leaves out.
    const pEnd = xOf(ill.return_step) - 2;
    el("rect", { x: LEFT, y: TOP, width: Math.max(0, pEnd - LEFT), height: clients.length * LANEH, class: "prefix", id: "linprefix" }, svg);
    const order = new Map(H.prefix.order.map((k, pos) => [k, pos + 1]));
    ops.forEach((o, k) => {
      const y = laneY.get(o.client) + 6, bh = LANEH - 12;
      const x0 = xOf(o.invoke_step) - 4;
      const x1 = o.pending ? right : Math.max(xOf(o.return_step) + 4, x0 + 8);
      let cls = "opbar";
      if (k === H.illegal) cls += " illegal";
      else if (o.role) cls += " " + o.role;
      else if (H.key && o.key !== H.key) cls += " otherkey";
      if (o.pending) cls += " pending";
      const words = "client " + o.client + ": " + o.input + (o.pending ? " pending, from step " + fmt(o.invoke_step) :
        " -> " + o.output + ", steps " + fmt(o.invoke_step) + "\u2013" + fmt(o.return_step)) +
        (k === H.illegal ? ": no order of the operations allows it" : o.role === "before" ? ": completed before it" : o.role === "concurrent" ? ": concurrent with it" : "") +
        (order.has(k) ? "; number " + order.get(k) + " in an order of the prefix" : "");
      const a = el("a", { href: "#dead-step-" + o.invoke_step, class: "oplink", "data-step": o.invoke_step }, svg);
      a.addEventListener("click", (e) => { e.preventDefault(); goStep(o.invoke_step); });
      el("rect", { x: x0, y: y, width: x1 - x0, height: bh, rx: 3, class: cls, "data-op": k, "data-client": o.client }, a);
      el("title", {}, a, words);
      let label = (order.has(k) ? order.get(k) + ". " : "") + o.input + (o.pending ? " (pending)" : " \u2192 " + o.output);
      if (k === H.illegal) label = "X " + label;
      const lw = label.length * CH;
      let lx = null;
      if (lw < x1 - x0 - 8) lx = x0 + 4;
      else if (!o.pending && x1 + 6 + lw < nextX.get(k)) lx = x1 + 6;
      if (lx !== null) {
        el("text", { x: lx, y: y + bh - 5, class: "oplabel" + (k === H.illegal ? " illegal" : "") }, svg, label);
        widest = Math.max(widest, lx + lw + 10);
      }
      if (!o.pending) {
        const b = el("a", { href: "#dead-step-" + o.return_step, class: "retlink", "data-step": o.return_step }, svg);
        b.addEventListener("click", (e) => { e.preventDefault(); goStep(o.return_step); });
        el("rect", { x: x1 - 5, y: y - 2, width: 6, height: bh + 4, class: "opend" + (k === H.illegal ? " illegal" : ""), "data-op": k }, b);
        el("title", {}, b, "step " + fmt(o.return_step) + ": returns " + o.output);
      }
    });
    svg.setAttribute("width", widest);
  }

  summary();
  timeline();
  draw();
  walks();
  odds();
  if (crit > 0) select("dead", crit);
})();
