//! A `apizr serve rest` child process for end-to-end tests, shared by `serve.rs` and
//! `serve_oci.rs`: a free loopback port, plain HTTP/1.1 requests, and a stop on drop (SIGTERM,
//! so that a server removes what it holds, as it would under a service manager; SIGKILL if it
//! does not exit within 30 s).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server child process, stopped on drop.
pub struct Served {
    pub child: Child,
    pub port: u16,
    /// Read timeout per request (container calls need more than local ones).
    pub io_timeout: Duration,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.terminate(Duration::from_secs(30));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// SIGTERM, then wait up to `within` for the exit; `true` if the server exited.
    pub fn terminate(&mut self, within: Duration) -> bool {
        if let Ok(Some(_)) = self.child.try_wait() {
            // Already reaped: its pid may name another process by now.
            return true;
        }
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        let until = Instant::now() + within;
        while sent && Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Served {
    /// Start `apizr serve rest ARGS --port P` with extra environment variables and wait until
    /// `/readyz` answers 200 (panics after `ready_within`).
    pub fn spawn_ready(
        args: &[&str],
        envs: &[(&str, &str)],
        ready_within: Duration,
        io_timeout: Duration,
    ) -> Served {
        Served::spawn_ready_logging(args, envs, ready_within, io_timeout, Stdio::null())
    }

    /// As [`Served::spawn_ready`], with the server's stderr sent to `stderr`.
    pub fn spawn_ready_logging(
        args: &[&str],
        envs: &[(&str, &str)],
        ready_within: Duration,
        io_timeout: Duration,
        stderr: Stdio,
    ) -> Served {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_apizr"))
            .args(["serve", "rest"])
            .args(args)
            .args(["--port", &port.to_string()])
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let served = Served {
            child,
            port,
            io_timeout,
        };
        let started = Instant::now();
        while started.elapsed() < ready_within {
            if served
                .try_request("GET", "/readyz", "")
                .is_some_and(|(s, _)| s == 200)
            {
                return served;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("server did not become ready");
    }

    /// One request on a fresh connection: `(status, body)`, or None if the exchange failed.
    pub fn try_request(&self, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(self.io_timeout)).ok()?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .ok()?;
        let mut raw = String::new();
        stream.read_to_string(&mut raw).ok()?;
        let (head, body) = raw.split_once("\r\n\r\n")?;
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        Some((status, body.to_string()))
    }

    /// `POST /capabilities/<name>`.
    pub fn post(&self, name: &str, body: &str) -> (u16, String) {
        self.try_request("POST", &format!("/capabilities/{name}"), body)
            .unwrap()
    }
}

impl Served {
    /// The value of an unlabelled series on `/metrics`.
    pub fn metric(&self, name: &str) -> Option<u64> {
        let (_, text) = self.try_request("GET", "/metrics", "")?;
        text.lines().find_map(|line| {
            let (series, value) = line.split_once(' ')?;
            (series == name).then(|| value.trim().parse().ok())?
        })
    }

    /// Wait (up to 90 s) until the series `name` satisfies `check`.
    pub fn wait_metric(&self, name: &str, check: impl Fn(u64) -> bool) {
        let until = Instant::now() + Duration::from_secs(90);
        while !self.metric(name).is_some_and(&check) {
            assert!(Instant::now() < until, "{name} = {:?}", self.metric(name));
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
