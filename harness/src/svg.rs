//! The timeline picture of a run, as hand-written SVG: one lane per (service, candidate), a bar
//! for each leadership interval (labelled with its term), grey where a candidate logged nothing
//! (killed or stopped), faults as shaded bands with their number and kind, and any overlap the
//! checker counts as a violation outlined in red. Long runs are cut into panels of one minute.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::checker::{Inputs, Report};

const PALETTE: [&str; 8] = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f"];
const LEFT: f64 = 120.0;
const PX_PER_S: f64 = 20.0;
const LANE: f64 = 13.0;
const FAULT_ROWS: usize = 3;

fn esc(s: &str) -> String { s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;") }

/// Stretches in which a candidate wrote nothing for longer than `silence_ns` (killed, stopped).
fn silences(lines: &[Value], silence_ns: i64, t_end: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut last: Option<i64> = None;
    for v in lines {
        let t = v.get("t").and_then(Value::as_i64).unwrap_or(0);
        if let Some(l) = last {
            if t - l > silence_ns {
                out.push((l, t));
            }
        }
        last = Some(t);
    }
    if let Some(l) = last {
        if t_end - l > silence_ns {
            out.push((l, t_end));
        }
    }
    out
}

pub fn timeline(inp: &Inputs, r: &Report) -> String {
    let p = &inp.params;
    let t0 = p.t_start;
    let total_s = ((p.t_end - t0) as f64 / 1e9).max(1.0);
    let panel_s = total_s.min(60.0);
    let panels = (total_s / panel_s).ceil() as usize;
    let width = LEFT + panel_s * PX_PER_S + 20.0;
    let nodes: Vec<String> = if p.nodes.is_empty() { inp.logs.keys().cloned().collect() } else { p.nodes.clone() };
    let color: BTreeMap<&str, &str> = nodes.iter().enumerate().map(|(i, n)| (n.as_str(), PALETTE[i % PALETTE.len()])).collect();
    let lanes = p.services.len() * nodes.len();
    let fault_h = FAULT_ROWS as f64 * 11.0 + 4.0;
    let svc_gap = 6.0;
    let panel_h = 18.0 + fault_h + lanes as f64 * LANE + p.services.len() as f64 * svc_gap + 22.0;
    let legend_h = 40.0;
    let height = legend_h + panels as f64 * panel_h + 10.0;
    let silence: BTreeMap<&str, Vec<(i64, i64)>> =
        inp.logs.iter().map(|(n, l)| (n.as_str(), silences(l, 600_000_000, p.t_end))).collect();

    let mut o = String::new();
    let _ = writeln!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="10">"#);
    let _ = writeln!(o, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let verdict = if r.passed() { "PASS" } else { "FAIL" };
    let _ = writeln!(o, r#"<text x="8" y="16" font-size="13" font-weight="bold">{} — seed {} — {} faults — overlaps {} — stale commits {} — {verdict}</text>"#,
        esc(if p.title.is_empty() { "fault run" } else { &p.title }), p.seed, inp.faults.len(), r.real_overlaps(), r.stale_commits);
    let mut x = 8.0;
    for n in &nodes {
        let _ = writeln!(o, r#"<rect x="{x}" y="24" width="12" height="10" fill="{}"/><text x="{}" y="33">{}</text>"#, color[n.as_str()], x + 15.0, esc(n));
        x += 60.0;
    }
    let _ = writeln!(o, r##"<rect x="{x}" y="24" width="12" height="10" fill="#d0d0d0"/><text x="{}" y="33">silent (killed/stopped)</text>"##, x + 15.0);
    x += 140.0;
    let _ = writeln!(o, r##"<rect x="{x}" y="24" width="12" height="10" fill="#e15759" fill-opacity="0.25"/><text x="{}" y="33">fault (injection to heal)</text>"##, x + 15.0);

    for panel in 0..panels {
        let p0 = t0 + (panel as f64 * panel_s * 1e9) as i64;
        let p1 = p0 + (panel_s * 1e9) as i64;
        let y0 = legend_h + panel as f64 * panel_h;
        let xs = |t: i64| LEFT + ((t.clamp(p0, p1) - p0) as f64 / 1e9) * PX_PER_S;
        let lanes_top = y0 + 18.0 + fault_h;
        let lanes_bottom = lanes_top + lanes as f64 * LANE + p.services.len() as f64 * svc_gap;
        // Time axis.
        let step = 5.0;
        let mut s = (panel as f64 * panel_s / step).ceil() * step;
        while s <= (panel as f64 + 1.0) * panel_s + 1e-9 && s <= total_s {
            let xx = LEFT + (s - panel as f64 * panel_s) * PX_PER_S;
            let _ = writeln!(o, r##"<line x1="{xx:.1}" y1="{:.1}" x2="{xx:.1}" y2="{:.1}" stroke="#eeeeee"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle" fill="#555">{s:.0}s</text>"##,
                y0 + 18.0, lanes_bottom, lanes_bottom + 12.0);
            s += step;
        }
        // Faults.
        for f in &inp.faults {
            let a = f.t0;
            let b = f.t1.unwrap_or(f.t0).max(f.t0);
            if b < p0 || a > p1 {
                continue;
            }
            let (xa, xb) = (xs(a), xs(b).max(xs(a) + 1.5));
            let _ = writeln!(o, r##"<rect x="{xa:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#e15759" fill-opacity="0.18"><title>#{} {} {} {}</title></rect>"##,
                y0 + 18.0, xb - xa, lanes_bottom - y0 - 18.0, f.id, esc(&f.kind), esc(&f.target), esc(&f.detail));
            if a >= p0 {
                let row = (f.id as usize) % FAULT_ROWS;
                let _ = writeln!(o, r##"<text x="{xa:.1}" y="{:.1}" font-size="8" fill="#a02020">#{} {} {}</text>"##,
                    y0 + 27.0 + row as f64 * 11.0, f.id, esc(&f.kind), esc(&f.target));
            }
        }
        // Lanes.
        let mut y = lanes_top;
        for svc in &p.services {
            let _ = writeln!(o, r##"<text x="4" y="{:.1}" font-weight="bold">{}</text>"##, y + 9.0, esc(svc));
            for n in &nodes {
                let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#333">{}</text><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#f0f0f0"/>"##,
                    LEFT - 4.0, y + 9.5, esc(n), y + LANE, width - 20.0, y + LANE);
                for &(a, b) in silence.get(n.as_str()).map(Vec::as_slice).unwrap_or(&[]) {
                    if b < p0 || a > p1 {
                        continue;
                    }
                    let _ = writeln!(o, r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#d0d0d0"/>"##, xs(a), y + 5.0, (xs(b) - xs(a)).max(0.5), 3.0);
                }
                for iv in r.intervals.iter().filter(|iv| &iv.svc == svc && &iv.node == n) {
                    if iv.end < p0 || iv.start > p1 {
                        continue;
                    }
                    let (xa, xb) = (xs(iv.start), xs(iv.end));
                    let _ = writeln!(o, r##"<rect x="{xa:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}"><title>{} {} term {} {:.3}s..{:.3}s ({})</title></rect>"##,
                        y + 1.5, (xb - xa).max(0.6), LANE - 3.0, color.get(n.as_str()).unwrap_or(&"#888"), esc(svc), esc(n), iv.term,
                        (iv.start - t0) as f64 / 1e9, (iv.end - t0) as f64 / 1e9, esc(&iv.end_how));
                    if xb - xa > 16.0 {
                        let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" font-size="8" fill="#fff">{}</text>"##, xa + 2.0, y + 9.5, iv.term);
                    }
                }
                y += LANE;
            }
            y += svc_gap;
        }
        // Overlaps that count as violations.
        for ov in r.overlaps.iter().filter(|o| o.excused.is_none()) {
            let (a, b) = (ov.b.start, ov.a.end.min(ov.b.end));
            if b < p0 || a > p1 {
                continue;
            }
            let _ = writeln!(o, r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#d00000" stroke-width="2"><title>overlap {} {} term {} / {} term {}</title></rect>"##,
                xs(a) - 1.0, lanes_top, (xs(b) - xs(a)).max(1.0) + 2.0, lanes_bottom - lanes_top, esc(&ov.a.svc), esc(&ov.a.node), ov.a.term, esc(&ov.b.node), ov.b.term);
        }
    }
    o.push_str("</svg>\n");
    o
}
