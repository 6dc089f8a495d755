#pragma once
// The report page's own CSS and script (html_report.cpp puts the data between them). The script
// reads the JSON in #report-data and draws each trace's sections; nothing is fetched.

namespace workbook::detail {

inline constexpr const char* kReportStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; cursor: pointer; user-select: none; position: sticky; top: 0; }
th.sorted-desc::after { content: " \25BC"; } th.sorted-asc::after { content: " \25B2"; }
td.name, th.name { text-align: left; max-width: 46em; overflow: hidden; text-overflow: ellipsis; }
.scroll { max-height: 32em; overflow: auto; border: 1px solid #ddd; display: inline-block; }
.note { color: #666; font-size: 12px; } .finding { margin: 0.6em 0; padding: 0.4em 0.8em; background: #fff7e0; }
.silent { color: #666; } .bar { background: #4a90d9; height: 10px; display: inline-block; }
.flame { position: relative; width: 100%; border: 1px solid #ddd; overflow: hidden; }
.frame { position: absolute; height: 17px; font-size: 11px; line-height: 17px; overflow: hidden;
         white-space: nowrap; border: 1px solid #fff; box-sizing: border-box; padding-left: 2px; cursor: pointer; }
input[type=search] { width: 22em; margin: 0.3em 0; }
)css";

inline constexpr const char* kReportIntro = R"html(<p class="note">A summary of the traces below, made by
<code>./workbook report</code>. The timeline stays with Perfetto: open the trace itself at
<code>https://ui.perfetto.dev</code> (it reads .json and .json.gz). Click a column's heading to sort by it,
type in a filter box to keep matching names, click a flame-graph frame to zoom into it.</p>
)html";

inline constexpr const char* kReportScript = R"js(
"use strict";
const traces = JSON.parse(document.getElementById("report-data").textContent);
const app = document.getElementById("app");
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) k === "text" ? (e.textContent = v) : e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
};
const fmtUs = (v) => v >= 1e6 ? (v / 1e6).toFixed(3) + " s" : v >= 1e3 ? (v / 1e3).toFixed(3) + " ms" : v.toFixed(3) + " us";
const fmtBytes = (v) => { const a = Math.abs(v); return a >= 1 << 30 ? (v / (1 << 30)).toFixed(2) + " GiB" :
  a >= 1 << 20 ? (v / (1 << 20)).toFixed(2) + " MiB" : a >= 1024 ? (v / 1024).toFixed(2) + " KiB" : v + " B"; };
const fmtPct = (v) => (100 * v).toFixed(1) + "%";

// A table sortable by any column (click its heading; again to reverse) and filtered by name.
function sortableTable(id, columns, rows, withFilter) {
  const wrap = el("div");
  let shown = rows.slice(), key = null, descending = true, filter = "";
  const table = el("table", {id});
  const head = el("tr");
  const body = el("tbody");
  for (const c of columns) {
    const th = el("th", {class: c.name ? "name" : "", "data-key": c.key, text: c.title});
    th.addEventListener("click", () => { descending = key === c.key ? !descending : true; key = c.key; draw(); });
    head.append(th);
  }
  table.append(el("thead", {}, head), body);
  function draw() {
    shown = rows.filter((r) => !filter || String(r.name).toLowerCase().includes(filter));
    if (key !== null) {
      const column = columns.find((c) => c.key === key);
      shown.sort((a, b) => {
        const x = a[key], y = b[key];
        const order = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
        return descending ? -order : order;
      });
      for (const th of head.children)
        th.className = (th.dataset.key === key ? (descending ? "sorted-desc" : "sorted-asc") : "") +
                       (columns.find((c) => c.key === th.dataset.key).name ? " name" : "");
      void column;
    }
    body.replaceChildren(...shown.map((r) => el("tr", {}, ...columns.map((c) => {
      const td = el("td", {class: c.name ? "name" : "", text: c.format ? c.format(r[c.key], r) : String(r[c.key])});
      if (c.name) td.title = String(r[c.key]);
      return td;
    }))));
  }
  if (withFilter) {
    const box = el("input", {type: "search", placeholder: "filter by name", id: id + "-filter"});
    box.addEventListener("input", () => { filter = box.value.toLowerCase(); draw(); });
    wrap.append(box);
  }
  wrap.append(el("div", {class: "scroll"}, table));
  draw();
  return wrap;
}

function operatorColumns(byShape, hasDevice, hasMemory) {
  const columns = [{key: "name", title: "Name", name: true}];
  if (byShape) columns.push({key: "input_shapes", title: "Input Shapes", name: true});
  columns.push({key: "count", title: "# of Calls"}, {key: "self_cpu_us", title: "Self CPU", format: fmtUs},
               {key: "cpu_total_us", title: "CPU total", format: fmtUs}, {key: "cpu_avg_us", title: "CPU time avg", format: fmtUs});
  if (hasDevice) columns.push({key: "self_device_us", title: "Self CUDA", format: fmtUs},
                              {key: "device_total_us", title: "CUDA total", format: fmtUs});
  if (hasMemory) columns.push({key: "cpu_memory_bytes", title: "CPU Mem", format: fmtBytes},
                              {key: "self_cpu_memory_bytes", title: "Self CPU Mem", format: fmtBytes});
  columns.push({key: "flops", title: "Total FLOPs"});
  return columns;
}

function operatorsSection(t, index) {
  const section = el("div");
  const hasDevice = t.operators.some((r) => r.device_total_us > 0);
  const hasMemory = t.operators.some((r) => r.cpu_memory_bytes !== 0 || r.self_cpu_memory_bytes !== 0);
  const withShapes = t.operators_by_shape.some((r) => r.input_shapes);
  const holder = el("div");
  const draw = (byShape) => holder.replaceChildren(sortableTable("operators-" + index + (byShape ? "-by-shape" : ""),
    operatorColumns(byShape, hasDevice, hasMemory), byShape ? t.operators_by_shape : t.operators, true));
  if (withShapes) {
    const box = el("input", {type: "checkbox", id: "by-shape-" + index});
    box.addEventListener("change", () => draw(box.checked));
    section.append(el("label", {}, box, " group by input shape"));
  } else {
    section.append(el("p", {class: "note", text: "no input shapes in this trace (record_shapes was off): one row per name"}));
  }
  section.append(holder);
  draw(false);
  return section;
}

function overviewSection(t) {
  const columns = [{key: "name", title: "Step", name: true}, {key: "wall_us", title: "Wall", format: fmtUs},
                   {key: "cpu_ops_us", title: "CPU in ops", format: fmtUs},
                   {key: "cpu_outside_ops_us", title: "CPU outside ops", format: fmtUs}];
  if (t.overview.has_gpu) columns.push({key: "gpu_kernels_us", title: "GPU kernels", format: (v) => v === undefined ? "" : fmtUs(v)},
    {key: "gpu_memcpy_us", title: "GPU memcpy", format: (v) => v === undefined ? "" : fmtUs(v)},
    {key: "gpu_memset_us", title: "GPU memset", format: (v) => v === undefined ? "" : fmtUs(v)},
    {key: "gpu_idle_us", title: "GPU idle", format: (v) => v === undefined ? "" : fmtUs(v)});
  const table = sortableTable("overview-" + t.index, columns, t.overview.rows, false);
  if (t.overview.steps_not_listed) table.append(el("p", {class: "note", text: "the first 100 steps are listed; " +
    t.overview.steps_not_listed + " more are in the whole-trace row only"}));
  return table;
}

function gpuSection(t) {
  const section = el("div");
  if (!t.gpu.devices.length) { section.append(el("p", {class: "note", text: "no GPU activity in this trace"})); return section; }
  const rows = [];
  for (const d of t.gpu.devices) for (const s of d.streams)
    rows.push({name: "GPU " + d.device + " stream " + s.stream, busy_us: s.busy_us, busy_fraction: s.busy_fraction, activities: s.activities});
  section.append(el("h3", {text: "busy per stream (over the whole trace)"}),
    sortableTable("streams-" + t.index, [{key: "name", title: "Stream", name: true}, {key: "busy_us", title: "Busy", format: fmtUs},
      {key: "busy_fraction", title: "Busy %", format: fmtPct}, {key: "activities", title: "Activities"}], rows, false));
  if (t.gpu.steps.length) {
    const steps = t.gpu.steps.map((s) => ({name: s.name, window_us: s.window_us, verdict: s.verdict,
      busy: s.devices.map((d) => "GPU " + d.device + " " + fmtPct(d.busy_fraction)).join(", ")}));
    if (t.gpu.steps_not_listed) section.append(el("p", {class: "note", text: t.gpu.steps_not_listed + " steps after the first 100 are not listed"}));
    section.append(el("h3", {text: "busy per step"}), sortableTable("gpu-steps-" + t.index, [{key: "name", title: "Step", name: true},
      {key: "window_us", title: "Wall", format: fmtUs}, {key: "busy", title: "Busy", name: true}, {key: "verdict", title: "Verdict", name: true}], steps, false));
  } else if (t.gpu.steps_left_out) section.append(el("p", {class: "note", text: t.gpu.steps_left_out}));
  return section;
}

function kernelsSection(t) {
  if (!t.kernels.length) return el("p", {class: "note", text: "no GPU kernels in this trace"});
  return sortableTable("kernels-" + t.index, [{key: "name", title: "Kernel", name: true}, {key: "family", title: "Family", name: true},
    {key: "fields", title: "What the name says", name: true}, {key: "count", title: "Calls"}, {key: "total_us", title: "Total", format: fmtUs},
    {key: "avg_us", title: "Avg", format: fmtUs}, {key: "share", title: "Share", format: fmtPct}], t.kernels, true);
}

function memorySection(t) {
  const section = el("div");
  if (!t.memory.length) { section.append(el("p", {class: "note", text: "no memory events (profile_memory was off)"})); return section; }
  const ns = "http://www.w3.org/2000/svg";
  for (const m of t.memory) {
    section.append(el("h3", {text: m.device + ": peak " + m.peak_mib.toFixed(2) + " MiB" + (m.peak_op ? " in " + m.peak_op : "") + " (" + m.events + " events)"}));
    const w = 900, h = 200, pts = m.points;
    const tMax = Math.max(1e-9, ...pts.map((p) => p[0])), lo = Math.min(0, ...pts.map((p) => p[1])), hi = Math.max(1e-9, ...pts.map((p) => p[1]));
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", w); svg.setAttribute("height", h + 20); svg.setAttribute("class", "memory");
    let d = "";
    pts.forEach((p, i) => { const x = 40 + (w - 50) * p[0] / tMax, y = 5 + h - h * (p[1] - lo) / (hi - lo);
      d += (i ? "H" + x.toFixed(1) + "V" : "M" + x.toFixed(1) + ",") + y.toFixed(1); });
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d); path.setAttribute("fill", "none"); path.setAttribute("stroke", "#4a90d9");
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", 40); label.setAttribute("y", h + 18); label.setAttribute("font-size", "11");
    label.textContent = "0 to " + tMax.toFixed(3) + " ms from the first memory event; live MiB from " + lo.toFixed(2) + " to " + hi.toFixed(2);
    svg.append(path, label);
    section.append(svg);
  }
  return section;
}

// The flame graph: frames as boxes as wide as their time, roots at the top; a click zooms.
function flameSection(t) {
  const section = el("div");
  if (!t.flame.length) { section.append(el("p", {class: "note", text: "no host events with self time"})); return section; }
  const root = {name: "all", us: 0, children: new Map()};
  for (const s of t.flame) {
    let node = root; root.us += s.us;
    for (const f of s.frames) {
      if (!node.children.has(f)) node.children.set(f, {name: f, us: 0, children: new Map(), parent: node});
      node = node.children.get(f); node.us += s.us;
    }
  }
  const box = el("div", {class: "flame", id: "flame-" + t.index});
  const crumb = el("p", {class: "note"});
  const colour = (name) => { let h = 0; for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 360; return "hsl(" + (20 + h % 40) + ",80%,62%)"; };
  function draw(top) {
    box.replaceChildren();
    const width = box.clientWidth || 1000;
    let depthMax = 0;
    const place = (node, x, depth, scale) => {
      const w = node.us * scale;
      if (w < 1) return;
      depthMax = Math.max(depthMax, depth);
      const f = el("div", {class: "frame", title: node.name + ": " + fmtUs(node.us) + " (" + fmtPct(node.us / root.us) + " of all)"});
      f.style.left = x + "px"; f.style.width = w + "px"; f.style.top = depth * 18 + "px"; f.style.background = colour(node.name);
      f.textContent = w > 30 ? node.name : "";
      f.addEventListener("click", () => draw(node));
      box.append(f);
      let cx = x;
      for (const c of [...node.children.values()].sort((a, b) => b.us - a.us)) { place(c, cx, depth + 1, scale); cx += c.us * scale; }
    };
    place(top, 0, 0, width / top.us);
    box.style.height = (depthMax + 1) * 18 + 4 + "px";
    const path = []; for (let n = top; n; n = n.parent) path.unshift(n.name);
    crumb.textContent = "zoomed into: " + path.join(" > ");
    if (top !== root) { const back = el("button", {text: "zoom out to all"}); back.addEventListener("click", () => draw(root)); crumb.append(" ", back); }
  }
  section.append(crumb, box);
  requestAnimationFrame(() => draw(root));
  draw(root);
  return section;
}

function adviceSection(t) {
  const section = el("div");
  const a = t.advice;
  if (!a.findings.length) section.append(el("p", {text: "no rule of the cheat sheet fired on this trace"}));
  for (const f of a.findings)
    section.append(el("div", {class: "finding"}, el("b", {text: "[" + f.rule + "] if you see " + f.if_you_see}), el("br"),
      "here: " + f.evidence, el("br"), "it usually means " + f.usually_means, el("br"), el("span", {class: "note", text: "fires on: " + f.threshold})));
  for (const s of a.silent) section.append(el("div", {class: "silent", text: "silent: [" + s.rule + "] fires on: " + s.threshold}));
  return section;
}

traces.forEach((t, index) => {
  t.index = index;
  app.append(el("h2", {text: t.name}),
    el("p", {class: "note", text: t.events + " events over " + fmtUs(t.span_us) + (t.gpu.devices.length ? ", " + t.gpu.devices.length + " GPU(s)" : ", no GPU activity")}),
    el("h3", {text: "Overview: each step's time"}), overviewSection(t),
    el("h3", {text: "Operators (key_averages)"}), operatorsSection(t, index),
    el("h3", {text: "Kernels"}), kernelsSection(t),
    el("h3", {text: "GPU busy"}), gpuSection(t),
    el("h3", {text: "Memory"}), memorySection(t),
    el("h3", {text: "Flame graph (self time, as Python's export_stacks)"}), flameSection(t),
    el("h3", {text: "Advisor: the cheat sheet on this trace"}), adviceSection(t));
});
document.body.dataset.ready = "1";
)js";

}  // namespace workbook::detail
