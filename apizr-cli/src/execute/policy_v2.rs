//! Policy v2 (`apizr.execution/v2`, contract 7.1) as far as `apizr execute` needs it while the
//! OCI backend does not exist: strict validation (so a malformed document is `invalid_input`
//! like in the reference), the two controls the reference refuses before planning
//! (`network.mode: inherit`, `environment.inherit: true`), and the v1 worker policy the
//! reference derives from it (limits, environment and effects copied, v1 defaults elsewhere).
//! Running is then answered `backend_unavailable`, after argument validation — the same order
//! and envelopes the reference shows on a host without a usable Docker engine.

use apizr_ir::policy::PolicyV1;
use serde_json::{Map, Value as Json};

/// Why a v2 document is not a valid policy (`invalid_input`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Error(pub String);

const FIELDS: [&str; 9] = [
    "schema_version",
    "backend",
    "limits",
    "resources",
    "environment",
    "network",
    "filesystem",
    "subprocess",
    "effects",
];

fn invalid(msg: impl Into<String>) -> V2Error {
    V2Error(msg.into())
}

fn literal(doc: &Map<String, Json>, key: &str, allowed: &[&str]) -> Result<(), V2Error> {
    match doc.get(key) {
        None => Ok(()),
        Some(Json::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(invalid(format!("{key}: expected one of {allowed:?}"))),
    }
}

fn mode<'a>(
    doc: &'a Map<String, Json>,
    key: &str,
    allowed: &[&str],
) -> Result<Option<&'a str>, V2Error> {
    let Some(section) = doc.get(key) else {
        return Ok(None);
    };
    let section = section
        .as_object()
        .ok_or_else(|| invalid(format!("{key}: expected an object")))?;
    if section.keys().any(|k| k != "mode") {
        return Err(invalid(format!("{key}: unknown field")));
    }
    match section.get("mode") {
        None => Ok(None),
        Some(Json::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s)),
        Some(_) => Err(invalid(format!("{key}.mode: expected one of {allowed:?}"))),
    }
}

/// A strict JSON integer (not a float, string or boolean) within bounds.
fn int(section: &Map<String, Json>, key: &str, min: u64, max: u64) -> Result<Option<u64>, V2Error> {
    match section.get(key) {
        None => Ok(None),
        Some(Json::Number(n)) if n.is_u64() || n.is_i64() => n
            .as_u64()
            .filter(|v| (min..=max).contains(v))
            .map(Some)
            .ok_or_else(|| invalid(format!("resources.{key}: expected {min}..={max}"))),
        Some(_) => Err(invalid(format!("resources.{key}: expected an integer"))),
    }
}

fn resources(doc: &Map<String, Json>) -> Result<(), V2Error> {
    let Some(section) = doc.get("resources") else {
        return Ok(());
    };
    let section = section
        .as_object()
        .ok_or_else(|| invalid("resources: expected an object"))?;
    let known = ["memory_bytes", "cpu_millis", "pids", "scratch_bytes"];
    if section.keys().any(|k| !known.contains(&k.as_str())) {
        return Err(invalid("resources: unknown field"));
    }
    let memory = int(section, "memory_bytes", 67_108_864, 8_589_934_592)?.unwrap_or(268_435_456);
    int(section, "cpu_millis", 10, 64_000)?;
    int(section, "pids", 8, 1024)?;
    let scratch = int(section, "scratch_bytes", 1_048_576, 1_073_741_824)?.unwrap_or(16_777_216);
    if scratch > memory / 2 {
        return Err(invalid("resources.scratch_bytes: at most memory_bytes / 2"));
    }
    Ok(())
}

/// A valid v2 policy: the derived v1 worker policy and the refusal (if any) that the
/// reference applies at the "policy controls" step, after reading arguments and source.
#[derive(Debug, Clone, PartialEq)]
pub struct V2Policy {
    pub worker: PolicyV1,
    pub refusal: Option<&'static str>,
}

/// Validate a v2 document and derive the v1 worker policy.
pub fn worker_policy(doc: &Json) -> Result<V2Policy, V2Error> {
    let map = doc
        .as_object()
        .ok_or_else(|| invalid("policy: expected an object"))?;
    if let Some(unknown) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(invalid(format!("{unknown}: unknown field")));
    }
    literal(map, "schema_version", &["apizr.execution/v2"])?;
    literal(map, "backend", &["oci-container"])?;
    literal(map, "filesystem", &["container"])?;
    resources(map)?;
    let network = mode(map, "network", &["deny", "inherit"])?;
    mode(map, "subprocess", &["allow", "deny"])?;
    let mut v1 = Map::new();
    for key in ["limits", "environment", "effects"] {
        if let Some(section) = map.get(key) {
            v1.insert(key.to_string(), section.clone());
        }
    }
    let policy = PolicyV1::from_json(&Json::Object(v1)).map_err(|e| invalid(e.to_string()))?;
    let refusal = if network == Some("inherit") {
        Some("network inherit is not allowed by the OCI backend")
    } else if policy.environment.inherit {
        Some("environment inherit is not allowed by the OCI backend")
    } else {
        None
    };
    Ok(V2Policy {
        worker: policy,
        refusal,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<V2Policy, V2Error> {
        worker_policy(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn defaults_and_worker_policy() {
        let policy = check(r#"{"schema_version":"apizr.execution/v2"}"#).unwrap();
        assert_eq!(policy.worker, PolicyV1::default());
        assert_eq!(policy.refusal, None);
        let policy = check(
            r#"{"limits":{"wall_time_ms":100},"environment":{"allow":["B","A"]},"subprocess":{"mode":"deny"}}"#,
        )
        .unwrap()
        .worker;
        assert_eq!(policy.limits.wall_time_ms, 100);
        assert_eq!(policy.environment.allow, ["A", "B"]);
        assert_eq!(policy.subprocess.mode, "allow", "v1 defaults for the rest");
    }

    #[test]
    fn strictness_and_refusals() {
        for bad in [
            r#"{"bogus":1}"#,
            r#"{"working_directory":"fresh"}"#,
            r#"{"filesystem":{"mode":"host"}}"#,
            r#"{"backend":"local-process"}"#,
            r#"{"resources":{"pids":4}}"#,
            r#"{"resources":{"memory_bytes":67108864,"scratch_bytes":67108864}}"#,
            r#"{"resources":{"cpu_millis":"100"}}"#,
            r#"{"limits":{"max_output_bytes":127}}"#,
            r#"[]"#,
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
        for refused in [
            r#"{"network":{"mode":"inherit"}}"#,
            r#"{"environment":{"inherit":true}}"#,
        ] {
            assert!(check(refused).unwrap().refusal.is_some(), "{refused}");
        }
    }
}
