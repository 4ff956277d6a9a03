//! Prometheus metrics for a server: requests by capability and outcome, a latency histogram,
//! requests in flight and waiting, the governed workers and memory reserved against their
//! server-wide limits, and pool kills. Lock-free counters; rendered on `GET /metrics`.
//!
//! Why hand-rolled: the text exposition format is tiny and a metrics crate would add a
//! dependency (and a global registry) to every generated project for five series.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Histogram bucket upper bounds, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

const OUTCOMES: [&str; 8] = [
    "success",
    "invalid_input",
    "timeout",
    "resource_limit",
    "busy",
    "over_capacity",
    "unknown",
    "failed",
];

#[derive(Debug, Default)]
struct Series {
    outcomes: [AtomicU64; 8],
    buckets: [AtomicU64; 12],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

/// All series of one server.
#[derive(Debug)]
pub struct Metrics {
    per_capability: BTreeMap<String, Series>,
    pub in_flight: AtomicI64,
    /// Calls waiting in a gate's queue.
    pub queued: AtomicI64,
    /// Governed workers running, and the sum of their memory limits (bytes).
    pub governed_workers: AtomicI64,
    pub governed_memory: AtomicI64,
    /// The server-wide governed limits (workers, memory bytes); None in direct mode.
    governed_limits: Option<(usize, u64)>,
    /// HTTP responses by status code (REST), counted by the transport.
    http: [AtomicU64; 9],
}

const HTTP_CODES: [u16; 9] = [200, 400, 408, 413, 422, 429, 500, 503, 504];

impl Metrics {
    pub fn new(capabilities: Vec<String>) -> Self {
        Metrics {
            per_capability: capabilities
                .into_iter()
                .map(|c| (c, Series::default()))
                .collect(),
            in_flight: AtomicI64::new(0),
            queued: AtomicI64::new(0),
            governed_workers: AtomicI64::new(0),
            governed_memory: AtomicI64::new(0),
            governed_limits: None,
            http: Default::default(),
        }
    }

    /// Show the governed gauges against these server-wide limits.
    pub fn with_governed_limits(mut self, workers: usize, memory_bytes: u64) -> Self {
        self.governed_limits = Some((workers, memory_bytes));
        self
    }

    /// Record one finished call.
    pub fn observe(&self, capability: &str, outcome: &str, elapsed: Duration) {
        let Some(series) = self.per_capability.get(capability) else {
            return;
        };
        if let Some(i) = OUTCOMES.iter().position(|o| *o == outcome)
            && let Some(c) = series.outcomes.get(i)
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
        // One non-cumulative bucket per call (the +Inf overflow is `count`); cumulated when
        // rendered.
        let secs = elapsed.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|bound| secs <= *bound)
            && let Some(bucket) = series.buckets.get(i)
        {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        series.count.fetch_add(1, Ordering::Relaxed);
        series.sum_micros.fetch_add(
            u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Count one HTTP response code (codes outside the table are not counted).
    pub fn http_status(&self, code: u16) {
        if let Some(i) = HTTP_CODES.iter().position(|c| *c == code)
            && let Some(c) = self.http.get(i)
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The Prometheus text exposition (version 0.0.4).
    pub fn render(&self, kills: u64) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP apizr_requests_total Calls by capability and outcome.\n# TYPE apizr_requests_total counter"
        );
        for (name, s) in &self.per_capability {
            for (outcome, c) in OUTCOMES.iter().zip(s.outcomes.iter()) {
                let _ = writeln!(
                    out,
                    "apizr_requests_total{{capability=\"{}\",outcome=\"{outcome}\"}} {}",
                    escape(name),
                    c.load(Ordering::Relaxed)
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP apizr_request_duration_seconds Call latency.\n# TYPE apizr_request_duration_seconds histogram"
        );
        for (name, s) in &self.per_capability {
            let label = escape(name);
            let mut cumulative = 0;
            for (bound, b) in BUCKETS.iter().zip(s.buckets.iter()) {
                cumulative += b.load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "apizr_request_duration_seconds_bucket{{capability=\"{label}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let count = s.count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "apizr_request_duration_seconds_bucket{{capability=\"{label}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "apizr_request_duration_seconds_sum{{capability=\"{label}\"}} {}",
                s.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
            );
            let _ = writeln!(
                out,
                "apizr_request_duration_seconds_count{{capability=\"{label}\"}} {count}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP apizr_in_flight Calls in progress.\n# TYPE apizr_in_flight gauge\napizr_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP apizr_queued Calls waiting for a running slot.\n# TYPE apizr_queued gauge\napizr_queued {}",
            self.queued.load(Ordering::Relaxed)
        );
        if let Some((workers, memory)) = self.governed_limits {
            let _ = writeln!(
                out,
                "# HELP apizr_governed_workers Governed workers running.\n# TYPE apizr_governed_workers gauge\napizr_governed_workers {}",
                self.governed_workers.load(Ordering::Relaxed)
            );
            let _ = writeln!(
                out,
                "# HELP apizr_governed_workers_limit Server-wide cap on governed workers.\n# TYPE apizr_governed_workers_limit gauge\napizr_governed_workers_limit {workers}"
            );
            let _ = writeln!(
                out,
                "# HELP apizr_governed_memory_bytes Sum of the running governed workers' memory limits.\n# TYPE apizr_governed_memory_bytes gauge\napizr_governed_memory_bytes {}",
                self.governed_memory.load(Ordering::Relaxed)
            );
            let _ = writeln!(
                out,
                "# HELP apizr_governed_memory_limit_bytes Server-wide cap on that sum.\n# TYPE apizr_governed_memory_limit_bytes gauge\napizr_governed_memory_limit_bytes {memory}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP apizr_http_responses_total HTTP responses by status code.\n# TYPE apizr_http_responses_total counter"
        );
        for (code, c) in HTTP_CODES.iter().zip(self.http.iter()) {
            let _ = writeln!(
                out,
                "apizr_http_responses_total{{code=\"{code}\"}} {}",
                c.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP apizr_worker_kills_total Workers killed (timeout, disconnect, protocol error).\n# TYPE apizr_worker_kills_total counter\napizr_worker_kills_total {kills}"
        );
        out
    }
}

/// The container pools of several v2 sources as one: sizes and counters summed, the last
/// failure of the first that has one (`None`: no pool). One series per name in `/metrics`.
pub fn sum_pools(pools: &[crate::oci::PoolStats]) -> Option<crate::oci::PoolStats> {
    let (first, rest) = pools.split_first()?;
    let mut total = first.clone();
    for p in rest {
        // Destructured: a new field must be summed here too (or the compiler says so).
        let crate::oci::PoolStats {
            size,
            ready,
            creating,
            hits,
            misses,
            refills,
            discarded,
            refill_failures,
            cleanup_failures,
            anomalies,
            reaped,
            last_failure,
        } = p;
        total.size += size;
        total.ready += ready;
        total.creating += creating;
        total.hits += hits;
        total.misses += misses;
        total.refills += refills;
        total.discarded += discarded;
        total.refill_failures += refill_failures;
        total.cleanup_failures += cleanup_failures;
        total.anomalies += anomalies;
        total.reaped += reaped;
        if total.last_failure.is_none() {
            total.last_failure.clone_from(last_failure);
        }
    }
    Some(total)
}

/// The container pool's series (v2 servers with a pool).
pub fn render_oci_pool(out: &mut String, stats: &crate::oci::PoolStats) {
    let gauges = [
        (
            "size",
            "Prepared containers the pool keeps ready.",
            stats.size as u64,
        ),
        (
            "ready",
            "Prepared containers waiting for a call.",
            stats.ready as u64,
        ),
        (
            "creating",
            "Containers being prepared.",
            stats.creating as u64,
        ),
    ];
    family(out, "oci_pool", &gauges, false);
    let counters = [
        (
            "hits",
            "Calls answered by a prepared container.",
            stats.hits,
        ),
        (
            "misses",
            "Calls that found no prepared container ready (fresh container).",
            stats.misses,
        ),
        (
            "refills",
            "Containers prepared and added to the pool.",
            stats.refills,
        ),
        (
            "discarded",
            "Prepared containers removed unused (expired, drained, shutdown).",
            stats.discarded,
        ),
        (
            "refill_failures",
            "Containers that could not be prepared.",
            stats.refill_failures,
        ),
        (
            "cleanup_failures",
            "Containers whose removal could not be confirmed.",
            stats.cleanup_failures,
        ),
        (
            "anomalies",
            "Pooled calls whose container exited other than 0 or wrote more after its answer.",
            stats.anomalies,
        ),
        (
            "reaped",
            "Leftovers of dead owners removed by the pool's periodic sweep.",
            stats.reaped,
        ),
    ];
    family(out, "oci_pool", &counters, true);
}

/// The pre-started v1 workers' series (v1 servers with a pool).
pub fn render_v1_pool(out: &mut String, stats: &crate::local::prestart::PrestartStats) {
    let gauges = [
        (
            "size",
            "Pre-started workers the pool keeps ready per served module (policy and source).",
            stats.size as u64,
        ),
        (
            "keys",
            "Served modules (policy and source) with pre-started workers.",
            stats.keys as u64,
        ),
        (
            "ready",
            "Pre-started workers waiting for a call.",
            stats.ready as u64,
        ),
        ("starting", "Workers being started.", stats.starting as u64),
    ];
    family(out, "v1_pool", &gauges, false);
    let counters = [
        ("hits", "Calls served by a pre-started worker.", stats.hits),
        (
            "misses",
            "Calls that found no usable pre-started worker (cold start).",
            stats.misses,
        ),
        (
            "refills",
            "Workers pre-started and added to the pool.",
            stats.refills,
        ),
        (
            "discarded",
            "Pre-started workers removed unused (idle too long, exited, host facts changed, shutdown).",
            stats.discarded,
        ),
        (
            "refill_failures",
            "Workers that could not be pre-started.",
            stats.refill_failures,
        ),
        (
            "cleanup_failures",
            "Discarded workers whose directory or cgroups could not be removed.",
            stats.cleanup_failures,
        ),
        (
            "anomalies",
            "Pre-started workers found exited before their call.",
            stats.anomalies,
        ),
        (
            "preimported",
            "Calls served by a pre-started worker that had imported the module ahead.",
            stats.preimported,
        ),
        (
            "import_failures",
            "Imports ahead of a call that failed or timed out (pre-import stops for that module).",
            stats.import_failures,
        ),
    ];
    family(out, "v1_pool", &counters, true);
}

/// `apizr serve interpreter --http`'s pre-started `local` processes (one-shot runs).
pub fn render_interpreter_pool(out: &mut String, stats: &crate::local::prestart::PrestartStats) {
    let gauges = [
        (
            "size",
            "Pre-started processes the pool keeps ready per policy.",
            stats.size as u64,
        ),
        (
            "ready",
            "Pre-started processes waiting for a run.",
            stats.ready as u64,
        ),
        (
            "starting",
            "Processes being started.",
            stats.starting as u64,
        ),
    ];
    family(out, "interpreter_pool", &gauges, false);
    let counters = [
        (
            "hits",
            "One-shot runs served by a pre-started process.",
            stats.hits,
        ),
        (
            "misses",
            "One-shot runs that found no usable pre-started process (cold start).",
            stats.misses,
        ),
        (
            "refills",
            "Processes pre-started and added to the pool.",
            stats.refills,
        ),
        (
            "discarded",
            "Pre-started processes removed unused (idle too long, exited, host facts changed, shutdown).",
            stats.discarded,
        ),
        (
            "refill_failures",
            "Processes that could not be pre-started.",
            stats.refill_failures,
        ),
        (
            "anomalies",
            "Pre-started processes found exited before their run.",
            stats.anomalies,
        ),
    ];
    family(out, "interpreter_pool", &counters, true);
}

/// The series of v1 calls answered on their response frame, whose process's exit and
/// clean-up followed the answer (`local::after`).
pub fn render_v1_after_answer(out: &mut String, stats: &crate::local::after::AfterAnswerStats) {
    let gauges = [(
        "pending",
        "Calls answered on their frame whose process is still being awaited.",
        stats.pending,
    )];
    family(out, "v1_after_answer", &gauges, false);
    let counters = [
        (
            "calls",
            "Calls answered on their response frame, before their process had exited.",
            stats.answered_on_frame,
        ),
        (
            "anomalies",
            "Of those, processes that then had to be killed, ended non-zero or wrote after their frame (the answer stood).",
            stats.anomalies,
        ),
        (
            "cleanup_failures",
            "Of those, calls whose directory or cgroups could not be removed after the answer.",
            stats.cleanup_failures,
        ),
    ];
    family(out, "v1_after_answer", &counters, true);
}

/// One pool's series `apizr_<prefix>_<name>` (gauges) or `apizr_<prefix>_<name>_total`
/// (counters), each with its help line.
fn family(out: &mut String, prefix: &str, series: &[(&str, &str, u64)], counters: bool) {
    let (kind, suffix) = if counters {
        ("counter", "_total")
    } else {
        ("gauge", "")
    };
    for (name, help, value) in series {
        let full = format!("apizr_{prefix}_{name}{suffix}");
        let _ = writeln!(
            out,
            "# HELP {full} {help}\n# TYPE {full} {kind}\n{full} {value}"
        );
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn several_pools_are_one_series_each() {
        let pool = |hits, size| crate::oci::PoolStats {
            hits,
            size,
            ..Default::default()
        };
        assert_eq!(super::sum_pools(&[]), None);
        let total = super::sum_pools(&[pool(3, 2), pool(4, 2)]).unwrap_or_default();
        let mut text = String::new();
        super::render_oci_pool(&mut text, &total);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.starts_with("apizr_oci_pool_hits") || l.starts_with("apizr_oci_pool_size")
            })
            .collect();
        assert_eq!(
            lines,
            ["apizr_oci_pool_size 4", "apizr_oci_pool_hits_total 7"]
        );
    }

    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_outcomes_counted() {
        let m = Metrics::new(vec!["f".into()]);
        m.observe("f", "success", Duration::from_micros(500));
        m.observe("f", "success", Duration::from_millis(20));
        m.observe("f", "timeout", Duration::from_secs(30));
        m.observe("unknown-capability", "success", Duration::ZERO);
        m.http_status(200);
        m.http_status(999);
        let text = m.render(2);
        for line in [
            "apizr_requests_total{capability=\"f\",outcome=\"success\"} 2",
            "apizr_requests_total{capability=\"f\",outcome=\"timeout\"} 1",
            "apizr_request_duration_seconds_bucket{capability=\"f\",le=\"0.001\"} 1",
            "apizr_request_duration_seconds_bucket{capability=\"f\",le=\"0.01\"} 1",
            "apizr_request_duration_seconds_bucket{capability=\"f\",le=\"0.025\"} 2",
            "apizr_request_duration_seconds_bucket{capability=\"f\",le=\"10\"} 2",
            "apizr_request_duration_seconds_bucket{capability=\"f\",le=\"+Inf\"} 3",
            "apizr_request_duration_seconds_count{capability=\"f\"} 3",
            "apizr_http_responses_total{code=\"200\"} 1",
            "apizr_worker_kills_total 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("unknown-capability"));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
