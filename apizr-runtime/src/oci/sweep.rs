//! Start-up sweep: containers and bundle directories left behind by killed callers.
//!
//! Every container of ours is labelled `org.apizr.execution=oci-v1`, with an expiry
//! (`org.apizr.expires`, unix seconds: the call's deadline plus a margin) and its owner
//! (`org.apizr.owner`, see [`crate::owner`]); every bundle directory carries the owner in its
//! name. A guard removes both on every path the process survives, so what is left was left by a
//! process that died (SIGKILL, OOM, power loss). The rule, per item:
//!
//! * owner known and **alive** → keep, whatever the expiry says (other calls, tests and servers
//!   share the engine and the temp dir);
//! * owner known and **dead** → remove;
//! * owner unknown (another boot, another pid namespace, no label) → remove only once expired
//!   (containers; a directory without an owner in its name is never touched).
//!
//! A removal that fails is reported in [`SweepReport::failed`] and never counted as removed.
//! The sweep runs once per [`super::OciRuntime`], when the engine is first probed: at the start
//! of `apizr execute` and of `apizr serve`.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value as Json, json};

use super::bundle;
use super::container::{EXECUTION_LABEL, EXPIRES_LABEL, remove_confirmed};
use super::engine::Engine;
use super::http::{Body, encode_query};
use crate::owner::{Liveness, Owner};

/// How long a failed removal may take to show as done (another sweeper may be removing it).
const REMOVAL_GRACE: Duration = Duration::from_secs(2);

/// Label naming the process that created the container (`BOOT/PIDNS/PID/START`).
pub const OWNER_LABEL: &str = "org.apizr.owner";

/// What one sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// Containers removed (their names), with the reason.
    pub removed: Vec<Swept>,
    /// Bundle directories removed.
    pub bundles_removed: Vec<String>,
    /// Removals that failed or could not be attempted: never counted as removed.
    pub failed: Vec<Swept>,
    /// Items kept because their owner is alive.
    pub kept_alive: usize,
}

/// One item and why it was (or could not be) removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Swept {
    pub item: String,
    pub reason: String,
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Remove(&'static str),
    KeepAlive,
    Keep,
}

/// The rule for one container's labels at unix time `now`.
fn verdict(labels: &Json, now: u64) -> Verdict {
    let owner = labels[OWNER_LABEL].as_str().and_then(Owner::decode);
    match owner.map(|o| o.liveness()) {
        Some(Liveness::Alive) => return Verdict::KeepAlive,
        Some(Liveness::Dead) => return Verdict::Remove("owner process is gone"),
        Some(Liveness::Unknown) | None => {}
    }
    let expired = labels[EXPIRES_LABEL]
        .as_str()
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|t| t < now);
    if expired {
        Verdict::Remove("expired")
    } else {
        Verdict::Keep
    }
}

/// Sweep the engine's containers and the bundle directories under `temp_root`.
pub fn sweep(engine: &Engine, temp_root: &Path) -> SweepReport {
    let mut report = SweepReport::default();
    sweep_containers(engine, &mut report);
    sweep_bundles(temp_root, &mut report);
    report
}

fn sweep_containers(engine: &Engine, report: &mut SweepReport) {
    let filters = json!({ "label": [format!("{}={}", EXECUTION_LABEL.0, EXECUTION_LABEL.1)] });
    let path = format!(
        "/containers/json?all=1&filters={}",
        encode_query(&filters.to_string())
    );
    match engine.json("GET", &path, Body::None) {
        Ok(list) => sweep_listed(engine, &list, report),
        Err(e) => report.failed.push(Swept {
            item: "container listing".into(),
            reason: e.to_string(),
        }),
    }
}

/// Apply the rule to a container listing (`GET /containers/json` items) and remove through
/// `engine`.
pub fn sweep_listed(engine: &Engine, list: &Json, report: &mut SweepReport) {
    let now = super::container::unix_now();
    for item in list.as_array().map(Vec::as_slice).unwrap_or_default() {
        let Some(id) = item["Id"].as_str() else {
            continue;
        };
        let name = item["Names"][0]
            .as_str()
            .map_or(id, |n| n.trim_start_matches('/'))
            .to_string();
        match verdict(&item["Labels"], now) {
            Verdict::KeepAlive => report.kept_alive += 1,
            Verdict::Keep => {}
            Verdict::Remove(reason) => match remove_confirmed(engine, id, REMOVAL_GRACE) {
                Ok(()) => report.removed.push(Swept {
                    item: name,
                    reason: reason.into(),
                }),
                Err(e) => report.failed.push(Swept {
                    item: name,
                    reason: format!("{reason}; removal failed: {e}"),
                }),
            },
        }
    }
}

fn sweep_bundles(temp_root: &Path, report: &mut SweepReport) {
    let Ok(entries) = std::fs::read_dir(temp_root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(bundle::dir_owner) else {
            continue;
        };
        let path = entry.path();
        match owner.liveness() {
            Liveness::Alive => report.kept_alive += 1,
            Liveness::Unknown => {}
            Liveness::Dead => match bundle::remove_dir(&path) {
                Ok(()) => report.bundles_removed.push(path.display().to_string()),
                Err(e) => report.failed.push(Swept {
                    item: path.display().to_string(),
                    reason: format!("owner process is gone; removal failed: {e}"),
                }),
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn owner_first_then_expiry() {
        let me = Owner::current().unwrap().encode();
        let labels =
            |owner: &str, expires: &str| json!({OWNER_LABEL: owner, EXPIRES_LABEL: expires});
        // Alive owner: kept even when expired.
        assert_eq!(verdict(&labels(&me, "1"), 100), Verdict::KeepAlive);
        // Dead owner (same boot and namespace, a start time that never was): removed early.
        let mut dead = Owner::current().unwrap().clone();
        dead.start_ticks += 1;
        assert_eq!(
            verdict(&labels(&dead.encode(), "1000"), 100),
            Verdict::Remove("owner process is gone")
        );
        // Unknown owner or none: the expiry decides.
        let mut elsewhere = dead.clone();
        elsewhere.boot_id = "other-boot".into();
        assert_eq!(
            verdict(&labels(&elsewhere.encode(), "1000"), 100),
            Verdict::Keep
        );
        assert_eq!(
            verdict(&labels(&elsewhere.encode(), "99"), 100),
            Verdict::Remove("expired")
        );
        assert_eq!(
            verdict(&json!({EXPIRES_LABEL: "99"}), 100),
            Verdict::Remove("expired")
        );
        assert_eq!(verdict(&json!({}), 100), Verdict::Keep);
    }

    /// Bundle directories: a dead owner's is removed, a live one's and unowned ones are kept.
    #[test]
    fn bundle_directories_of_dead_owners_only() {
        let root = std::env::temp_dir().join(format!("apizr-sweep-test-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let mine = bundle::Bundle::create(&root, b"o", "source/m.py", b"x = 1\n").unwrap();
        let mut dead = Owner::current().unwrap().clone();
        dead.start_ticks += 1;
        let dead_dir = root.join(format!("apizr-oci-{}.abc", dead.encode().replace('/', ".")));
        std::fs::create_dir_all(dead_dir.join("source")).unwrap();
        let unowned = root.join("apizr-oci-0123456789abcdef");
        std::fs::create_dir_all(&unowned).unwrap();
        let mut report = SweepReport::default();
        sweep_bundles(&root, &mut report);
        assert_eq!(report.bundles_removed, [dead_dir.display().to_string()]);
        assert!(report.failed.is_empty());
        assert!(mine.path().exists() && unowned.exists() && !dead_dir.exists());
        drop(mine);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
