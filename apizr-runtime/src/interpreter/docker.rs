//! The docker tiers: the code runs in a fresh container through the Docker Engine API (the
//! oci backend's client): `docker` with the oci backend's controls, each checked in the
//! engine's record before the container starts; `docker_unsafe` with the engine's defaults.
//!
//! Order: engine and image (`Sandbox execution error` when absent) → plan (refusals) →
//! packages (built on the host for the image's interpreter) → create → verify (`docker`) →
//! attach → start → request + marker → streams until the marker or the deadline (a timeout
//! kills the container: every process in it) → workspace archive (successful runs that left
//! files) → stdin closed → the engine removes the container (with its volume) on its own.

pub(crate) mod body;
pub(crate) mod exchange;
pub(crate) mod session;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::artifacts::{self, Caps};
use super::bootstrap::{BootRequest, frame};
use super::capture;
use super::enforcement::{Capability, EnforcementReport, Support, TierSupport, base_features};
use super::local::{Job, filter_exports, package_failure_message, refusal_message};
use super::outcome::{self, Context, Produced};
use super::packages::Target;
use super::policy::CapabilityPolicy;
use super::result::{Artifact, ExecutionResult};
use super::sniff;
use super::tar;
use super::tier::Tier;
use crate::local::seccomp;
use crate::oci::bundle::random_hex;
use crate::oci::container::{ContainerGuard, create};
use crate::oci::engine::Engine;
use crate::oci::engine_kind::EngineCapabilities;
use crate::oci::http::{self, Body};
use crate::oci::image::{self, RuntimeImage};
use crate::oci::oom;
use crate::oci::verify::{self, Expected};

/// The default timeout of a container run without a policy (mellea's).
pub const DOCKER_DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long creating, checking and starting a container may take (not part of the timeout).
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the engine is and which image runs the code.
#[derive(Debug, Clone, Default)]
pub struct DockerConfig {
    /// The engine socket; `None` reads `DOCKER_HOST` (default `/var/run/docker.sock`).
    pub socket: Option<PathBuf>,
    /// The image (full ID and platform), built by `apizr image build` (it has
    /// `/usr/local/bin/python`).
    pub image: Option<RuntimeImage>,
    /// An OCI runtime to ask for (`runsc`).
    pub runtime: Option<String>,
}

#[derive(Debug)]
pub(crate) struct DockerTier {
    config: DockerConfig,
    temp_root: PathBuf,
    engine: OnceLock<Result<(Engine, EngineCapabilities), String>>,
    seccomp: OnceLock<Option<Vec<Vec<u8>>>>,
    interpreter: OnceLock<Result<(String, Vec<String>), String>>,
}

impl DockerTier {
    pub fn new(config: DockerConfig, temp_root: PathBuf) -> Self {
        DockerTier {
            config,
            temp_root,
            engine: OnceLock::new(),
            seccomp: OnceLock::new(),
            interpreter: OnceLock::new(),
        }
    }

    pub(crate) fn engine(&self) -> Result<&(Engine, EngineCapabilities), String> {
        self.engine
            .get_or_init(|| {
                let engine = match &self.config.socket {
                    Some(s) => Engine::connect(s),
                    None => Engine::from_env(),
                }
                .map_err(|e| format!("container engine unavailable: {e}"))?;
                let caps = engine
                    .capabilities()
                    .map_err(|e| format!("container engine unavailable: {e}"))?;
                Ok((engine, caps))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn image(&self) -> Result<&RuntimeImage, String> {
        self.config
            .image
            .as_ref()
            .ok_or_else(|| "no container image configured (an image built by `apizr image build`, e.g. `--image`)".into())
    }

    /// The subprocess-deny programs, when the image runs on this host's architecture.
    fn seccomp_programs(&self) -> Option<&Vec<Vec<u8>>> {
        let image = self.image().ok()?;
        if image.platform.architecture() != host_arch() {
            return None;
        }
        self.seccomp
            .get_or_init(|| seccomp::subprocess_deny_programs().ok())
            .as_ref()
    }

    pub fn support(&self, tier: Tier) -> TierSupport {
        let mut features = base_features(tier);
        let ready = self.engine().and_then(|(_, caps)| {
            self.image()?;
            if tier == Tier::Docker && !caps.usable() {
                return Err(format!("the engine lacks {}", caps.missing.join(", ")));
            }
            Ok(caps.clone())
        });
        let caps = match ready {
            Ok(caps) => caps,
            Err(reason) => {
                for f in [
                    "execute_code",
                    "timeout_enforcement",
                    "sessions",
                    "copy_in",
                    "copy_out",
                    "package_installation",
                ] {
                    features.insert(f, false);
                }
                return TierSupport::unavailable(tier, &reason, features);
            }
        };
        let mut c: BTreeMap<Capability, Support> = BTreeMap::from([
            (
                Capability::Timeout,
                Support::enforced("the container is killed at the deadline (every process in it)"),
            ),
            (
                Capability::StdoutMaxBytes,
                Support::enforced("bounded capture on the host; mellea's truncation marker"),
            ),
            (
                Capability::StderrMaxBytes,
                Support::enforced("bounded capture on the host; mellea's truncation marker"),
            ),
            (
                Capability::ArtifactExportPaths,
                Support::enforced(
                    "new or changed files copied out through the engine's archive API; links never followed; caps",
                ),
            ),
            (
                Capability::Packages,
                Support::enforced(
                    "pip --target for the image's interpreter, built on the host, bound read-only",
                ),
            ),
        ]);
        features.insert("process_tree_kill", true);
        if tier == Tier::DockerUnsafe {
            for cap in [
                Capability::FilesystemReadRoots,
                Capability::FilesystemWriteRoots,
                Capability::NetworkAccess,
                Capability::PackageInstallation,
                Capability::SubprocessExecution,
                Capability::EnvVarAccess,
                Capability::MemoryBytes,
                Capability::Pids,
            ] {
                c.insert(
                    cap,
                    Support::unavailable("docker_unsafe applies no restrictions"),
                );
            }
            features.insert("network_isolation", false);
            features.insert("filesystem_isolation", true);
            return TierSupport {
                tier,
                capabilities: c,
                features,
            };
        }
        let engine = format!("{:?} {}", caps.engine, caps.server_version);
        c.insert(
            Capability::NetworkAccess,
            Support::enforced(format!(
                "NetworkMode none, checked in the engine's record ({engine})"
            )),
        );
        c.insert(
            Capability::FilesystemReadRoots,
            Support::enforced("the image's read-only root plus these host paths bound read-only"),
        );
        c.insert(
            Capability::FilesystemWriteRoots,
            Support::enforced(
                "read-only root; only the workspace volume, /tmp and these host paths are writable",
            ),
        );
        c.insert(Capability::EnvVarAccess, Support::enforced("the container's environment is built from scratch; the bootstrap drops what the engine and image add"));
        c.insert(
            Capability::MemoryBytes,
            Support::enforced("memory = memory+swap limit, checked in the engine's record"),
        );
        c.insert(
            Capability::Pids,
            Support::enforced("pids limit, checked in the engine's record"),
        );
        c.insert(
            Capability::PackageInstallation,
            Support::enforced(
                "no network and a read-only root: nothing can be installed by the code",
            ),
        );
        c.insert(
            Capability::SubprocessExecution,
            match self.seccomp_programs() {
                Some(_) => Support::enforced("seccomp-bpf installed before the code: fork, vfork, execve, execveat and non-thread clone fail"),
                None => Support::unavailable("the image's architecture differs from the host's (the seccomp programs are compiled for the host)"),
            },
        );
        features.insert("network_isolation", true);
        features.insert("filesystem_isolation", true);
        TierSupport {
            tier,
            capabilities: c,
            features,
        }
    }

    pub fn run(&self, tier: Tier, job: &Job<'_>) -> ExecutionResult {
        let prepared = match self.prepare(tier, job) {
            Ok(p) => p,
            Err(result) => return *result,
        };
        let Prepared {
            ctx,
            engine,
            image,
            bundle,
            request,
            timeout,
        } = prepared;
        let started = match self.start(
            tier,
            job.policy,
            engine,
            image,
            bundle.path(),
            Purpose::Run(timeout),
        ) {
            Ok(s) => s,
            Err(message) => {
                return outcome::skipped(ctx, format!("Sandbox execution error: {message}"));
            }
        };
        let produced = self.exchange(started, request, job, timeout);
        drop(bundle);
        match produced {
            Ok(p) => outcome::finish(ctx, p),
            Err(message) => outcome::skipped(ctx, format!("Sandbox execution error: {message}")),
        }
    }

    /// Everything before the container: engine and image, refusals, packages, the request.
    /// A run that cannot go on is the result that says why.
    pub(crate) fn prepare<'a>(
        &'a self,
        tier: Tier,
        job: &Job<'a>,
    ) -> Result<Prepared<'a>, Box<ExecutionResult>> {
        let timeout = job
            .policy
            .map_or(DOCKER_DEFAULT_TIMEOUT, CapabilityPolicy::timeout_duration);
        let support = self.support(tier);
        let mut ctx = Context {
            tier,
            policy: job.policy,
            enforcement: EnforcementReport::assess(&support, job.policy),
            packages: None,
            started: job.started,
            timeout: timeout.as_secs_f64(),
        };
        let skip = |ctx, message: String| Box::new(outcome::skipped(ctx, message));
        let (engine, image) = match self.engine().and_then(|(e, _)| Ok((e, self.image()?))) {
            Ok(pair) => pair,
            Err(e) => return Err(skip(ctx, format!("Sandbox execution error: {e}"))),
        };
        if !ctx.enforcement.refused.is_empty() {
            let message = refusal_message(&ctx.enforcement);
            return Err(skip(ctx, message));
        }
        let strict = job.policy.is_some_and(|p| !p.subprocess_execution) && tier == Tier::Docker;
        if let Err(e) = image::check_image(engine, image, false)
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
        {
            return Err(skip(ctx, format!("Sandbox execution error: image: {e}")));
        }
        let mut site_dirs = Vec::new();
        let bundle = if job.packages.is_empty() {
            match artifacts::private_dir(&self.temp_root, &super::session::sweep::run_prefix()) {
                Ok(d) => Bundle::Empty(Removed(d)),
                Err(e) => {
                    return Err(skip(ctx, format!("Sandbox execution error: bundle: {e}")));
                }
            }
        } else {
            let target = match self.interpreter(engine, image) {
                Ok((version, platforms)) => Target::Image {
                    image: image.image.clone(),
                    version: version.clone(),
                    platforms: platforms.clone(),
                },
                Err(e) => {
                    return Err(skip(ctx, format!("Package installation failed: {e}")));
                }
            };
            match job.store.ensure(&target, job.packages) {
                Ok(ready) => {
                    site_dirs.push("/bundle".to_string());
                    ctx.packages = Some(ready.report);
                    Bundle::Packages(ready.root.clone())
                }
                Err(report) => {
                    let message = package_failure_message(&report);
                    ctx.packages = Some(report);
                    return Err(skip(ctx, message));
                }
            }
        };
        let request = BootRequest {
            code: job.code.to_string(),
            allowed: job.allowed.map(<[String]>::to_vec),
            seccomp: if strict {
                self.seccomp_programs().cloned()
            } else {
                None
            },
            site_dirs,
            env_keep: (tier == Tier::Docker).then(|| env_names(job.policy)),
            hold: true,
            session: false,
        };
        Ok(Prepared {
            ctx,
            engine,
            image,
            bundle,
            request,
            timeout,
        })
    }

    /// Create, check and start a container; it is removed when the returned guard drops.
    pub(crate) fn start(
        &self,
        tier: Tier,
        policy: Option<&CapabilityPolicy>,
        engine: &Engine,
        image: &RuntimeImage,
        bundle: &Path,
        purpose: Purpose,
    ) -> Result<Started, String> {
        let (lifetime, session) = match purpose {
            Purpose::Run(timeout) => (timeout, false),
            Purpose::Session(lifetime) => (lifetime, true),
        };
        let setup = Instant::now() + SETUP_TIMEOUT;
        let name = format!("apizr-interp-{}", random_hex().map_err(|e| e.to_string())?);
        let guard = ContainerGuard::new(engine.clone(), name.clone());
        let inputs = body::Inputs {
            image: &image.image,
            bundle,
            env: container_env(tier, policy),
            expires: unix_now() + (SETUP_TIMEOUT + lifetime).as_secs() + 60,
            runtime: self.config.runtime.as_deref(),
            session,
        };
        let body = body::create_body(tier, policy, &inputs);
        let id = create(engine, &name, image.platform.as_str(), &body, setup)
            .map_err(|e| format!("create: {e}"))?;
        if tier == Tier::Docker {
            let (_, caps) = self.engine()?;
            let mut doc =
                verify::inspect(engine, &name, setup).map_err(|e| format!("inspect: {e}"))?;
            if policy.is_some_and(|p| p.network_access) {
                // Network was asked for: every other control is still compared.
                doc["HostConfig"]["NetworkMode"] = serde_json::json!("none");
            }
            verify::check(&doc, &Expected::from_create_body(&body), caps, bundle)
                .map_err(|r| r.to_string())?;
        }
        let path = engine.path(&format!(
            "/containers/{}/attach?stream=1&stdin=1&stdout=1&stderr=1",
            http::encode_query(&name)
        ));
        let (reader, writer) = http::upgrade(engine.socket(), "POST", &path, setup)
            .map_err(|e| format!("attach: {e}"))?;
        let resp = engine
            .call(
                "POST",
                &format!("/containers/{name}/start"),
                Body::None,
                setup,
            )
            .map_err(|e| format!("start: {e}"))?;
        if !resp.is_success() && resp.status != 304 {
            return Err(format!("start: {} {}", resp.status, resp.message()));
        }
        Ok(Started {
            guard,
            id,
            engine: engine.clone(),
            attached: exchange::Attached { reader, writer },
        })
    }

    fn exchange(
        &self,
        mut started: Started,
        request: BootRequest,
        job: &Job<'_>,
        timeout: Duration,
    ) -> Result<Produced, String> {
        let nonce = random_hex().map_err(|e| e.to_string())?;
        let mut input = request.frame();
        input.extend_from_slice(&frame(&exchange::marker(&nonce)));
        let keep = job
            .policy
            .map_or((capture::keep_for(None), capture::keep_for(None)), |p| {
                (
                    capture::keep_for(p.stdout_max_bytes),
                    capture::keep_for(p.stderr_max_bytes),
                )
            });
        let deadline = Instant::now() + timeout;
        let streams = started.attached.run(&input, &nonce, deadline, keep);
        // The marker's signal and the container cgroup's OOM counter; after a SIGKILL the
        // kernel log (by container ID) is the second record of an OOM kill.
        let oom_killed = streams.oom_killed
            || (streams.signal == Some(9) && oom::kernel_logged_oom(&started.id));
        let mut produced = Produced {
            stdout: streams.stdout,
            stderr: streams.stderr,
            timed_out: streams.timed_out,
            exit_signal: streams.signal,
            oom_killed,
            ..Produced::default()
        };
        if streams.timed_out {
            let _ = started.kill();
            return Ok(produced);
        }
        if let Some(error) = streams.error {
            return Err(error);
        }
        if streams.status == Some(0) && !streams.files {
            // Nothing in the workspace: no archive round trip.
            if let Some(dest) = job.working_directory {
                std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
                produced.working_directory = Some(dest.to_path_buf());
            }
        } else if streams.status == Some(0) {
            let caps = Caps::for_policy(job.policy);
            let dest = job.working_directory.map(Path::to_path_buf);
            let (found, truncated, dir) = started.copy_out_new(
                &self.temp_root,
                dest.as_deref(),
                job.policy,
                caps,
                &mut BTreeMap::new(),
                u64::MAX,
            )?;
            produced.artifacts = found;
            produced.artifacts_truncated = truncated;
            produced.working_directory = dir;
        }
        started.release();
        produced.exit_code = streams.status;
        Ok(produced)
    }

    /// The image interpreter's `major.minor` and pip platform tags, asked once per image.
    fn interpreter(
        &self,
        engine: &Engine,
        image: &RuntimeImage,
    ) -> Result<&(String, Vec<String>), String> {
        self.interpreter
            .get_or_init(|| {
                let empty = artifacts::private_dir(&self.temp_root, &super::session::sweep::run_prefix()).map_err(|e| e.to_string())?;
                let empty = Removed(empty);
                let code = "import sys,platform\nv='%d.%d'%sys.version_info[:2]\nl=platform.libc_ver()[1]\nm=platform.machine()\nprint(v, l, m)\n";
                let job_policy = CapabilityPolicy::default();
                let started = self.start(Tier::Docker, Some(&job_policy), engine, image, &empty.0, Purpose::Run(Duration::from_secs(30)))?;
                let mut started = started;
                let req = BootRequest { code: code.into(), hold: true, env_keep: Some(vec![]), ..BootRequest::default() };
                let nonce = random_hex().map_err(|e| e.to_string())?;
                let mut input = req.frame();
                input.extend_from_slice(&frame(&exchange::marker(&nonce)));
                let streams = started.attached.run(&input, &nonce, Instant::now() + Duration::from_secs(30), (4096, 4096));
                let _ = started.kill();
                let text = String::from_utf8_lossy(&streams.stdout.head).into_owned();
                let mut parts = text.split_whitespace();
                let (Some(version), Some(libc), Some(machine)) = (parts.next(), parts.next(), parts.next()) else {
                    return Err(format!("could not ask the image's interpreter for its version: {text:?}"));
                };
                Ok((version.to_string(), platform_tags(libc, machine)))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// pip platform tags a glibc `libc` on `machine` accepts (manylinux2014 and every
/// `manylinux_2_N` up to the image's glibc).
fn platform_tags(libc: &str, machine: &str) -> Vec<String> {
    let minor = libc
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or(17);
    let mut tags: Vec<String> = (17..=minor.max(17))
        .rev()
        .map(|n| format!("manylinux_2_{n}_{machine}"))
        .collect();
    tags.push(format!("manylinux2014_{machine}"));
    tags
}

/// A started container: removed (with its workspace volume) when dropped, or by the engine
/// itself once released.
pub(crate) struct Started {
    pub guard: ContainerGuard,
    /// The container's full ID.
    pub id: String,
    pub engine: Engine,
    pub attached: exchange::Attached,
}

impl Started {
    pub fn name(&self) -> &str {
        self.guard.name()
    }

    /// Kill every process in the container now.
    pub fn kill(&mut self) -> Result<(), String> {
        let path = format!(
            "/containers/{}/kill?signal=KILL",
            http::encode_query(self.name())
        );
        let resp = self
            .engine
            .call(
                "POST",
                &path,
                Body::None,
                Instant::now() + Duration::from_secs(10),
            )
            .map_err(|e| e.to_string())?;
        if resp.is_success() || resp.status == 409 {
            Ok(())
        } else {
            Err(resp.message())
        }
    }

    /// After the marker: close stdin, so the bootstrap (the container's only process left)
    /// exits, and the engine removes the container and its volume (`AutoRemove`), off the
    /// result path. Should the engine fail to, the expiry label lets a sweep reclaim it.
    pub fn release(self) {
        let Started {
            guard, attached, ..
        } = self;
        guard.leave_to_engine();
        attached.release();
    }

    /// The engine's archive of the workspace (a tar stream; links are link entries).
    pub fn archive(&self) -> Result<http::BodyReader, String> {
        let path = self.engine.path(&format!(
            "/containers/{}/archive?path={}",
            http::encode_query(self.name()),
            http::encode_query(body::WORKSPACE)
        ));
        let (status, reader) = http::request_streaming(
            self.engine.socket(),
            "GET",
            &path,
            Instant::now() + Duration::from_secs(120),
        )
        .map_err(|e| format!("archive: {e}"))?;
        if status != 200 {
            return Err(format!("archive: the engine answered {status}"));
        }
        Ok(reader)
    }

    /// Copy the workspace's new or changed regular files out through the engine into `dest`
    /// (or a fresh private directory). A file in `seen` with the same size and mtime (whole
    /// seconds in the archive) is skipped unless its mtime is `recent` or later (it may have
    /// changed within that second); an extracted file with the same sha256 as in `seen` is
    /// not reported.
    pub fn copy_out_new(
        &self,
        temp_root: &Path,
        dest: Option<&Path>,
        policy: Option<&CapabilityPolicy>,
        caps: Caps,
        seen: &mut BTreeMap<String, (u64, u64, String)>,
        recent: u64,
    ) -> Result<(Vec<Artifact>, bool, Option<PathBuf>), String> {
        let reader = self.archive()?;
        let (dir, fresh) = match dest {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
                (d.to_path_buf(), false)
            }
            None => (
                artifacts::private_dir(temp_root, "apizr-artifacts").map_err(|e| e.to_string())?,
                true,
            ),
        };
        let extraction = tar::extract(reader, "workspace", &dir, caps, |name, size, mtime| {
            filter_exports(vec![name], policy, Path::new(body::WORKSPACE)).len() == 1
                && (mtime >= recent
                    || seen
                        .get(name)
                        .is_none_or(|(s, m, _)| (*s, *m) != (size, mtime)))
        });
        let extraction = match extraction {
            Ok(x) => x,
            Err(e) => {
                if fresh {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                return Err(format!("archive: {e}"));
            }
        };
        let mut out = Vec::new();
        for f in extraction.files {
            let changed = seen.get(&f.name).is_none_or(|(_, _, sha)| *sha != f.sha256);
            seen.insert(f.name.clone(), (f.size, f.mtime, f.sha256.clone()));
            if !changed {
                let _ = std::fs::remove_file(&f.path);
                continue;
            }
            out.push(Artifact {
                content_type: sniff::content_type(&f.head, &f.name),
                path: f.path,
                name: f.name,
                size_bytes: f.size,
                sha256: f.sha256,
            });
        }
        if out.is_empty() && fresh {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok((out, extraction.truncated, None));
        }
        Ok((out, extraction.truncated, Some(dir)))
    }
}

/// The names the bootstrap keeps in a `docker` container.
fn env_names(policy: Option<&CapabilityPolicy>) -> Vec<String> {
    let mut names: Vec<String> = ["MPLBACKEND", "MPLCONFIGDIR"].map(String::from).to_vec();
    if policy.is_none_or(|p| p.env_var_access) {
        names.extend(["PATH", "HOME", "LANG", "TMPDIR"].map(String::from));
        names.extend(policy.map(|p| p.env.clone()).unwrap_or_default());
    }
    names
}

/// `NAME=value` for the container: the fixed set, the passed-through host variables.
fn container_env(tier: Tier, policy: Option<&CapabilityPolicy>) -> Vec<String> {
    let mut env = vec![
        "MPLBACKEND=Agg".to_string(),
        "MPLCONFIGDIR=/tmp/matplotlib".to_string(),
    ];
    if tier == Tier::DockerUnsafe || policy.is_none_or(|p| p.env_var_access) {
        env.extend([
            "PATH=/usr/local/bin:/usr/bin:/bin".to_string(),
            format!("HOME={}", body::WORKSPACE),
            "LANG=C.UTF-8".to_string(),
            "TMPDIR=/tmp".to_string(),
        ]);
        for name in policy.map(|p| p.env.as_slice()).unwrap_or_default() {
            if let Some(value) = std::env::var_os(name) {
                env.push(format!("{name}={}", value.to_string_lossy()));
            }
        }
    }
    env
}

fn host_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// What a container is for: one run (its timeout), or a session (kept at most this long by a
/// sweep that cannot judge its owner).
pub(crate) enum Purpose {
    Run(Duration),
    Session(Duration),
}

/// What a container is about to run with (see [`DockerTier::prepare`]).
pub(crate) struct Prepared<'a> {
    pub ctx: Context<'a>,
    pub engine: &'a Engine,
    pub image: &'a RuntimeImage,
    pub bundle: Bundle,
    pub request: BootRequest,
    pub timeout: Duration,
}

/// The directory bound at `/bundle`: the package environment, or an empty directory removed
/// with the run.
pub(crate) enum Bundle {
    Packages(PathBuf),
    Empty(Removed),
}

impl Bundle {
    pub fn path(&self) -> &Path {
        match self {
            Bundle::Packages(p) => p,
            Bundle::Empty(d) => &d.0,
        }
    }
}

/// A directory removed on drop.
pub(crate) struct Removed(pub PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
