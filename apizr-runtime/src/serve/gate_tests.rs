//! Admission: queues, the server-wide worker and memory caps, idle pre-started workers.
#![allow(clippy::unwrap_used)]

use super::*;

fn admission(gates: Gates, governed: Option<GovernedClaim>) -> Admission {
    let metrics = Arc::new(Metrics::new(vec!["f".into(), "g".into()]));
    Admission::new(["f", "g"], &gates, governed, None, metrics)
}

fn gates(concurrency: usize, queue: usize, workers: usize, memory_bytes: u64) -> Gates {
    Gates {
        concurrency,
        queue,
        retry_after: Duration::from_secs(1),
        workers,
        memory_bytes,
    }
}

#[tokio::test]
async fn abandoned_waiters_give_their_queue_slot_back() {
    let a = admission(gates(1, 2, 8, 1 << 30), None);
    let running = a.enter("f").await.unwrap();
    for _ in 0..5 {
        // Two waiters start, and are dropped mid-wait (a client hanging up).
        let w1 = a.enter("f");
        let w2 = a.enter("f");
        let polled =
            tokio::time::timeout(Duration::from_millis(10), async { tokio::join!(w1, w2) }).await;
        assert!(polled.is_err(), "waiters must still be waiting");
        assert_eq!(a.metrics.queued.load(Ordering::Relaxed), 0);
    }
    // The queue is empty again: two more can wait, the third is refused.
    let w1 = async { a.enter("f").await.is_ok() };
    let w2 = async { a.enter("f").await.is_ok() };
    let mut both = Box::pin(async { tokio::join!(w1, w2) });
    assert!(futures_poll_once(&mut both).await.is_none());
    assert!(matches!(a.enter("f").await, Err(Refused::Busy { .. })));
    drop(running);
    assert_eq!(both.await, (true, true));
}

async fn futures_poll_once<F: std::future::Future + Unpin>(f: &mut F) -> Option<F::Output> {
    tokio::time::timeout(Duration::from_millis(10), f)
        .await
        .ok()
}

#[tokio::test]
async fn server_cap_spans_capabilities_and_counts_memory() {
    // Workers cap 8, but memory fits only two 300 MiB workers in 700 MiB.
    let claim = GovernedClaim {
        memory_bytes: Some(300 << 20),
    };
    let a = admission(gates(8, 0, 8, 700 << 20), Some(claim));
    let first = a.enter("f").await.unwrap();
    let second = a.enter("g").await.unwrap();
    assert_eq!(a.metrics.governed_workers.load(Ordering::Relaxed), 2);
    assert_eq!(a.metrics.governed_memory.load(Ordering::Relaxed), 600 << 20);
    // No queue: the third is refused at once, on either capability.
    assert!(matches!(a.enter("f").await, Err(Refused::Busy { .. })));
    assert!(matches!(a.enter("g").await, Err(Refused::Busy { .. })));
    drop(first);
    let third = a.enter("g").await.unwrap();
    drop((second, third));
    assert_eq!(a.metrics.governed_workers.load(Ordering::Relaxed), 0);
    assert_eq!(a.metrics.governed_memory.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn sources_share_one_budget() {
    // Two sources (two policies), one server: 2 workers and 700 MiB for both together.
    let g = gates(8, 0, 2, 700 << 20);
    let metrics = Arc::new(Metrics::new(vec!["f".into(), "g".into()]));
    let budget = GovernedBudget::new(&g);
    let claim = |mib: u64| {
        Some(GovernedClaim {
            memory_bytes: Some(mib << 20),
        })
    };
    let a = Admission::new(["f"], &g, claim(300), Some(budget.clone()), metrics.clone());
    let b = Admission::new(["g"], &g, claim(300), Some(budget), metrics.clone());
    let first = a.enter("f").await.unwrap();
    let second = b.enter("g").await.unwrap();
    // Each source alone would still have room; the server has none.
    assert!(matches!(a.enter("f").await, Err(Refused::Busy { .. })));
    assert!(matches!(b.enter("g").await, Err(Refused::Busy { .. })));
    assert_eq!(metrics.governed_workers.load(Ordering::Relaxed), 2);
    drop(first);
    let third = b.enter("g").await.unwrap();
    drop((second, third));
    assert_eq!(metrics.governed_memory.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn idle_prestarted_workers_count_in_the_memory_budget() {
    // 1000 MiB: two idle 300 MiB workers fit with room for one call; a third would not.
    let g = gates(8, 0, 8, 1000 << 20);
    let metrics = Arc::new(Metrics::new(vec!["f".into(), "g".into()]));
    let claim = |mib: u64| {
        Some(GovernedClaim {
            memory_bytes: Some(mib << 20),
        })
    };
    let a = Admission::new(["f"], &g, claim(300), None, metrics.clone());
    assert_eq!(a.reserve_idle(3), 2);
    // 400 MiB left: one call runs, a second does not fit while the idle workers wait.
    let first = a.enter("f").await.unwrap();
    assert!(matches!(a.enter("f").await, Err(Refused::Busy { .. })));
    drop(first);
    // A server whose other source claims 700 MiB per call keeps room for that call.
    let budget = GovernedBudget::new(&g);
    budget.expect_claim(700 << 20);
    let b = Admission::new(["f"], &g, claim(300), Some(budget.clone()), metrics.clone());
    let c = Admission::new(["g"], &g, claim(700), Some(budget), metrics);
    assert_eq!(b.reserve_idle(2), 1);
    assert!(c.enter("g").await.is_ok());
    // No memory limit: nothing to count.
    let unlimited = GovernedClaim { memory_bytes: None };
    assert_eq!(admission(g, Some(unlimited)).reserve_idle(2), 2);
}

#[tokio::test]
async fn worker_cap_and_over_capacity() {
    let unlimited = GovernedClaim { memory_bytes: None };
    let a = admission(gates(8, 0, 1, 1 << 20), Some(unlimited));
    let only = a.enter("f").await.unwrap();
    assert!(matches!(a.enter("g").await, Err(Refused::Busy { .. })));
    drop(only);
    assert!(a.enter("g").await.is_ok());
    let huge = GovernedClaim {
        memory_bytes: Some(2 << 20),
    };
    let a = admission(gates(8, 8, 8, 1 << 20), Some(huge));
    assert_eq!(a.enter("f").await.err(), Some(Refused::OverCapacity));
    assert_eq!(a.enter("nope").await.err(), Some(Refused::Unknown));
}
