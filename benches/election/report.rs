//! The printed tables (Markdown, so that a run pastes into docs/benchmarks.md as it is) and the
//! list of targets.

use serde_json::{json, Value};

pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(title: &str, headers: &[&str]) -> Table {
        Table { title: title.into(), headers: headers.iter().map(|s| s.to_string()).collect(), rows: vec![], notes: vec![] }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }

    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for (i, width) in w.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = width - c.chars().count();
                s.push(' ');
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
                s.push_str(" |");
            }
            s
        };
        let mut out = format!("### {}\n\n", self.title);
        out.push_str(&line(&self.headers));
        out.push('\n');
        out.push('|');
        for width in &w {
            out.push_str(&"-".repeat(width + 2));
            out.push('|');
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        for note in &self.notes {
            out.push_str(&format!("\n{note}\n"));
        }
        out
    }
}

pub fn fmt_rate(r: f64) -> String {
    if r.is_nan() {
        "-".into()
    } else if r >= 100.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

pub fn fmt_ms(ms: f64) -> String {
    if ms.is_nan() {
        "-".into()
    } else if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

/// One target of issue 9, with the value measured in this run.
pub struct Target {
    pub name: String,
    pub goal: String,
    pub measured: String,
    /// None: not measured in this run.
    pub met: Option<bool>,
}

pub fn targets_table(targets: &[Target]) -> Table {
    let mut t = Table::new("Targets", &["target", "goal", "measured", "met"]);
    for x in targets {
        t.row(vec![
            x.name.clone(),
            x.goal.clone(),
            x.measured.clone(),
            match x.met {
                Some(true) => "yes".into(),
                Some(false) => "**no**".into(),
                None => "not measured".into(),
            },
        ]);
    }
    t
}

pub fn targets_json(targets: &[Target]) -> Value {
    Value::Array(
        targets
            .iter()
            .map(|x| json!({"target": x.name, "goal": x.goal, "measured": x.measured, "met": x.met}))
            .collect(),
    )
}

pub fn table_json(t: &Table) -> Value {
    json!({"title": t.title, "headers": t.headers, "rows": t.rows, "notes": t.notes})
}
