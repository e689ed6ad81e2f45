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
//!
//! A session's exposition (`Session::metrics_text`) is compact: per service only the first two
//! (`leader_election_master_status{name}` and `mysqlleader_term{name}`, about 75 bytes plus twice
//! the service id's length: 10,000 services of 10-byte ids stay under 1 MB), after the session's
//! own series, labelled `node="<node id>"`; `Session::metrics_text_detailed` has every series of
//! every elector too (about 1.5 KB a service; in a session an elector's campaign duration
//! includes the wait for its batch, up to a batch window). The session's series:
//!
//! | metric | type | meaning |
//! | --- | --- | --- |
//! | `mysqlleader_session_seats{node,state}` | gauge | the session's running electors now: `state="leading"` (by its local deadline), `"following"` (its last call succeeded and its answer named another leader) or `"vacant"` (neither: a vacant seat, failing calls, or no answer yet) |
//! | `mysqlleader_session_renew_batches_total{node}` | counter | renew calls sent (`renew_lease`: one row written for up to 10,000 seats; `renew_seats` without node leases: up to 500), answered or not |
//! | `mysqlleader_session_renew_batch_failures_total{node}` | counter | renew calls that failed |
//! | `mysqlleader_session_renewed_seats_total{node}` | counter | the seats those calls carried (÷ `renew_batches_total`: the mean batch size) |
//! | `mysqlleader_session_take_batches_total{node}` | counter | takeover calls sent (`take_seats`, or `campaign_seats` without node leases: takeovers of many seats) |
//! | `mysqlleader_session_take_batch_failures_total{node}` | counter | takeover calls that failed |
//! | `mysqlleader_session_taken_seats_total{node}` | counter | the seats those calls took |
//! | `mysqlleader_session_resign_batches_total{node}` | counter | `resign_seats` calls sent (a shutdown's resigns) |
//! | `mysqlleader_session_single_campaigns_total{node}` | counter | `campaign` calls sent one by one (seats no batch settled) |
//! | `mysqlleader_session_renew_batch_duration_seconds{node}` | histogram | the round trip of each renew call (`renew_lease`, or `renew_seats` without node leases), answered or not, as the session measured it |
//! | `mysqlleader_session_renew_server_duration_seconds{node}` | histogram | the time each `renew_lease` took on the server, from its start to its answer, by the server's clock (its answer tells): the round trip less the network and the client |

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
    durations: Histogram,
}

/// A duration histogram over [`DURATION_BUCKETS`], of atomics: observing costs a few relaxed
/// additions, rendering never blocks.
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    /// Cumulative counts per bucket of DURATION_BUCKETS.
    buckets: [AtomicU64; 12],
    /// The count of all (the `+Inf` bucket).
    count: AtomicU64,
    /// The sum of durations, in nanoseconds.
    sum_ns: AtomicU64,
}

impl Histogram {
    pub(crate) fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bound, bucket) in DURATION_BUCKETS.iter().zip(&self.buckets) {
            if seconds <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(elapsed.as_nanos().min(u128::from(u64::MAX)) as u64, Ordering::Relaxed);
    }

    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The histogram's samples: `{metric}_bucket{{labels,le=...}}` per bound and `+Inf`, then
    /// `_sum` and `_count`; `labels` is `key="value"` pairs, escaped already.
    fn render(&self, out: &mut String, metric: &str, labels: &str) {
        for (bound, bucket) in DURATION_BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(out, "{metric}_bucket{{{labels},le=\"{bound}\"}} {}", bucket.load(Ordering::Relaxed));
        }
        let count = self.count();
        let _ = writeln!(out, "{metric}_bucket{{{labels},le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{metric}_sum{{{labels}}} {}", self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9);
        let _ = writeln!(out, "{metric}_count{{{labels}}} {count}");
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Records one campaign call: how long it took, and whether it failed.
    pub(crate) fn observe_campaign(&self, elapsed: Duration, ok: bool) {
        self.inner.durations.observe(elapsed);
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
        self.inner.durations.count()
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
    let mut out = String::new();
    render_electors(&mut out, electors, true);
    out
}

/// `electors` as [`render_many`] renders them into `out`; without `detailed`, only the two
/// gauges (`leader_election_master_status` and `mysqlleader_term`): a session's compact form.
pub(crate) fn render_electors(out: &mut String, electors: &[(&str, &Metrics, bool)], detailed: bool) {
    let named: Vec<(String, &Inner, bool)> = electors.iter().map(|(s, m, l)| (escape_label(s), &*m.inner, *l)).collect();
    let mut gauge = |metric: &str, kind: &str, help: &str, value: &dyn Fn(&Inner, bool) -> String| {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} {kind}");
        for (name, i, leading) in &named {
            let _ = writeln!(out, "{metric}{{name=\"{name}\"}} {}", value(i, *leading));
        }
    };
    gauge("leader_election_master_status", "gauge", "1 while this node leads the election, else 0.",
          &|_, leading| if leading { "1".into() } else { "0".into() });
    gauge("mysqlleader_term", "gauge", "The term (fencing token) this node saw last.", &|i, _| i.term.load(Ordering::Relaxed).to_string());
    if !detailed {
        return;
    }
    gauge("mysqlleader_leadership_transitions_total", "counter", "How often this node started or stopped leading.",
          &|i, _| i.transitions.load(Ordering::Relaxed).to_string());
    gauge("mysqlleader_campaign_errors_total", "counter", "Campaign calls that failed (an error or a timeout).",
          &|i, _| i.errors.load(Ordering::Relaxed).to_string());
    let h = "mysqlleader_campaign_duration_seconds";
    let _ = writeln!(out, "# HELP {h} The duration of each campaign call, answered or not.\n# TYPE {h} histogram");
    for (name, i, _) in &named {
        i.durations.render(out, h, &format!("name=\"{name}\""));
    }
}

/// What a session counts, for [`render_session`].
pub(crate) struct SessionSeries<'a> {
    pub(crate) node: &'a str,
    /// The session's running electors now: leading, following a leader with a valid lease, and
    /// the others (vacant seat, or no valid answer yet).
    pub(crate) seats: [u64; 3],
    pub(crate) stats: &'a crate::session::SessionStats,
    pub(crate) renew_durations: &'a Histogram,
    /// The time each `renew_lease` took on the server, as its answer told.
    pub(crate) renew_server_durations: &'a Histogram,
}

/// The session-level series, labelled `node="<node id>"`: see the module documentation.
pub(crate) fn render_session(out: &mut String, s: &SessionSeries<'_>) {
    let node = format!("node=\"{}\"", escape_label(s.node));
    let m = "mysqlleader_session_seats";
    let _ = writeln!(out, "# HELP {m} The session's running electors now, by state: leading, following a leader with a valid \
                           lease, or vacant (neither: the seat is vacant, or no valid answer yet).\n# TYPE {m} gauge");
    for (state, n) in ["leading", "following", "vacant"].iter().zip(s.seats) {
        let _ = writeln!(out, "mysqlleader_session_seats{{{node},state=\"{state}\"}} {n}");
    }
    let st = s.stats;
    let counters: [(&str, &str, u64); 8] = [
        ("renew_batches_total", "Renew calls sent (renew_lease, or renew_seats without node leases: one renew for a batch of seats), answered or not.", st.batch_calls),
        ("renew_batch_failures_total", "Renew calls (renew_lease, renew_seats) that failed.", st.batch_failures),
        ("renewed_seats_total", "The seats the renew calls carried, in all (divide by renew_batches_total for the mean batch size).", st.batched_seats),
        ("take_batches_total", "Takeover calls sent (take_seats, or campaign_seats without node leases: one takeover for many seats), answered or not.", st.take_calls),
        ("take_batch_failures_total", "Takeover calls (take_seats, campaign_seats) that failed (their seats campaign one by one).", st.take_failures),
        ("taken_seats_total", "The seats the takeover calls took, in all.", st.taken_seats),
        ("resign_batches_total", "resign_seats calls sent (a shutdown's resigns, batched).", st.resign_batches),
        ("single_campaigns_total", "campaign calls sent one by one (seats the batches did not settle).", st.single_campaigns),
    ];
    for (metric, help, value) in counters {
        let _ = writeln!(out, "# HELP mysqlleader_session_{metric} {help}\n# TYPE mysqlleader_session_{metric} counter");
        let _ = writeln!(out, "mysqlleader_session_{metric}{{{node}}} {value}");
    }
    let h = "mysqlleader_session_renew_batch_duration_seconds";
    let _ = writeln!(out, "# HELP {h} The round trip of each renew call (renew_lease, renew_seats), answered or not.\n# TYPE {h} histogram");
    s.renew_durations.render(out, h, &node);
    let h = "mysqlleader_session_renew_server_duration_seconds";
    let _ = writeln!(out, "# HELP {h} The time each renew_lease took on the server, by the server's clock, as its answer told.\n# TYPE {h} histogram");
    s.renew_server_durations.render(out, h, &node);
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

    /// A session's compact exposition: its series once, then only the two gauges per elector.
    #[test]
    fn renders_a_sessions_series_and_compact_electors() {
        let (a, b) = (Metrics::new(), Metrics::new());
        a.observe_leading(true, 3);
        b.observe_campaign(Duration::from_millis(2), false);
        let stats = crate::session::SessionStats { batch_calls: 2, batched_seats: 7, batch_failures: 1, take_calls: 1,
                                                   taken_seats: 5, ..Default::default() };
        let h = Histogram::default();
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_millis(30));
        let on_server = Histogram::default();
        on_server.observe(Duration::from_micros(1_500));
        let mut text = String::new();
        render_session(&mut text, &SessionSeries { node: "web\"3", seats: [1, 1, 0], stats: &stats, renew_durations: &h,
                                                   renew_server_durations: &on_server });
        render_electors(&mut text, &[("shard-1", &a, true), ("shard-2", &b, false)], false);
        for line in text.lines().filter(|l| l.starts_with('#')) {
            assert_eq!(text.lines().filter(|l| *l == line).count(), 1, "repeated: {line}\n{text}");
        }
        assert_eq!(text.lines().filter(|l| l.starts_with("# TYPE")).count(), 1 + 8 + 2 + 2, "{text}");
        assert!(text.contains("mysqlleader_session_seats{node=\"web\\\"3\",state=\"leading\"} 1\n"), "{text}");
        assert!(text.contains("mysqlleader_session_seats{node=\"web\\\"3\",state=\"vacant\"} 0\n"));
        assert!(text.contains("mysqlleader_session_renew_batches_total{node=\"web\\\"3\"} 2\n"));
        assert!(text.contains("mysqlleader_session_renewed_seats_total{node=\"web\\\"3\"} 7\n"));
        assert!(text.contains("mysqlleader_session_taken_seats_total{node=\"web\\\"3\"} 5\n"));
        assert!(text.contains("mysqlleader_session_renew_batch_duration_seconds_bucket{node=\"web\\\"3\",le=\"0.005\"} 1\n"), "{text}");
        assert!(text.contains("mysqlleader_session_renew_batch_duration_seconds_count{node=\"web\\\"3\"} 2\n"));
        assert!(text.contains("mysqlleader_session_renew_batch_duration_seconds_sum{node=\"web\\\"3\"} 0.033\n"), "{text}");
        assert!(text.contains("mysqlleader_session_renew_server_duration_seconds_bucket{node=\"web\\\"3\",le=\"0.002\"} 1\n"), "{text}");
        assert!(text.contains("mysqlleader_session_renew_server_duration_seconds_count{node=\"web\\\"3\"} 1\n"), "{text}");
        assert!(text.contains("leader_election_master_status{name=\"shard-1\"} 1\nleader_election_master_status{name=\"shard-2\"} 0\n"));
        assert!(text.contains("mysqlleader_term{name=\"shard-1\"} 3\n"));
        assert!(!text.contains("mysqlleader_campaign"), "{text}");
        // The detailed form: the electors as render_many renders them.
        let mut detailed = String::new();
        render_electors(&mut detailed, &[("shard-1", &a, true), ("shard-2", &b, false)], true);
        assert_eq!(detailed, render_many(&[("shard-1", &a, true), ("shard-2", &b, false)]));
    }
}
