//! `GET /docs` in a real browser: headless Chromium loads the page, which fetches
//! `/openapi.json`, renders one form per operation with an example body built from the
//! request schema, and (`#try-all`) submits every form. The dumped DOM must show each
//! operation and a 200 answer for each example. Skipped when Chromium is not installed,
//! unless `CI` is set (then it must run).
#![cfg(feature = "rest")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod serve_rest_support;

use apizr_runtime::serve::ServeOptions;
use serve_rest_support::*;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_page_renders_and_its_forms_work_in_chromium() {
    let Some(browser) = chromium() else {
        apizr_test_support::skip("chromium is not installed (the /docs check needs it)");
        return;
    };
    let server = Server::start(
        fixture_spec("slow.py", "slow", direct(1)),
        ServeOptions::default(),
    )
    .await;
    let url = format!("http://{}/docs#try-all", server.addr);
    let profile = std::env::temp_dir().join(format!("apizr-docs-chromium-{}", std::process::id()));
    let output = tokio::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(
        dom.contains("data-ready=\"1\""),
        "page did not finish rendering:\n{dom:.2000}"
    );
    for op in [
        "/capabilities/bump",
        "/capabilities/nap",
        "/capabilities/pair",
        "/health",
    ] {
        assert!(dom.contains(&format!("data-path=\"{op}\"")), "{op} missing");
    }
    // Every example body is valid for its schema: bump, nap, pair and unique answer 200;
    // boom raises, so its form shows the 500.
    assert_eq!(dom.matches("data-status=\"200\"").count(), 4, "{dom:.4000}");
    assert_eq!(dom.matches("data-status=\"500\"").count(), 1);
}
