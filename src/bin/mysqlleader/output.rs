//! Output: aligned tables and sentences for people, one JSON object for scripts.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Prints one JSON object on one line.
/// `text` safe to show on a terminal as one line: every control character (C0 with newline and
/// tab, DEL, C1: escape sequences, carriage returns, OSC clipboard writes) written as `\u{..}`,
/// so an id chosen by a caller can neither forge a line (of `status`, `watch`, a sentence) nor
/// command the operator's terminal. Every sentence and table cell goes through it; none holds a
/// line break of its own.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `println!` for text people read: through [`printable`].
#[macro_export]
macro_rules! say {
    () => { println!() };
    ($($arg:tt)*) => { println!("{}", $crate::output::printable(&format!($($arg)*))) };
}

pub fn print_json(value: &serde_json::Value) {
    println!("{}", serde_json::to_string(value).expect("JSON values always serialize"));
}

/// 0 or 1, as the procedures return flags.
pub fn flag(b: bool) -> u8 {
    u8::from(b)
}

/// A table with a header row, columns left-aligned and separated by two spaces.
pub struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&'static str]) -> Table {
        Table { headers: headers.to_vec(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.headers.len());
        self.rows.push(cells.iter().map(|c| printable(c)).collect());
    }

    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: Vec<&str>| -> String {
            let mut out = String::new();
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                out.push_str(cell);
                if i + 1 < cells.len() {
                    out.push_str(&" ".repeat(w - cell.chars().count() + 2));
                }
            }
            out.trim_end().to_string()
        };
        let mut out = line(self.headers.clone());
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row.iter().map(String::as_str).collect()));
            out.push('\n');
        }
        out
    }
}

/// A length of time for people: `850 ms`, `9.8 s`, `3 min 12 s`, `2 h 5 min`, `3 d 4 h`.
pub fn human(d: Duration) -> String {
    let ms = d.as_millis();
    let s = d.as_secs();
    if ms < 1_000 {
        format!("{ms} ms")
    } else if s < 60 {
        format!("{:.1} s", d.as_secs_f64())
    } else if s < 3_600 {
        two_units(s / 60, "min", s % 60, "s")
    } else if s < 86_400 {
        two_units(s / 3_600, "h", (s % 3_600) / 60, "min")
    } else {
        two_units(s / 86_400, "d", (s % 86_400) / 3_600, "h")
    }
}

/// `3 min 12 s`, or `3 min` when the second part is zero.
fn two_units(big: u64, big_unit: &str, small: u64, small_unit: &str) -> String {
    if small == 0 {
        format!("{big} {big_unit}")
    } else {
        format!("{big} {big_unit} {small} {small_unit}")
    }
}

/// `2025-11-22T06:59:01.123456Z` (as the status queries return times) as
/// `2025-11-22 06:59:01.123 UTC`-style text without the zone: `2025-11-22 06:59:01.123`.
pub fn utc_text(db_time: &str) -> String {
    let t = db_time.trim_end_matches('Z').replacen('T', " ", 1);
    match t.find('.') {
        Some(dot) if t.len() > dot + 4 => t[..dot + 4].to_string(),
        _ => t,
    }
}

/// The current time of day in UTC, `06:59:01.123`, for the lines of `watch`. Shown only: no
/// decision is made with the local clock.
pub fn time_of_day_utc() -> String {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() % 86_400;
    format!("{:02}:{:02}:{:02}.{:03}", secs / 3_600, (secs % 3_600) / 60, secs % 60, since.subsec_millis())
}

/// The current time in UTC as RFC 3339 with milliseconds, for `watch --json`.
pub fn now_rfc3339_utc() -> String {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let days = (since.as_secs() / 86_400) as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{}Z", time_of_day_utc())
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_cannot_reach_the_terminal() {
        assert_eq!(printable("web-1\x1b]52;c;aGk=\x07\r\nforged"), "web-1\\u{1b}]52;c;aGk=\\u{7}\\u{d}\\u{a}forged");
        assert_eq!(printable("é 🚀\tok\u{9b}"), "é 🚀\\u{9}ok\\u{9b}");
    }

    #[test]
    fn formats() {
        assert_eq!(human(Duration::from_millis(850)), "850 ms");
        assert_eq!(human(Duration::from_millis(9_849)), "9.8 s");
        assert_eq!(human(Duration::from_secs(192)), "3 min 12 s");
        assert_eq!(human(Duration::from_secs(7_500)), "2 h 5 min");
        assert_eq!(human(Duration::from_secs(60)), "1 min");
        assert_eq!(utc_text("2025-11-22T06:59:01.123456Z"), "2025-11-22 06:59:01.123");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_414), (2025, 11, 22));
        let mut t = Table::new(&["A", "LONGER"]);
        t.row(vec!["xyz".into(), "1".into()]);
        assert_eq!(t.render(), "A    LONGER\nxyz  1\n");
    }
}
