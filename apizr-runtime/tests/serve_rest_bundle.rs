//! `ServeSpec::from_bundle_dir`: a generated project's contract files are decoded, every
//! artifact is re-hashed, and the mode follows `execution/policy.json`. Includes bundles
//! written by the reference (`apizr generate rest`, when the oracle is installed), whose
//! manifests have the shape ours must keep.
#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use std::path::{Path, PathBuf};

use apizr_ir::policy::AnyPolicy;
use apizr_ir::{Digest, Value};
use apizr_runtime::serve::{ExecutionMode, ServeError, ServeOptions, ServeSpec};
use serve_rest_support::*;

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("apizr-serve-bundle-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn digest_value(bytes: &[u8]) -> Value {
    apizr_ir::to_value(&Digest::sha256(bytes)).unwrap()
}

/// A minimal bundle in the reference's manifest shape, built from the kinds.py contracts.
fn write_bundle(dir: &Path, policy: Option<&str>) {
    let spec = kinds_spec(direct(1));
    let source = std::fs::read(data("kinds.py")).unwrap();
    let openapi = std::fs::read(data("openapi.reference.json")).unwrap();
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::write(dir.join("source/kinds.py"), &source).unwrap();
    std::fs::write(dir.join("openapi.json"), &openapi).unwrap();
    let mut artifacts = std::collections::BTreeMap::new();
    artifacts.insert("openapi.json".to_string(), digest_value(&openapi));
    artifacts.insert("source/kinds.py".to_string(), digest_value(&source));
    if let Some(p) = policy {
        std::fs::create_dir_all(dir.join("execution")).unwrap();
        std::fs::write(dir.join("execution/policy.json"), p).unwrap();
        artifacts.insert(
            "execution/policy.json".to_string(),
            digest_value(p.as_bytes()),
        );
    }
    let capabilities = spec
        .capabilities
        .iter()
        .map(|c| {
            let Value::Object(mut map) = apizr_ir::to_value(&c.contract).unwrap() else {
                panic!("contract is an object")
            };
            map.insert("method".into(), Value::Str("POST".into()));
            map.insert(
                "route".into(),
                Value::Str(format!("/capabilities/{}", c.name)),
            );
            Value::Object(map)
        })
        .collect();
    let manifest = Value::Object(
        [
            ("artifacts".to_string(), Value::Object(artifacts)),
            ("capabilities".to_string(), Value::Array(capabilities)),
            ("executable_digest".to_string(), digest_value(&source)),
            (
                "executable_path".to_string(),
                Value::Str("source/kinds.py".into()),
            ),
            (
                "source".to_string(),
                Value::Object([("module".to_string(), Value::Str("kinds".into()))].into()),
            ),
            (
                "schema_version".to_string(),
                Value::Str("apizr.rest/v1".into()),
            ),
        ]
        .into(),
    );
    std::fs::write(
        dir.join("apizr-rest.json"),
        manifest.canonical_bytes().unwrap(),
    )
    .unwrap();
}

#[test]
fn loads_a_direct_bundle_with_every_contract() {
    let dir = temp_dir("direct");
    write_bundle(&dir, None);
    let spec = ServeSpec::from_bundle_dir(&dir).unwrap();
    assert!(matches!(spec.mode, ExecutionMode::Direct { .. }));
    let want: Vec<String> = kinds_spec(direct(1))
        .capabilities
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let got: Vec<String> = spec.capabilities.iter().map(|c| c.name.clone()).collect();
    assert_eq!(got, want);
    assert_eq!(spec.source.module, "kinds");
    assert_eq!(
        spec.openapi.unwrap(),
        std::fs::read(data("openapi.reference.json")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_policy_makes_the_bundle_governed() {
    let dir = temp_dir("governed");
    write_bundle(&dir, Some("{\"limits\": {\"wall_time_ms\": 1234}}"));
    let spec = ServeSpec::from_bundle_dir(&dir).unwrap();
    let ExecutionMode::Governed {
        policy: AnyPolicy::V1(policy),
        image: None,
    } = spec.mode
    else {
        panic!("expected governed mode under a v1 policy")
    };
    assert_eq!(policy.limits.wall_time_ms, 1234);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tampered_artifacts_and_unsafe_paths_are_refused() {
    let dir = temp_dir("tampered");
    write_bundle(&dir, None);
    std::fs::write(
        dir.join("source/kinds.py"),
        b"def add(a: int) -> int:\n    return 0\n",
    )
    .unwrap();
    let err = ServeSpec::from_bundle_dir(&dir).unwrap_err();
    assert!(
        matches!(err, ServeError::Digest(ref p) if p == "source/kinds.py"),
        "{err}"
    );

    write_bundle(&dir, None);
    let manifest = std::fs::read_to_string(dir.join("apizr-rest.json")).unwrap();
    let escaped = manifest.replace("\"openapi.json\"", "\"../openapi.json\"");
    std::fs::write(dir.join("apizr-rest.json"), escaped).unwrap();
    let err = ServeSpec::from_bundle_dir(&dir).unwrap_err();
    assert!(err.to_string().contains("unsafe artifact path"), "{err}");

    write_bundle(&dir, None);
    let manifest = std::fs::read_to_string(dir.join("apizr-rest.json")).unwrap();
    let broken = manifest.replacen("\"kind\":\"int\"", "\"kind\":\"integer\"", 1);
    std::fs::write(dir.join("apizr-rest.json"), broken).unwrap();
    let err = ServeSpec::from_bundle_dir(&dir).unwrap_err();
    assert!(err.to_string().contains("malformed contract"), "{err}");

    std::fs::remove_file(dir.join("apizr-rest.json")).unwrap();
    assert!(ServeSpec::from_bundle_dir(&dir).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The reference CLI (`APIZR_ORACLE`, else the venv `.ci/run` builds); under CI its absence
/// fails the test.
fn oracle() -> Option<PathBuf> {
    apizr_test_support::external_tool(
        "APIZR_ORACLE",
        "target/oracle-venv/bin/apizr",
        "the reference CLI (outerspace-apizr 0.4.6)",
    )
}

/// The reference's own generated bundles load (their manifests have our shape) and, served by
/// us, answer every recorded vector as the reference's FastAPI apps did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_generated_bundles_load_and_serve() {
    let Some(oracle) = oracle() else {
        return;
    };
    let dir = temp_dir("reference");
    let policy = dir.join("policy.json");
    std::fs::write(&policy, "{}").unwrap();
    for (mode, extra) in [
        ("direct", vec![]),
        (
            "governed",
            vec![
                "--execution-policy".to_string(),
                policy.display().to_string(),
            ],
        ),
    ] {
        let out = dir.join(mode);
        let status = std::process::Command::new(&oracle)
            .args(["generate", "rest"])
            .arg(data("kinds.py"))
            .arg("--output-dir")
            .arg(&out)
            .args(&extra)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let mut spec = ServeSpec::from_bundle_dir(&out).unwrap();
        assert_eq!(
            matches!(spec.mode, ExecutionMode::Governed { .. }),
            mode == "governed"
        );
        spec.launcher = launcher();
        if let ExecutionMode::Direct { workers, .. } = &mut spec.mode {
            *workers = 1;
        }
        let server = Server::start(spec, ServeOptions::default()).await;
        let (passed, failures) = run_vectors(&server, mode).await;
        assert!(
            failures.is_empty(),
            "{mode}: {passed} passed; failures:\n{}",
            failures.join("\n")
        );
        let (_, _, served) = server.get("/openapi.json", None).await;
        assert_eq!(served, std::fs::read(out.join("openapi.json")).unwrap());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
