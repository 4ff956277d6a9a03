//! The Rust crate around the contract files: `Cargo.toml`, `src/main.rs`, `Dockerfile`,
//! `.dockerignore`, `k8s/*.yaml` and `README.md`, rendered from `templates/generate/`.
//!
//! Templates are askama (compiled in, type-checked) with the text escaper configured in
//! `apizr-cli/askama.toml`: generated code is never HTML-escaped. All values that need
//! quoting for their target language (TOML strings, shell single quotes) are quoted here in
//! the view model, so templates stay plain text.

use apizr_ir::Value;
use apizr_ir::readiness::{TypeKind, TypeSpec};
use askama::Template;

use apizr_macros_backend::bindings::{self as writer, BindingMode, BindingSource, WrittenBindings};

use crate::deploy::{self, Autoscaling, ExecutionKind, PORT};
use crate::model::{Planned, RuntimeDependency, Transport};
use crate::{mcp, openapi};

const APIZR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// One capability as the README shows it.
pub struct CapabilityView {
    pub id: String,
    pub route: String,
    pub tool: String,
    /// Example arguments (canonical JSON, single-quote safe for the shell).
    pub example: String,
}

/// The values every project template sees.
pub struct ProjectView {
    pub package: String,
    pub module: String,
    /// Several modules of a package: every selected module (empty for one source).
    pub modules: Vec<String>,
    /// The module, or the modules, in backquotes (`` `a.x`, `b.y` ``).
    pub module_list: String,
    pub transport: &'static str,
    pub transport_title: &'static str,
    pub transport_variant: &'static str,
    pub manifest: &'static str,
    /// `openapi.json` or `mcp-tools.json`.
    pub interface_file: &'static str,
    /// `source/<module path>.py`, the file the bindings bind.
    pub bound_file: String,
    pub mode: &'static str,
    pub governed: bool,
    /// Governed v2: calls run in containers.
    pub oci: bool,
    /// Governed v1: the project ships `seccomp.json` (the launcher needs namespaces), used by
    /// the README's `docker run` line and as the Deployment's `Localhost` profile.
    pub seccomp: bool,
    /// The `Localhost` profile's path under the kubelet's seccomp root.
    pub seccomp_localhost: String,
    pub apizr_version: &'static str,
    pub runtime_dependency: String,
    /// The `[patch.crates-io]` line for a local checkout (empty: none).
    pub runtime_patch: String,
    pub capability_count: usize,
    pub capabilities: Vec<CapabilityView>,
    pub bundle_files: Vec<String>,
    pub port: u16,
    /// The image reference `<name>:<tag>` the Dockerfile, README and `k8s/` agree on.
    pub image: String,
    /// Its tag: the first hex digits of the transport manifest's sha256.
    pub image_tag: String,
    /// `--scale-to-zero`: a Knative Service instead of Deployment + Service + HPA.
    pub knative: bool,
    /// The container's entrypoint and health check, in Dockerfile exec form.
    pub entrypoint: String,
    pub healthcheck: String,
    pub health_interval: u64,
    pub health_timeout: u64,
    pub health_start: u64,
    pub health_retries: u64,
    pub user: &'static str,
    pub bundle_dir: &'static str,
    /// The image label holding the bundle digest, and its value (`sha256:<hex>`).
    pub bundle_label: &'static str,
    pub bundle_digest: String,
    /// A module of a package: how many of its files the bundle holds (0: a single file).
    pub package_files: usize,
    /// The package's third-party requirements (installed into [`deploy::VENV_DIR`]).
    pub requirements: Vec<String>,
    /// `--wheelhouse`: the image installs them offline from `python/wheelhouse/`.
    pub wheelhouse: bool,
    pub venv_dir: &'static str,
    pub python_dir: &'static str,
    /// The workers' interpreter (`APIZR_PYTHON`): the virtual environment's when there are
    /// requirements, else the base image's `python3`.
    pub python: String,
    /// `main.rs` serves `#[apizr_runtime::python]` bindings (`None`: it loads the contract
    /// files at start-up; see [`bindings`]).
    pub bindings: Option<WrittenBindings>,
}

macro_rules! project_template {
    ($name:ident, $path:literal) => {
        #[derive(Template)]
        #[template(path = $path)]
        struct $name<'a> {
            view: &'a ProjectView,
        }
        impl std::ops::Deref for $name<'_> {
            type Target = ProjectView;
            fn deref(&self) -> &ProjectView {
                self.view
            }
        }
    };
}

project_template!(CargoToml, "generate/cargo.toml.j2");
project_template!(MainRs, "generate/main.rs.j2");
project_template!(Dockerfile, "generate/dockerfile.j2");
project_template!(DockerIgnore, "generate/dockerignore.j2");
project_template!(Readme, "generate/readme.md.j2");
project_template!(InstallSh, "generate/install.sh.j2");
project_template!(Deployment, "generate/k8s/deployment.yaml.j2");
project_template!(Service, "generate/k8s/service.yaml.j2");
project_template!(Hpa, "generate/k8s/hpa.yaml.j2");
project_template!(NetworkPolicy, "generate/k8s/networkpolicy.yaml.j2");
project_template!(Knative, "generate/k8s/knative-service.yaml.j2");

/// What the project files need beyond the plan: how `Cargo.toml` finds the runtime, the
/// autoscaling choice, and the transport manifest's bytes (the image tag is its digest).
pub struct Scaffold<'a> {
    pub dependency: &'a RuntimeDependency,
    pub autoscaling: Autoscaling,
    pub manifest: &'a [u8],
}

/// Render the scaffolding files (path → bytes).
pub fn render(
    planned: &Planned,
    scaffold: &Scaffold<'_>,
) -> Result<Vec<(String, Vec<u8>)>, askama::Error> {
    let view = view(planned, scaffold);
    let view = &view;
    let mut files: Vec<(&str, String)> = vec![
        ("Cargo.toml", CargoToml { view }.render()?),
        ("src/main.rs", MainRs { view }.render()?),
        ("Dockerfile", Dockerfile { view }.render()?),
        (".dockerignore", DockerIgnore { view }.render()?),
        ("README.md", Readme { view }.render()?),
        ("k8s/networkpolicy.yaml", NetworkPolicy { view }.render()?),
    ];
    if !view.requirements.is_empty() {
        let mut list = view.requirements.join("\n");
        list.push('\n');
        files.push(("python/requirements.txt", list));
        files.push(("python/install.sh", InstallSh { view }.render()?));
    }
    if view.seccomp {
        let profile = String::from_utf8_lossy(&crate::seccomp::profile_bytes()).into_owned();
        files.push((crate::seccomp::PROFILE_FILE, profile));
    }
    // Scale-to-zero replaces the Deployment, its Service and the HPA: never both.
    match scaffold.autoscaling {
        Autoscaling::Hpa => files.extend([
            ("k8s/deployment.yaml", Deployment { view }.render()?),
            ("k8s/service.yaml", Service { view }.render()?),
            ("k8s/hpa.yaml", Hpa { view }.render()?),
        ]),
        Autoscaling::ScaleToZero => {
            files.push(("k8s/knative-service.yaml", Knative { view }.render()?));
        }
    }
    Ok(files
        .into_iter()
        .map(|(path, mut text)| {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            (path.to_string(), text.into_bytes())
        })
        .collect())
}

/// The execution mode of a plan, as deployment sees it.
pub fn execution_kind(planned: &Planned) -> ExecutionKind {
    match (&planned.policy, &planned.oci) {
        (_, Some(_)) => ExecutionKind::GovernedOci,
        (Some(_), None) => ExecutionKind::Governed,
        (None, None) => ExecutionKind::Direct,
    }
}

fn view(planned: &Planned, scaffold: &Scaffold<'_>) -> ProjectView {
    let transport = planned.transport;
    let module = planned.inspection.capability_ir.source.module.clone();
    let package = package_name(transport, &module);
    let feature = transport.name();
    let (requirement, runtime_patch) = match scaffold.dependency {
        RuntimeDependency::Checkout(path) => (
            RuntimeDependency::requirement(),
            format!("apizr-runtime = {{ path = {} }}", toml_string(path)),
        ),
        RuntimeDependency::Version(requirement) => (requirement.clone(), String::new()),
    };
    let bindings = bindings(planned);
    let macros = if bindings.is_some() {
        ", \"macros\""
    } else {
        ""
    };
    let runtime_dependency = format!(
        "apizr-runtime = {{ version = {}, features = [\"{feature}\"{macros}] }}",
        toml_string(&requirement)
    );
    let mut bundle_files: Vec<String> = vec![transport.manifest_file().to_string()];
    bundle_files.push("capability-ir.json".into());
    bundle_files.push("readiness.json".into());
    bundle_files.push(transport.interface_file().into());
    bundle_files.push("source".into());
    if planned.policy.is_some() {
        bundle_files.push("execution".into());
    }
    if planned.notebook.is_some() {
        bundle_files.push("notebook.ipynb".into());
    }
    let modules: Vec<String> = planned
        .modules
        .iter()
        .map(|m| m.inspection.capability_ir.source.module.clone())
        .collect();
    if modules.len() > 1 {
        // The further modules' IR and readiness (`crate::manifest::module_dir`).
        bundle_files.push("modules".into());
    }
    let module_list = if modules.len() > 1 {
        modules
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        format!("`{module}`")
    };
    bundle_files.sort();
    let capabilities = planned
        .contracts
        .iter()
        .map(|c| CapabilityView {
            id: c.capability_id.clone(),
            route: openapi::route(c),
            tool: mcp::tool_name(&c.name, &c.capability_id),
            example: example_arguments(c),
        })
        .collect();
    let (health_interval, health_timeout, health_start, health_retries) = deploy::HEALTH;
    ProjectView {
        seccomp_localhost: format!("apizr/{package}.json"),
        image: deploy::image_reference(&package, execution_kind(planned), scaffold.manifest),
        image_tag: deploy::image_tag(scaffold.manifest),
        knative: scaffold.autoscaling == Autoscaling::ScaleToZero,
        entrypoint: deploy::exec_form(&deploy::entrypoint(&package, transport)),
        healthcheck: deploy::exec_form(&deploy::healthcheck(transport)),
        health_interval,
        health_timeout,
        health_start,
        health_retries,
        user: deploy::USER,
        bundle_dir: deploy::BUNDLE_DIR,
        bundle_label: deploy::BUNDLE_LABEL,
        bundle_digest: apizr_ir::Digest::sha256(scaffold.manifest).prefixed(),
        package_files: planned.package.as_ref().map_or(0, |p| p.files.len()),
        requirements: planned
            .package
            .as_ref()
            .map(|p| p.requirements.clone())
            .unwrap_or_default(),
        wheelhouse: planned
            .package
            .as_ref()
            .is_some_and(|p| !p.wheelhouse.is_empty()),
        venv_dir: deploy::VENV_DIR,
        python_dir: deploy::PYTHON_DIR,
        python: deploy::worker_python(
            planned
                .package
                .as_ref()
                .is_some_and(|p| !p.requirements.is_empty()),
        ),
        bindings,
        package,
        module,
        modules,
        module_list,
        transport: transport.name(),
        transport_title: transport.label(),
        transport_variant: match transport {
            Transport::Rest => "Rest",
            Transport::Mcp => "Mcp",
        },
        manifest: transport.manifest_file(),
        interface_file: transport.interface_file(),
        bound_file: planned.bound.executable_path.clone(),
        mode: match (&planned.policy, &planned.oci) {
            (_, Some(_)) => "governed (OCI containers)",
            (Some(_), None) => "governed",
            (None, None) => "direct",
        },
        governed: planned.policy.is_some(),
        oci: planned.oci.is_some(),
        seccomp: planned.policy.is_some() && planned.oci.is_none(),
        apizr_version: APIZR_VERSION,
        runtime_dependency,
        runtime_patch,
        capability_count: planned.contracts.len(),
        capabilities,
        bundle_files,
        port: PORT,
    }
}

/// The `#[python]` bindings of a single-file `.py` source, one per capability, written with
/// the macro's own type mapping (so the compiler re-checks them against the source).
///
/// `None` — the project's `main.rs` loads and verifies the contract files at start-up instead
/// — for a module of a package (a binding embeds one file, the package's import closure is
/// served from the bundle), a notebook, or a parameter name Rust cannot spell.
fn bindings(planned: &Planned) -> Option<WrittenBindings> {
    if planned.package.is_some() || planned.notebook.is_some() {
        return None;
    }
    const POLICY: &str = "execution/policy.json";
    let platform;
    let mode = match (&planned.policy, &planned.oci) {
        (_, Some(oci)) => {
            platform = oci.image.platform.to_string();
            BindingMode::Container {
                policy: POLICY,
                image: &oci.image.image,
                platform: &platform,
            }
        }
        (Some(_), None) => BindingMode::Policy(POLICY),
        (None, None) => BindingMode::Direct,
    };
    let source = BindingSource {
        file: &planned.bound.executable_path,
        module: &planned.inspection.capability_ir.source.module,
        mode,
        allow_conditional: planned.conditional.is_some(),
    };
    writer::write(&source, &planned.contracts).ok()
}

/// `apizr-<transport>-<module>`, reduced to what Cargo accepts (`[a-z0-9-]`).
pub fn package_name(transport: Transport, module: &str) -> String {
    let mut name = format!("apizr-{}-", transport.name());
    for c in module.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    while name.ends_with('-') {
        name.pop();
    }
    name
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Required parameters with a sample value of their type; shell single quotes escaped.
fn example_arguments(contract: &apizr_ir::interface::InvocationContract) -> String {
    let args = Value::Object(
        contract
            .parameters
            .iter()
            .filter(|p| p.required)
            .map(|p| (p.name.clone(), sample(&p.type_spec, 0)))
            .collect(),
    );
    args.canonical_string()
        .unwrap_or_else(|_| "{}".into())
        .replace('\'', "'\\''")
}

fn sample(spec: &TypeSpec, depth: usize) -> Value {
    if depth > 8 {
        return Value::Null;
    }
    match spec.kind {
        TypeKind::Any | TypeKind::Int => Value::Int(1),
        TypeKind::Float => Value::Float(1.5),
        TypeKind::Str => Value::Str("text".into()),
        // base64 of b"text".
        TypeKind::Bytes | TypeKind::Bytearray => Value::Str("dGV4dA==".into()),
        TypeKind::Date => Value::Str("2024-01-31".into()),
        TypeKind::Datetime => Value::Str("2024-01-31T12:30:00Z".into()),
        TypeKind::Time => Value::Str("12:30:00".into()),
        TypeKind::Timedelta => Value::Float(90.0),
        TypeKind::Bool => Value::Bool(true),
        TypeKind::Null => Value::Null,
        TypeKind::Literal => spec.values.first().cloned().unwrap_or(Value::Null),
        TypeKind::Union => spec
            .items
            .first()
            .map_or(Value::Null, |item| sample(item, depth + 1)),
        TypeKind::Object => Value::Object(
            spec.fields
                .as_deref()
                .unwrap_or(&[])
                .iter()
                .filter(|f| f.required)
                .map(|f| (f.name.clone(), sample(&f.type_spec, depth + 1)))
                .collect(),
        ),
        TypeKind::Dict => Value::Object(Default::default()),
        TypeKind::Tuple if !spec.variadic => Value::Array(
            spec.items
                .iter()
                .map(|item| sample(item, depth + 1))
                .collect(),
        ),
        TypeKind::List | TypeKind::Tuple | TypeKind::Set | TypeKind::Frozenset => Value::Array(
            spec.items
                .first()
                .map(|item| sample(item, depth + 1))
                .into_iter()
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert_eq!(
            package_name(Transport::Rest, "pricing"),
            "apizr-rest-pricing"
        );
        assert_eq!(package_name(Transport::Mcp, "a.b_c"), "apizr-mcp-a-b-c");
        assert_eq!(
            package_name(Transport::Rest, "ünïcode"),
            "apizr-rest-n-code"
        );
    }

    #[test]
    fn toml_quoting() {
        assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
    }
}
