//! `apizr serve interpreter --http --session` driven by the official `mcp` client: each MCP
//! session is a client with its own interpreter session, the server-wide session limit
//! refuses one more and frees a slot when a client leaves (`DELETE /mcp`), a request without
//! an MCP session (protocol 2026-07-28) runs fresh in a pre-started process (its pool's
//! counters on `/metrics`), and nothing is left once the server stops.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::scratch;

const CLIENTS: &str = r#"
import anyio, json, sys, httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
url = sys.argv[1]
out = {}

async def call(client, code):
    r = await client.call_tool("python", {"code": code})
    s = r.model_dump(mode="json", by_alias=True, exclude_none=True).get("structuredContent", {})
    got = {k: s.get(k) for k in ("success", "stdout", "skipped", "skip_message")}
    got["process"] = (s.get("enforcement") or {}).get("process")
    return got

def connect(http, mode="legacy"):
    return Client(streamable_http_client(url, http_client=http), mode=mode)

async def main():
    async with httpx2.AsyncClient(timeout=60) as h:
        async with connect(h) as a:
            async with connect(h) as b:
                out["a_set"] = await call(a, "x = 'a'")
                out["b_set"] = await call(b, "x = 'b'")
                out["a_get"] = await call(a, "print(x)")
                out["b_get"] = await call(b, "print(x)")
                async with connect(h) as c:
                    out["c_refused"] = await call(c, "print(1)")
            # b has left: its session is closed and one more client may open one.
            for attempt in range(40):
                async with connect(h) as d:
                    out["d"] = await call(d, "print('d')")
                if not out["d"]["skipped"]:
                    break
                await anyio.sleep(0.25)
            out["a_again"] = await call(a, "print(x)")
        async with connect(h, "auto") as m:
            out["protocol"] = m.protocol_version
            out["m_set"] = await call(m, "y = 1")
            out["m_get"] = await call(m, "print(y)")
        out["metrics"] = (await h.get(url.replace("/mcp", "/metrics"))).text
    print(json.dumps(out))

anyio.run(main)
"#;

#[test]
fn serve_interpreter_over_http_gives_each_client_its_own_session() {
    let Some(python) = apizr_test_support::mcp_client_python() else {
        return;
    };
    let dir = scratch("http");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_apizr"))
        .args(["serve", "interpreter", "--http", "--port", "0", "--session"])
        .args(["--max-sessions", "2"])
        .env("TMPDIR", &tmp)
        // One-shot runs wait for a pre-started process (never cold): the counts are exact.
        .env("APIZR_INTERPRETER_PRESTART_WAIT_MS", "30000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("the server exited").unwrap();
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_string();
        }
    };
    let out = Command::new(python)
        .args(["-c", CLIENTS, &url])
        .output()
        .unwrap();
    let stop = Command::new("kill")
        .arg(server.id().to_string())
        .status()
        .unwrap();
    assert!(stop.success());
    let status = server.wait().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Two clients, two sessions: each sees its own `x`.
    assert_eq!(t["a_set"]["success"], true, "{t}");
    assert_eq!(t["a_get"]["stdout"], "a", "{t}");
    assert_eq!(t["b_get"]["stdout"], "b", "{t}");
    // A third one at once is over the limit and told so.
    assert_eq!(t["c_refused"]["skipped"], true, "{t}");
    assert!(
        t["c_refused"]["skip_message"]
            .as_str()
            .unwrap()
            .contains("2 sessions are open"),
        "{t}"
    );
    // Once b left, a new client gets a session; a kept its own all along.
    assert_eq!(t["d"]["stdout"], "d", "{t}");
    assert_eq!(t["a_again"]["stdout"], "a", "{t}");
    // Protocol 2026-07-28 has no MCP session: every call is a fresh run.
    assert_eq!(t["protocol"], "2026-07-28", "{t}");
    assert_eq!(t["m_set"]["success"], true, "{t}");
    assert_eq!(t["m_get"]["success"], false, "{t}");
    // Fresh runs come from the pre-start pool; session calls never do.
    assert_eq!(
        (
            t["m_set"]["process"].as_str(),
            t["m_get"]["process"].as_str()
        ),
        (Some("prestarted"), Some("prestarted")),
        "{t}"
    );
    assert_eq!(t["a_get"]["process"], "cold", "{t}");
    let metrics = t["metrics"].as_str().unwrap();
    for series in [
        "apizr_interpreter_pool_size 2",
        "apizr_interpreter_pool_hits_total 2",
        "apizr_interpreter_pool_misses_total 0",
    ] {
        assert!(metrics.lines().any(|l| l == series), "{series}: {metrics}");
    }
    // SIGTERM: the server stops cleanly and closes every session it opened.
    assert!(status.success() || status.code().is_some(), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
