//! Container-test helpers: the worker image on whatever engine `DOCKER_HOST` names (Docker or
//! Podman), and a proxy that stands in front of the real engine and lies the way engines do.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use apizr_runtime::oci::build::{BuildSource, build_image};
use apizr_runtime::oci::engine::socket_from_host;
use apizr_runtime::oci::{Engine, RuntimeImage};
use apizr_runtime::worker::WORKER_SOURCE;

/// The worker image, or None (skip) outside CI when there is no engine or base image.
pub fn image() -> Option<&'static RuntimeImage> {
    static IMAGE: OnceLock<Result<RuntimeImage, String>> = OnceLock::new();
    let built = IMAGE.get_or_init(|| {
        let engine = Engine::from_env().map_err(|e| format!("no container engine: {e}"))?;
        worker_image_on(&engine)
    });
    match built {
        Ok(image) => Some(image),
        Err(why) => {
            apizr_test_support::skip(format!("{why} (run scripts/ci-docker-setup)"));
            None
        }
    }
}

/// The prepared worker image if `engine` has it, else one built there (tagged, so later test
/// processes reuse it while worker and base are unchanged) from the offline base image.
pub fn worker_image_on(engine: &Engine) -> Result<RuntimeImage, String> {
    if let Some(image) = prepared_image(engine) {
        return Ok(image);
    }
    let base = std::env::var("APIZR_BASE_IMAGE_TAG")
        .unwrap_or_else(|_| "apizr-ci/python-base:bookworm-stdlib".into());
    let mut quiet = |_: &str| {};
    let tag = Some("apizr-test/worker:current");
    build_image(engine, BuildSource::Base(&base), tag, &mut quiet)
        .map_err(|e| format!("cannot build the worker image from {base}: {e}"))
}

/// Podman's gVisor service that `scripts/ci-podman-setup` starts (`APIZR_PODMAN_RUNSC_SOCKET`,
/// default `/run/apizr-podman/podman-runsc.sock`) and the worker image on it; None (skip)
/// outside CI when it is not running.
pub fn podman_runsc() -> Option<(PathBuf, RuntimeImage)> {
    let socket = std::env::var_os("APIZR_PODMAN_RUNSC_SOCKET").map_or_else(
        || PathBuf::from("/run/apizr-podman/podman-runsc.sock"),
        PathBuf::from,
    );
    let found = Engine::connect(&socket)
        .map_err(|e| format!("no Podman gVisor service at {}: {e}", socket.display()))
        .and_then(|engine| worker_image_on(&engine));
    match found {
        Ok(image) => Some((socket, image)),
        Err(why) => {
            apizr_test_support::skip(format!("{why} (run scripts/ci-podman-setup)"));
            None
        }
    }
}

/// The image `scripts/ci-docker-setup` built (`APIZR_WORKER_IMAGE_JSON`, default
/// `target/apizr-ci/worker-image.json`), if this engine has it and it carries the current
/// worker. `scripts/ci-podman-setup` loads the same image (same ID) into Podman.
fn prepared_image(engine: &Engine) -> Option<RuntimeImage> {
    let path = std::env::var_os("APIZR_WORKER_IMAGE_JSON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/apizr-ci/worker-image.json")
        });
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let image = RuntimeImage::parse(doc["image"].as_str()?, doc["platform"].as_str()?).ok()?;
    let inspected = engine.image_inspect(&image.image).ok()??;
    let want = apizr_runtime::ir::Digest::sha256(WORKER_SOURCE.as_bytes()).prefixed();
    let label = &inspected["Config"]["Labels"]["org.apizr.worker.digest"];
    (label.as_str() == Some(want.as_str())).then_some(image)
}

/// How the proxy lies.
#[derive(Clone, Copy)]
pub struct Lies {
    /// Applied to every `POST …/containers/create` body before the engine sees it: an engine
    /// that accepts a setting and silently does not apply it.
    pub create: fn(&mut serde_json::Value),
    /// Applied to every container inspect answer: an engine whose record of the container
    /// says what was asked, not what it did.
    pub inspect: fn(&mut serde_json::Value),
    /// Answer every container `DELETE` with a 500 (an engine that cannot remove).
    pub refuse_deletes: bool,
    /// Answer every container create with a 500 (an engine that cannot create).
    pub refuse_creates: bool,
}

impl Lies {
    pub fn none() -> Lies {
        Lies {
            create: |_| {},
            inspect: |_| {},
            refuse_deletes: false,
            refuse_creates: false,
        }
    }
}

/// A unix socket in front of the real engine (`DOCKER_HOST`) that rewrites requests per
/// [`Lies`] and records every request line. One request per connection, as our client sends;
/// upgraded streams (attach) are forwarded as raw bytes.
pub struct LyingEngine {
    pub socket: PathBuf,
    dir: PathBuf,
    requests: Arc<Mutex<Vec<String>>>,
}

impl LyingEngine {
    pub fn start(tag: &str, lies: Lies) -> LyingEngine {
        let upstream = socket_from_host(std::env::var("DOCKER_HOST").ok().as_deref()).unwrap();
        let dir = std::env::temp_dir().join(format!("apizr-lying-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("engine.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let (upstream, log) = (upstream.clone(), Arc::clone(&log));
                std::thread::spawn(move || serve(client, &upstream, lies, &log));
            }
        });
        LyingEngine {
            socket,
            dir,
            requests,
        }
    }

    /// `METHOD PATH` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for LyingEngine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn serve(client: UnixStream, upstream: &Path, lies: Lies, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut head = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
            continue;
        }
        let end = line == "\r\n";
        head.push(line);
        if end {
            break;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let request_line = head[0].trim_end().to_string();
    log.lock().unwrap().push(request_line.clone());
    let mut parts = request_line.split(' ');
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut client = client;
    let refused = (lies.refuse_deletes && method == "DELETE" && path.contains("/containers/"))
        || (lies.refuse_creates && method == "POST" && path.contains("/containers/create"));
    if refused {
        let msg = br#"{"message":"refused by the test proxy"}"#;
        let _ = write!(
            client,
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            msg.len()
        );
        let _ = client.write_all(msg);
        return;
    }
    if method == "POST" && path.contains("/containers/create") {
        let mut doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
        (lies.create)(&mut doc);
        body = serde_json::to_vec(&doc).unwrap();
    }
    let Ok(mut server) = UnixStream::connect(upstream) else {
        return;
    };
    let path_only = path.split('?').next().unwrap_or(path);
    let inspect = method == "GET"
        && path_only.contains("/containers/")
        && path_only.ends_with("/json")
        && !path_only.ends_with("/containers/json");
    if inspect {
        // HTTP/1.0: the engine answers without chunking and closes, so the body is whole.
        head[0] = head[0].replace("HTTP/1.1", "HTTP/1.0");
        server.write_all(head.concat().as_bytes()).unwrap();
        let mut answer = Vec::new();
        let _ = server.read_to_end(&mut answer);
        let split = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let (status_line, rest) = answer.split_at(split);
        let status_line = String::from_utf8_lossy(status_line);
        let mut doc: serde_json::Value = serde_json::from_slice(rest).unwrap_or_default();
        if status_line.contains(" 200 ") {
            (lies.inspect)(&mut doc);
        }
        let bytes = serde_json::to_vec(&doc).unwrap();
        let first = status_line.lines().next().unwrap_or("HTTP/1.0 500 x");
        let _ = write!(
            client,
            "{first}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            bytes.len()
        );
        let _ = client.write_all(&bytes);
        return;
    }
    let blank = head.pop().unwrap_or_default();
    let mut out = head.concat();
    if !body.is_empty() || length > 0 {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str(&blank);
    server.write_all(out.as_bytes()).unwrap();
    server.write_all(&body).unwrap();
    // Bytes the reader already buffered belong to the request stream (attach: stdin).
    let buffered = reader.buffer().to_vec();
    server.write_all(&buffered).unwrap();
    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let up = std::thread::spawn(move || pump(reader.into_inner(), s2));
    pump(server, c2);
    let _ = up.join();
}

fn pump(mut from: UnixStream, mut to: UnixStream) {
    let mut buf = [0u8; 16384];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
