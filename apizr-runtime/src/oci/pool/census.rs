//! Which pools are on an engine: the containers labelled [`POOL_LABEL`], grouped by owner, with
//! whether that owner still runs. A server's pool counters live in the server (its
//! `/metrics`); this is what any process (`apizr doctor`) can see from outside.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value as Json, json};

use crate::oci::container::POOL_LABEL;
use crate::oci::engine::{Engine, EngineError};
use crate::oci::http::{Body, encode_query};
use crate::oci::sweep::OWNER_LABEL;
use crate::owner::{Liveness, Owner};

/// One owner's pooled containers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolOwner {
    /// The owner label (`BOOT/PIDNS/PID/START`), or `unknown`.
    pub owner: String,
    /// The owner's pid, when the label names one.
    pub pid: Option<u32>,
    /// `alive`, `dead` (a sweep removes these), or `unknown` (another boot or pid namespace).
    pub liveness: &'static str,
    /// Running containers: prepared ones waiting for a call, or answering one.
    pub running: usize,
    /// Containers in any other state (being created, or used and being removed).
    pub other: usize,
}

/// The pooled containers on `engine`, one entry per owner (sorted by owner).
pub fn census(engine: &Engine) -> Result<Vec<PoolOwner>, EngineError> {
    let filters = json!({ "label": [POOL_LABEL] }).to_string();
    let path = format!("/containers/json?all=1&filters={}", encode_query(&filters));
    let list = engine.json("GET", &path, Body::None)?;
    Ok(group(&list))
}

/// The pure half of [`census`]: a `GET /containers/json` listing grouped by owner.
pub fn group(list: &Json) -> Vec<PoolOwner> {
    let mut owners: BTreeMap<String, PoolOwner> = BTreeMap::new();
    for item in list.as_array().map(Vec::as_slice).unwrap_or_default() {
        let label = item["Labels"][OWNER_LABEL].as_str().unwrap_or("unknown");
        let entry = owners
            .entry(label.to_string())
            .or_insert_with(|| of_label(label));
        if item["State"].as_str() == Some("running") {
            entry.running += 1;
        } else {
            entry.other += 1;
        }
    }
    owners.into_values().collect()
}

fn of_label(label: &str) -> PoolOwner {
    let owner = Owner::decode(label);
    PoolOwner {
        owner: label.to_string(),
        pid: owner.as_ref().map(|o| o.pid),
        liveness: match owner.map(|o| o.liveness()) {
            Some(Liveness::Alive) => "alive",
            Some(Liveness::Dead) => "dead",
            Some(Liveness::Unknown) | None => "unknown",
        },
        running: 0,
        other: 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn grouped_by_owner_with_liveness() {
        let me = Owner::current().unwrap().encode();
        let mut dead = Owner::current().unwrap().clone();
        dead.start_ticks += 1;
        let dead = dead.encode();
        let list = json!([
            {"State": "running", "Labels": {OWNER_LABEL: me}},
            {"State": "exited", "Labels": {OWNER_LABEL: me}},
            {"State": "running", "Labels": {OWNER_LABEL: dead}},
            {"State": "created", "Labels": {}},
        ]);
        let owners = group(&list);
        let find = |o: &str| owners.iter().find(|x| x.owner == o).unwrap();
        let mine = find(&me);
        assert_eq!((mine.liveness, mine.running, mine.other), ("alive", 1, 1));
        assert_eq!(mine.pid, Some(std::process::id()));
        assert_eq!(find(&dead).liveness, "dead");
        let unknown = find("unknown");
        assert_eq!(
            (unknown.liveness, unknown.other, unknown.pid),
            ("unknown", 1, None)
        );
        assert_eq!(owners.len(), 3);
    }
}
