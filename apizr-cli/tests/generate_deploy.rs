//! The deployment files of generated projects agree with each other and with Kubernetes:
//! * one image reference everywhere (Dockerfile, README's `docker build`/`docker run`/`kind
//!   load`, `k8s/`), named by execution mode and tagged with the first 12 hex digits of the
//!   transport manifest's sha256;
//! * `--scale-to-zero` writes a Knative Service instead of the Deployment, Service and HPA;
//! * the manifests pass `kubernetes-validate --strict` (the PyPI package that bundles the
//!   Kubernetes schemas; `KUBERNETES_VALIDATE_PYTHON` or `target/kubernetes-validate-venv`,
//!   required under CI) for REST and MCP, direct and governed. kubernetes-validate has no
//!   Knative schema, so the Knative Service is checked structurally by
//!   `tests/k8s/knative_as_pod.py` and its pod spec validated strictly as a core/v1 Pod.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "generate/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{TempDir, apizr, workspace_root};

/// Generate `pricing.py` for `transport` in `mode` (`direct`, `v1`) under `root/name`.
fn generate(root: &Path, name: &str, transport: &str, mode: &str, extra: &[&str]) -> PathBuf {
    std::fs::write(root.join("policy.json"), "{}").unwrap();
    let source = workspace_root().join("tests/fixtures/generate/sources/pricing.py");
    let mut argv = vec![
        "generate",
        transport,
        source.to_str().unwrap(),
        "--output-dir",
        name,
        "--no-lockfile",
    ];
    if mode == "v1" {
        argv.extend(["--execution-policy", "policy.json"]);
    }
    argv.extend(extra);
    let out = apizr(root, &argv);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    root.join(name)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap()
}

/// The image reference a project must use: `<package>[-governed]:<12 hex of the manifest>`.
fn expected_image(dir: &Path, transport: &str, mode: &str) -> String {
    let manifest = std::fs::read(dir.join(format!("apizr-{transport}.json"))).unwrap();
    let digest = apizr_ir::Digest::sha256(&manifest).value;
    let suffix = if mode == "v1" { "-governed" } else { "" };
    format!("apizr-{transport}-pricing{suffix}:{}", &digest[..12])
}

#[test]
fn every_file_names_the_same_image_and_the_tag_follows_the_bundle() {
    let tmp = TempDir::new("deploy");
    let mut images = Vec::new();
    for transport in ["rest", "mcp"] {
        for mode in ["direct", "v1"] {
            let dir = generate(
                tmp.path(),
                &format!("{transport}-{mode}"),
                transport,
                mode,
                &[],
            );
            let image = expected_image(&dir, transport, mode);
            let dockerfile = read(&dir, "Dockerfile");
            assert!(
                dockerfile.contains(&format!(" -t {image} .")),
                "{dockerfile}"
            );
            let digest = apizr_ir::Digest::sha256(
                &std::fs::read(dir.join(format!("apizr-{transport}.json"))).unwrap(),
            );
            assert!(
                dockerfile.contains(&format!(
                    "LABEL org.apizr.bundle.digest=\"{}\"",
                    digest.prefixed()
                )),
                "{dockerfile}"
            );
            let readme = read(&dir, "README.md");
            for line in [
                format!("docker build --build-arg BASE_IMAGE=python:3.12-slim -t {image} ."),
                format!("kind load docker-image {image}"),
                "export APIZR_TOKEN=\"$(openssl rand -hex 32)\"".to_string(),
                format!(
                    "kubectl create secret generic apizr-{transport}-pricing-token --from-literal=token=\"$APIZR_TOKEN\""
                ),
                "kubectl apply -f k8s/".to_string(),
            ] {
                assert!(readme.contains(&line), "README lacks {line:?}:\n{readme}");
            }
            // The `docker run` line passes the token through the environment.
            assert!(
                readme
                    .lines()
                    .any(|l| l.starts_with("docker run") && l.contains("-e APIZR_TOKEN"))
                    && readme.contains(&image),
                "{readme}"
            );
            let deployment = read(&dir, "k8s/deployment.yaml");
            assert!(
                deployment.contains(&format!("image: {image}\n")),
                "{deployment}"
            );
            assert!(deployment.contains(&format!("name: apizr-{transport}-pricing-token")));
            assert!(!deployment.contains(":latest"));
            images.push(image);
        }
    }
    // Direct and governed builds never share an image name, and every bundle its own tag.
    let names: std::collections::BTreeSet<&str> = images
        .iter()
        .map(|i| i.split(':').next().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{images:?}");
    let tags: std::collections::BTreeSet<&str> = images
        .iter()
        .map(|i| i.split(':').nth(1).unwrap())
        .collect();
    assert_eq!(tags.len(), 4, "{images:?}");
    // A different bundle (one capability fewer) gets a different tag; the same one the same.
    let again = generate(tmp.path(), "again", "rest", "direct", &[]);
    assert_eq!(expected_image(&again, "rest", "direct"), images[0]);
    let fewer = generate(
        tmp.path(),
        "fewer",
        "rest",
        "direct",
        &["--select", "total"],
    );
    assert_ne!(expected_image(&fewer, "rest", "direct"), images[0]);
}

#[test]
fn scale_to_zero_replaces_the_deployment_service_and_hpa() {
    let tmp = TempDir::new("deploy");
    for transport in ["rest", "mcp"] {
        let dir = generate(tmp.path(), transport, transport, "v1", &["--scale-to-zero"]);
        let mut k8s: Vec<String> = std::fs::read_dir(dir.join("k8s"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        k8s.sort();
        assert_eq!(k8s, ["knative-service.yaml", "networkpolicy.yaml"]);
        let knative = read(&dir, "k8s/knative-service.yaml");
        let image = expected_image(&dir, transport, "v1");
        assert!(knative.contains(&format!("image: {image}\n")), "{knative}");
        assert!(knative.contains("autoscaling.knative.dev/min-scale: \"0\""));
        // The seccomp profile, per container (Knative refuses a pod-level securityContext):
        // governed v1 needs the launcher's calls (Localhost), as the Deployment does.
        assert!(
            knative.contains(&format!(
                "            seccompProfile:\n\
                 \x20             # Docker's default plus the launcher's namespace calls: \
                 seccomp.json, installed on\n\
                 \x20             # every node as \
                 /var/lib/kubelet/seccomp/apizr/apizr-{transport}-pricing.json (see README.md).\n\
                 \x20             type: Localhost\n\
                 \x20             localhostProfile: apizr/apizr-{transport}-pricing.json\n"
            )),
            "{knative}"
        );
        let direct = generate(
            tmp.path(),
            &format!("{transport}-direct"),
            transport,
            "direct",
            &["--scale-to-zero"],
        );
        let direct = read(&direct, "k8s/knative-service.yaml");
        assert!(
            direct.contains("            seccompProfile:\n              type: RuntimeDefault\n"),
            "{direct}"
        );
        let readme = read(&dir, "README.md");
        assert!(readme.contains(&format!("kubectl wait ksvc/apizr-{transport}-pricing")));
        assert!(!readme.contains("kubectl rollout status deployment/"));
    }
}

/// `python -m kubernetes_validate --strict FILES…`: (exit success, combined output).
fn kubernetes_validate(python: &Path, files: &[PathBuf]) -> (bool, String) {
    let out = Command::new(python)
        .args(["-m", "kubernetes_validate", "--strict"])
        .args(files)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("k8s"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn manifests_pass_kubernetes_validate_strict() {
    let Some(python) = apizr_test_support::kubernetes_validate_python() else {
        return;
    };
    let tmp = TempDir::new("deploy");
    for transport in ["rest", "mcp"] {
        for mode in ["direct", "v1"] {
            let dir = generate(
                tmp.path(),
                &format!("{transport}-{mode}"),
                transport,
                mode,
                &[],
            );
            let files = yaml_files(&dir);
            assert_eq!(files.len(), 4);
            let (ok, text) = kubernetes_validate(&python, &files);
            assert!(ok, "{transport} {mode}: {text}");
            for file in &files {
                let line = text
                    .lines()
                    .find(|l| l.contains(file.to_str().unwrap()))
                    .unwrap_or_default();
                assert!(line.contains(" passed for resource "), "{text}");
            }
        }
    }
    // The control: a manifest with a field Kubernetes does not have fails --strict.
    let dir = tmp.path().join("rest-direct");
    let bad = dir.join("k8s/deployment.yaml");
    let text = read(&dir, "k8s/deployment.yaml").replace(
        "      automountServiceAccountToken: false\n",
        "      automountServiceAccountToken: false\n      automountToken: false\n",
    );
    std::fs::write(&bad, text).unwrap();
    let (ok, text) = kubernetes_validate(&python, &[bad]);
    assert!(
        !ok && text.contains("'automountToken' was unexpected"),
        "{text}"
    );
}

#[test]
fn knative_service_passes_structural_and_pod_spec_validation() {
    let Some(python) = apizr_test_support::kubernetes_validate_python() else {
        return;
    };
    let script = workspace_root().join("tests/k8s/knative_as_pod.py");
    let tmp = TempDir::new("deploy");
    for transport in ["rest", "mcp"] {
        for mode in ["direct", "v1"] {
            let name = format!("{transport}-{mode}");
            let dir = generate(tmp.path(), &name, transport, mode, &["--scale-to-zero"]);
            let files = yaml_files(&dir);
            let (ok, text) = kubernetes_validate(&python, &files);
            assert!(ok, "{name}: {text}");
            assert!(
                text.contains("networkpolicy.yaml passed for resource"),
                "{text}"
            );
            // kubernetes-validate does not know the CRD: it says so instead of validating.
            assert!(
                text.contains(
                    "Couldn't find schema for kind Service with api version serving.knative.dev/v1"
                ),
                "kubernetes-validate now knows Knative: validate the Service directly\n{text}"
            );
            let service = dir.join("k8s/knative-service.yaml");
            let pod = tmp.path().join(format!("{name}-pod.yaml"));
            let out = Command::new(&python)
                .arg(&script)
                .arg(&service)
                .arg(&pod)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            let (ok, text) = kubernetes_validate(&python, std::slice::from_ref(&pod));
            assert!(
                ok && text.contains("passed for resource pod/"),
                "{name}: {text}"
            );
        }
    }
    // The control: a pod-level securityContext (refused by Knative's default feature set) fails
    // the structural check.
    let service = tmp.path().join("rest-v1/k8s/knative-service.yaml");
    let text = read(tmp.path(), "rest-v1/k8s/knative-service.yaml").replace(
        "      automountServiceAccountToken: false\n",
        "      automountServiceAccountToken: false\n      securityContext: {}\n",
    );
    std::fs::write(&service, text).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(&service)
        .arg(tmp.path().join("bad-pod.yaml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success()
            && text.contains("fields outside Knative's pod subset: ['securityContext']"),
        "{text}"
    );
}
