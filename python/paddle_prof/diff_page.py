"""The HTML page of a diff (``Diff.to_html``, ``python3 -m paddle_prof diff -o``): one
self-contained file, as the report page is: no network, no external file, the data in
a script element that no name can end. It shows the changed rows, each place's memory
over time in both runs overlaid, and the steps of both side by side."""

from __future__ import annotations

import json
import os
from typing import Any, Dict

from paddle_prof.atomic_write import write_atomically


def _script_json(value: Any) -> str:
    """JSON that stays inside <script>: no '</' (which could close it), no '<!--', and no
    U+2028/U+2029 (line ends to older JavaScript)."""
    text = json.dumps(value, allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _run(summary: Dict[str, Any]) -> Dict[str, Any]:
    """What the page draws of one run: its memory over time and its steps."""
    timeline = {place: {"t_ms": points.get("t_ms", []), "bytes": points.get("bytes", [])}
                for place, points in (summary.get("timeline") or {}).items()}
    steps = [{"step": s.get("step"), "wall_ms": s.get("wall_ms")}
             for s in summary.get("steps") or []]
    return {"timeline": timeline, "steps": steps, "wall_ms": summary.get("wall_ms")}


def write_diff_page(diff: Any, base: Dict[str, Any], new: Dict[str, Any], path: Any) -> None:
    data = {"diff": diff.to_dict(), "changed": diff.changed(), "base": _run(base),
            "new": _run(new)}
    write_atomically(os.fspath(path), _PAGE.replace("/*DATA*/null", _script_json(data)))


_PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>paddle_prof diff</title>
<style>
  :root { --ink: #1d2330; --muted: #5f6b7a; --line: #d8dde5; --band: #f4f6f9;
          --base: #8a94a6; --new: #2f6fd6; --worse: #c0262d; --better: #1e7a46; }
  * { box-sizing: border-box; }
  body { margin: 0; padding: 16px 24px 48px; font: 13px/1.45 system-ui, sans-serif;
         color: var(--ink); background: #fff; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  h2 { font-size: 15px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
       padding-bottom: 4px; }
  .note { color: var(--muted); }
  table { border-collapse: collapse; }
  th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: right;
           white-space: nowrap; }
  th { background: var(--band); }
  td.name, th.name { text-align: left; max-width: 520px; overflow: hidden;
                     text-overflow: ellipsis; }
  td.status { text-align: left; font-weight: 600; }
  .slower, .more_memory, .gone { color: var(--worse); }
  .faster, .less_memory, .new { color: var(--better); }
  svg { display: block; max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
  svg text { fill: var(--muted); }
  svg .axis { stroke: #9aa4b2; }
  svg .base { fill: none; stroke: var(--base); stroke-width: 1.4; stroke-dasharray: 4 2; }
  svg .new { fill: none; stroke: var(--new); stroke-width: 1.4; }
  .legend span { display: inline-block; width: 18px; height: 3px; margin: 0 4px 3px 12px;
                 vertical-align: middle; }
</style>
</head>
<body>
<h1>paddle_prof diff</h1>
<p id="verdict"></p>
<p class="note" id="thresholds"></p>
<h2>Changed rows</h2>
<table id="rows-table"><thead></thead><tbody></tbody></table>
<h2>Peak memory by place</h2>
<table id="places-table"><thead></thead><tbody></tbody></table>
<h2>Memory over time</h2>
<p class="legend note"><span style="background: var(--base)"></span>base
  <span style="background: var(--new)"></span>new</p>
<div id="memory-charts"></div>
<h2>Steps side by side</h2>
<table id="steps-table"><thead></thead><tbody></tbody></table>
<script>
"use strict";
const data = /*DATA*/null;
(function () {
  const element = (tag, attributes, text) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svgElement = (parent, tag, attributes) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    parent.appendChild(e);
    return e;
  };
  const formatMs = ms => (typeof ms === 'number' ? String(Number(ms.toPrecision(6))) : '-');
  function formatBytes(bytes) {
    if (typeof bytes !== 'number') return '-';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = bytes, unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) { value /= 1024; ++unit; }
    return (unit === 0 ? String(value) : value.toFixed(2)) + ' ' + units[unit];
  }
  const change = (b, n, text) => `${b == null ? '-' : text(b)} \u2192 ${n == null ? '-' : text(n)}`;
  // Both sides, and the exact change: 4 bytes more of 3.91 KiB show.
  const changeBytes = (b, n) => change(b, n, formatBytes) +
      (b != null && n != null && n !== b ? ` (${n > b ? '+' : '-'}${Math.abs(n - b)} B)` : '');
  const peak = side => side == null ? null
      : Object.values(side.memory).reduce((a, m) => a + m.peak_bytes, 0);
  const table = (id, headers, rows) => {
    const t = document.getElementById(id);
    const head = element('tr');
    headers.forEach((h, i) => head.appendChild(element('th', i === 0 ? {class: 'name'} : {}, h)));
    t.tHead.appendChild(head);
    for (const cells of rows) {
      const tr = element('tr');
      cells.forEach(c => tr.appendChild(element('td', c.attributes || {}, c.text)));
      t.tBodies[0].appendChild(tr);
    }
  };

  const diff = data.diff;
  document.getElementById('verdict').textContent = diff.regressions.length === 0
      ? (data.changed.length === 0 ? 'No changes.' : 'No regressions.')
      : `${diff.regressions.length} regression${diff.regressions.length === 1 ? '' : 's'}.`;
  const percent = fraction => `${Number((fraction * 100).toPrecision(6))}%`;
  const averaged = diff.rows.filter(r => r.time_by === 'average').length;
  document.getElementById('thresholds').textContent =
      `Thresholds: time ${percent(diff.time_threshold)} (and past the base's spread of ` +
      `calls), memory ${percent(diff.memory_threshold)}.` +
      (averaged ? ` Time judged by the average call for ${averaged} of ${diff.rows.length} ` +
                  'rows: a summary has no call durations (written before them, or edited).'
                : '');
  const average = side => side.total_ms / side.calls;

  table('rows-table', ['Event', 'Status', 'Calls', 'P50 (ms)', 'Total (ms)', 'Peak Mem.'],
        data.changed.map(r => {
          let label = r.name + (r.tag != null ? ` [${r.tag}]` : '');
          if (r.process != null) label = `${r.process}::${label}`;
          if (r.thread != null) label = `thread${r.thread}::${label}`;
          return [{text: label, attributes: {class: 'name', title: label}},
                  {text: r.status.join(', '),
                   attributes: {class: 'status ' + r.status.join(' ')}},
                  {text: change(r.base && r.base.calls, r.new && r.new.calls, String)},
                  {text: r.time_by === 'average'
                       ? 'avg ' + change(average(r.base), average(r.new), formatMs)
                       : change(r.base && r.base.p50_ms, r.new && r.new.p50_ms, formatMs)},
                  {text: change(r.base && r.base.total_ms, r.new && r.new.total_ms, formatMs)},
                  {text: changeBytes(peak(r.base), peak(r.new))}];
        }));
  table('places-table', ['Place', 'Status', 'Peak'],
        diff.places.map(p => [{text: p.place, attributes: {class: 'name'}},
                              {text: p.status, attributes: {class: 'status ' + p.status}},
                              {text: changeBytes(p.base_peak_bytes, p.new_peak_bytes)}]));

  // Each place of either run: both runs' bytes over their window's time, on one scale.
  const charts = document.getElementById('memory-charts');
  const places = [...new Set([...Object.keys(data.base.timeline),
                              ...Object.keys(data.new.timeline)])];
  if (places.length === 0) charts.appendChild(element('p', {class: 'note'}, 'No memory timeline.'));
  for (const place of places) {
    const lines = [['base', data.base.timeline[place]], ['new', data.new.timeline[place]]]
        .filter(([, line]) => line && line.t_ms.length > 0);
    const width = 900, height = 220, left = 70, right = 10, top = 10, bottom = 24;
    const maxT = Math.max(1e-9, ...lines.map(([, l]) => l.t_ms[l.t_ms.length - 1]));
    const maxB = Math.max(1, ...lines.map(([, l]) => Math.max(...l.bytes)));
    const x = t => left + (width - left - right) * t / maxT;
    const y = b => top + (height - top - bottom) * (1 - b / maxB);
    const figure = element('figure', {'data-place': place});
    figure.appendChild(element('figcaption', {}, place));
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svgElement(svg, 'line', {class: 'axis', x1: left, y1: y(0), x2: width - right, y2: y(0)});
    svgElement(svg, 'line', {class: 'axis', x1: left, y1: top, x2: left, y2: y(0)});
    svgElement(svg, 'text', {x: left - 6, y: top + 8, 'text-anchor': 'end'}).textContent = formatBytes(maxB);
    svgElement(svg, 'text', {x: width - right, y: height - 6, 'text-anchor': 'end'}).textContent =
        formatMs(maxT) + ' ms';
    for (const [run, line] of lines) {
      const points = line.t_ms.map((t, i) => `${x(t).toFixed(1)},${y(line.bytes[i]).toFixed(1)}`);
      svgElement(svg, 'polyline', {class: run, 'data-run': run, points: points.join(' ')});
    }
    figure.appendChild(svg);
    charts.appendChild(figure);
  }

  const count = Math.max(data.base.steps.length, data.new.steps.length);
  const rows = [];
  for (let i = 0; i < count; ++i) {
    const b = data.base.steps[i], n = data.new.steps[i];
    const bm = b ? b.wall_ms : null, nm = n ? n.wall_ms : null;
    rows.push([{text: String(i)}, {text: formatMs(bm)}, {text: formatMs(nm)},
               {text: bm != null && nm != null ? formatMs(nm - bm) : '-'}]);
  }
  table('steps-table', ['Step', 'Base (ms)', 'New (ms)', 'Change (ms)'], rows);
})();
</script>
</body>
</html>
"""
