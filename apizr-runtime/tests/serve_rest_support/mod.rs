//! Helpers for `serve_rest.rs`: fixture specs built with the real inspector, an in-process
//! server on an ephemeral port, and a tiny raw HTTP/1.1 client (so a test can also declare a
//! length it never sends, or hang up mid-request).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use apizr_inspect::{InspectOptions, interface};
use apizr_ir::SourceKind;
use apizr_runtime::serve::rest::run_rest_plan_on;
use apizr_runtime::serve::{ExecutionMode, ServeOptions, ServeSource, ServeSpec, ServicePlan};
use apizr_runtime::{Executable, LauncherLocation};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/serve_rest_data")
        .join(name)
}

pub fn direct(workers: usize) -> ExecutionMode {
    ExecutionMode::Direct {
        workers,
        timeout: None,
    }
}

pub fn launcher() -> LauncherLocation {
    LauncherLocation::Binary(PathBuf::from(env!("CARGO_BIN_EXE_apizr-launch")))
}

/// A spec for a fixture module, planned exactly as `apizr serve SOURCE` plans it.
pub fn fixture_spec(file: &str, module: &str, mode: ExecutionMode) -> ServeSpec {
    let bytes = std::fs::read(data(file)).unwrap();
    let (outcome, parsed) = apizr_inspect::inspect_bytes_parsed(
        &bytes,
        SourceKind::Python,
        module,
        InspectOptions::default(),
    )
    .unwrap();
    let contracts = interface::plan_interfaces(&parsed, &outcome.inspection, None).unwrap();
    ServeSpec::from_contracts(
        contracts,
        ServeSource {
            executable: Executable::new(bytes),
            module: module.into(),
            executable_path: apizr_ir::plan::executable_path(module),
            ir_digest: None,
            readiness_digest: None,
        },
        mode,
    )
}

pub fn kinds_spec(mode: ExecutionMode) -> ServeSpec {
    fixture_spec("kinds.py", "kinds", mode)
}

pub fn slow_spec(mode: ExecutionMode, timeout_ms: Option<u64>) -> ServeSpec {
    let mode = match (mode, timeout_ms) {
        (ExecutionMode::Direct { workers, .. }, Some(ms)) => ExecutionMode::Direct {
            workers,
            timeout: Some(Duration::from_millis(ms)),
        },
        (m, _) => m,
    };
    fixture_spec("slow.py", "slow", mode)
}

#[derive(Clone)]
pub struct Server {
    pub addr: SocketAddr,
}

pub type Answer = (u16, String, Vec<u8>);

impl Server {
    /// Serve on 127.0.0.1:<ephemeral> and wait until `/readyz` answers 200.
    pub async fn start(spec: ServeSpec, options: ServeOptions) -> Server {
        Server::start_plan(ServicePlan::from(spec), options).await
    }

    /// As [`Server::start`], for several sources in one server.
    pub async fn start_plan(plan: ServicePlan, options: ServeOptions) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            run_rest_plan_on(listener, plan, options).await.unwrap();
        });
        let server = Server { addr };
        for _ in 0..200 {
            if server.get("/readyz", None).await.0 == 200 {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server never became ready");
    }

    pub async fn request(
        &self,
        method: &str,
        path: &str,
        body: &[u8],
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        parse(&raw)
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Answer {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| vec![("Authorization", a)])
            .unwrap_or_default();
        self.request("GET", path, b"", &headers).await
    }

    pub async fn post(&self, name: &str, body: &[u8], headers: &[(&str, &str)]) -> Answer {
        let mut all = vec![("Content-Type", "application/json")];
        all.extend_from_slice(headers);
        self.request("POST", &format!("/capabilities/{name}"), body, &all)
            .await
    }

    /// Send a complete request, wait, then close the connection without reading.
    pub async fn post_and_hang_up(&self, name: &str, body: &[u8], after: Duration) {
        let head = format!(
            "POST /capabilities/{name} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap();
        tokio::time::sleep(after).await;
        drop(stream);
    }

    /// Declare a body length and send none of it.
    pub async fn request_declared_length(&self, path: &str, length: usize) -> Answer {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {length}\r\n\r\n",
            self.addr
        );
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw)).await;
        parse(&raw)
    }

    pub async fn metrics_text(&self) -> String {
        String::from_utf8(self.get("/metrics", None).await.2).unwrap()
    }

    pub async fn metric(&self, name: &str) -> f64 {
        let text = self.metrics_text().await;
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .map(|v| v.parse().unwrap())
            .unwrap_or(f64::NAN)
    }
}

fn parse(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap();
    (status, head, raw[split + 4..].to_vec())
}

/// Our 422 body against the reference's: byte-identical except for our documented addition,
/// `,"errors":[…]` before the closing brace, where each entry is exactly
/// `{"expected","found","path"}` (strings, the path a JSON pointer). Returns whether it
/// matched and whether the addition was there.
pub fn same_with_errors(want: &str, got: &str) -> (bool, bool) {
    use apizr_ir::Value;
    if got == want {
        return (true, false);
    }
    let Some(list) = want
        .strip_suffix('}')
        .and_then(|head| got.strip_prefix(head))
        .and_then(|rest| rest.strip_prefix(",\"errors\":"))
        .and_then(|rest| rest.strip_suffix('}'))
    else {
        return (false, false);
    };
    let Ok(Value::Array(errors)) = apizr_ir::admission::parse_permissive(list.as_bytes()) else {
        return (false, false);
    };
    let entry_ok = |e: &Value| match e {
        Value::Object(map) => {
            map.keys()
                .map(String::as_str)
                .eq(["expected", "found", "path"])
                && map.values().all(|v| matches!(v, Value::Str(_)))
                && matches!(map.get("path"), Some(Value::Str(p)) if p.is_empty() || p.starts_with('/'))
        }
        _ => false,
    };
    let well_formed = !errors.is_empty() && errors.iter().all(entry_ok);
    (well_formed, well_formed)
}

/// Post every recorded vector; returns (passed, failure descriptions). A 422 may carry our
/// `errors` addition ([`same_with_errors`]), and every 422 of these vectors must.
pub async fn run_vectors(server: &Server, mode: &str) -> (usize, Vec<String>) {
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data("vectors.json")).unwrap()).unwrap();
    let mut passed = 0;
    let mut failures = vec![];
    for v in doc["vectors"].as_array().unwrap() {
        let name = v["capability"].as_str().unwrap();
        let body = v["body"].as_str().unwrap();
        let want_status = v[mode]["status"].as_u64().unwrap() as u16;
        let want_body = v[mode]["body"].as_str().unwrap();
        let (status, _, got) = server.post(name, body.as_bytes(), &[]).await;
        let got = String::from_utf8_lossy(&got).into_owned();
        let (same, with_errors) = same_with_errors(want_body, &got);
        // Admission refusals of the generic kind come from the preflight and carry errors too;
        // only a worker-side refusal could lack them, and none of these vectors has one.
        let errors_ok = want_status != 422 || with_errors;
        if status == want_status && same && errors_ok {
            passed += 1;
        } else {
            failures.push(format!(
                "{name} {body:.60}: want {want_status} {want_body:.80}, got {status} {got:.80}"
            ));
        }
    }
    (passed, failures)
}
