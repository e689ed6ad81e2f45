//! An elector's metrics, in the Prometheus text format (version 0.0.4), with the names
//! client-go's leader election uses where one exists. Atomics only: recording costs nothing
//! measurable on the renew path, and rendering never blocks the elector.
//!
//! | metric | type | meaning |
//! | --- | --- | --- |
//! | `leader_election_master_status{name}` | gauge | 1 while this node leads (by its local deadline when rendered), else 0 |
//! | `mysqlleader_term{name}` | gauge | the term this node saw last (its fencing token while it leads) |
//! | `mysqlleader_leadership_transitions_total{name}` | counter | how often this node started or stopped leading |
//! | `mysqlleader_campaign_errors_total{name}` | counter | campaign calls that failed (error or timeout) |
//! | `mysqlleader_campaign_duration_seconds{name}` | histogram | the duration of each campaign call, answered or not |

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Upper bounds of the campaign duration histogram, in seconds: a LAN database answers in about
/// a millisecond; the default request timeout is 2 s.
pub const DURATION_BUCKETS: [f64; 12] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

/// A cheap handle to one elector's metrics (clones share them).
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    leading: AtomicBool,
    term: AtomicU64,
    transitions: AtomicU64,
    errors: AtomicU64,
    /// Cumulative counts per bucket of DURATION_BUCKETS, then the count of all.
    buckets: [AtomicU64; 12],
    count: AtomicU64,
    /// The sum of durations, in nanoseconds.
    sum_ns: AtomicU64,
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Records one campaign call: how long it took, and whether it failed.
    pub(crate) fn observe_campaign(&self, elapsed: Duration, ok: bool) {
        let seconds = elapsed.as_secs_f64();
        for (bound, bucket) in DURATION_BUCKETS.iter().zip(&self.inner.buckets) {
            if seconds <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.inner.count.fetch_add(1, Ordering::Relaxed);
        self.inner.sum_ns.fetch_add(elapsed.as_nanos().min(u128::from(u64::MAX)) as u64, Ordering::Relaxed);
        if !ok {
            self.inner.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Records what this node knows now: whether it leads, and the term; a change of `leading`
    /// counts as a transition.
    pub(crate) fn observe_leading(&self, leading: bool, term: u64) {
        if self.inner.leading.swap(leading, Ordering::Relaxed) != leading {
            self.inner.transitions.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.term.store(term, Ordering::Relaxed);
    }

    pub fn transitions(&self) -> u64 {
        self.inner.transitions.load(Ordering::Relaxed)
    }

    pub fn campaign_errors(&self) -> u64 {
        self.inner.errors.load(Ordering::Relaxed)
    }

    pub fn campaigns(&self) -> u64 {
        self.inner.count.load(Ordering::Relaxed)
    }

    /// The metrics in the Prometheus text format, labelled `name="<service>"`. `leading_now` is
    /// the gauge's value (pass `Elector::is_leader()`, exact at this moment).
    pub fn render(&self, service: &str, leading_now: bool) -> String {
        render_many(&[(service, self, leading_now)])
    }
}

/// The metrics of many electors (a session's) as one valid exposition: each metric's `HELP` and
/// `TYPE` once, then one sample (or one histogram) per elector, labelled `name="<service>"`, in
/// the order given. Each item is (service, metrics, leading now).
pub fn render_many(electors: &[(&str, &Metrics, bool)]) -> String {
    let named: Vec<(String, &Inner, bool)> = electors.iter().map(|(s, m, l)| (escape_label(s), &*m.inner, *l)).collect();
    let mut out = String::new();
    let mut gauge = |metric: &str, kind: &str, help: &str, value: &dyn Fn(&Inner, bool) -> String| {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} {kind}");
        for (name, i, leading) in &named {
            let _ = writeln!(out, "{metric}{{name=\"{name}\"}} {}", value(i, *leading));
        }
    };
    gauge("leader_election_master_status", "gauge", "1 while this node leads the election, else 0.",
          &|_, leading| if leading { "1".into() } else { "0".into() });
    gauge("mysqlleader_term", "gauge", "The term (fencing token) this node saw last.", &|i, _| i.term.load(Ordering::Relaxed).to_string());
    gauge("mysqlleader_leadership_transitions_total", "counter", "How often this node started or stopped leading.",
          &|i, _| i.transitions.load(Ordering::Relaxed).to_string());
    gauge("mysqlleader_campaign_errors_total", "counter", "Campaign calls that failed (an error or a timeout).",
          &|i, _| i.errors.load(Ordering::Relaxed).to_string());
    let h = "mysqlleader_campaign_duration_seconds";
    let _ = writeln!(out, "# HELP {h} The duration of each campaign call, answered or not.\n# TYPE {h} histogram");
    for (name, i, _) in &named {
        for (bound, bucket) in DURATION_BUCKETS.iter().zip(&i.buckets) {
            let _ = writeln!(out, "{h}_bucket{{name=\"{name}\",le=\"{bound}\"}} {}", bucket.load(Ordering::Relaxed));
        }
        let count = i.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{h}_bucket{{name=\"{name}\",le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{h}_sum{{name=\"{name}\"}} {}", i.sum_ns.load(Ordering::Relaxed) as f64 / 1e9);
        let _ = writeln!(out, "{h}_count{{name=\"{name}\"}} {count}");
    }
    out
}

/// A label value escaped as the exposition format wants: `\\`, `\"` and `\n`.
fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_exposition_format() {
        let m = Metrics::new();
        m.observe_campaign(Duration::from_micros(800), true);
        m.observe_campaign(Duration::from_millis(30), false);
        m.observe_leading(true, 7);
        m.observe_leading(true, 7);
        m.observe_leading(false, 7);
        let text = m.render("bill\"ing\\x", true);
        assert!(text.contains("leader_election_master_status{name=\"bill\\\"ing\\\\x\"} 1\n"), "{text}");
        assert!(text.contains("mysqlleader_term{name=\"bill\\\"ing\\\\x\"} 7\n"));
        assert!(text.contains("mysqlleader_leadership_transitions_total{name=\"bill\\\"ing\\\\x\"} 2\n"));
        assert!(text.contains("mysqlleader_campaign_errors_total{name=\"bill\\\"ing\\\\x\"} 1\n"));
        // Cumulative buckets: 0.8 ms is in le=0.001 and above; 30 ms from le=0.05 on.
        assert!(text.contains("le=\"0.0005\"} 0\n") && text.contains("le=\"0.001\"} 1\n"));
        assert!(text.contains("le=\"0.025\"} 1\n") && text.contains("le=\"0.05\"} 2\n"));
        assert!(text.contains("le=\"+Inf\"} 2\n") && text.contains("_count{name=\"bill\\\"ing\\\\x\"} 2\n"));
        assert!(text.contains("_sum{name=\"bill\\\"ing\\\\x\"} 0.0308\n"), "{text}");
        assert!(text.contains("# TYPE mysqlleader_campaign_duration_seconds histogram"));
    }

    /// Many electors' metrics in one exposition: every HELP and TYPE line once (a scraper
    /// rejects a repeated one), each elector's samples under its own name.
    #[test]
    fn renders_many_electors_as_one_valid_exposition() {
        let (a, b) = (Metrics::new(), Metrics::new());
        a.observe_leading(true, 3);
        b.observe_campaign(Duration::from_millis(2), false);
        let text = render_many(&[("shard-1", &a, true), ("shard-2", &b, false)]);
        for line in text.lines().filter(|l| l.starts_with('#')) {
            assert_eq!(text.lines().filter(|l| *l == line).count(), 1, "repeated: {line}\n{text}");
        }
        assert_eq!(text.lines().filter(|l| l.starts_with("# TYPE")).count(), 5, "{text}");
        assert!(text.contains("leader_election_master_status{name=\"shard-1\"} 1\nleader_election_master_status{name=\"shard-2\"} 0\n"), "{text}");
        assert!(text.contains("mysqlleader_term{name=\"shard-1\"} 3\n"));
        assert!(text.contains("mysqlleader_campaign_errors_total{name=\"shard-2\"} 1\n"));
        assert!(text.contains("mysqlleader_campaign_duration_seconds_count{name=\"shard-2\"} 1\n"));
        assert_eq!(render_many(&[("x", &a, true)]), a.render("x", true));
    }
}
