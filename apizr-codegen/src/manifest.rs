//! The transport manifests (`apizr-rest.json` / `apizr-mcp.json`) and the governed execution
//! bundle (`execution/bundle.json`), in the reference's shapes.
//!
//! What the digests cover differs on purpose: the reference hashes every file it writes, but
//! its files are all runtime files. Ours also include the project scaffolding (`Cargo.toml`,
//! `src/`, `Dockerfile`, `.dockerignore`, `k8s/`, `README.md`) that users are expected to edit
//! and that the server never reads, so `artifacts` covers only the contract, source and
//! execution files: the ones a server verifies before it answers. With `--allow-conditional`
//! the manifest gains a top-level `conditional` map (capability id → readiness reasons); for a
//! module of a package, a top-level `package` (its files, requirements and wheelhouse).

use std::collections::BTreeMap;

use apizr_ir::interface::InvocationContract;
use apizr_ir::plan::LOCAL_BACKEND_VERSION;
use apizr_ir::plan_v2::OCI_BACKEND_VERSION;
use apizr_ir::policy::PolicyV1;
use apizr_ir::{Digest, Value};

use crate::mcp;
use crate::model::{FileTree, OciSettings, PlanEntry, Planned, PlannedModule, Transport};
use crate::openapi::route;
use apizr_ir::json::{obj, text};

pub const BUNDLE_SCHEMA_V1: &str = "apizr.execution-bundle/v1";
pub const BUNDLE_SCHEMA_V2: &str = "apizr.execution-bundle/v2";

fn value<T: serde::Serialize>(item: &T) -> Value {
    apizr_ir::to_value(item).unwrap_or(Value::Null)
}

fn with(mut base: Value, extra: Vec<(&str, Value)>) -> Value {
    if let Value::Object(map) = &mut base {
        for (k, v) in extra {
            map.insert(k.to_string(), v);
        }
    }
    base
}

/// The manifest's `capabilities` (REST) or `tools` (MCP) array, in contract order.
pub fn endpoints(
    transport: Transport,
    contracts: &[InvocationContract],
    tools: Option<&[String]>,
) -> Vec<Value> {
    contracts
        .iter()
        .enumerate()
        .map(|(i, contract)| match transport {
            Transport::Rest => with(
                value(contract),
                vec![("method", text("POST")), ("route", text(&route(contract)))],
            ),
            Transport::Mcp => {
                let name = tools
                    .and_then(|t| t.get(i))
                    .cloned()
                    .unwrap_or_else(|| mcp::tool_name(&contract.name, &contract.capability_id));
                with(
                    value(contract),
                    vec![
                        ("input_schema", contract.request_schema()),
                        ("tool_name", Value::Str(name)),
                    ],
                )
            }
        })
        .collect()
}

/// `{path: digest}` of the given files.
pub fn artifacts<'a>(files: impl Iterator<Item = (&'a String, &'a Vec<u8>)>) -> Value {
    Value::Object(
        files
            .map(|(path, bytes)| (path.clone(), value(&Digest::sha256(bytes))))
            .collect(),
    )
}

/// The transport manifest over the `covered` files.
pub fn transport_manifest(planned: &Planned, endpoints: Vec<Value>, covered: &FileTree) -> Value {
    let transport = planned.transport;
    let mut extra = vec![
        ("artifacts", artifacts(covered.iter())),
        (transport.contracts_key(), Value::Array(endpoints)),
        ("schema_version", text(transport.schema())),
    ];
    if let Some(conditional) = &planned.conditional {
        extra.push(("conditional", conditional.clone()));
    }
    if let Some(package) = &planned.package {
        extra.push(("package", package_section(package, &planned.modules)));
    }
    if transport == Transport::Mcp {
        extra.push((
            "protocol",
            obj(vec![
                ("sdk", text(mcp::PROTOCOL_SDK)),
                ("target", text(mcp::PROTOCOL_TARGET)),
            ]),
        ));
    }
    with(value(&planned.bound), extra)
}

/// A module of a package: `files` (the bundle paths the server loads as the package, each
/// also an artifact), `requirements` (installed into the image's virtual environment) and
/// `wheelhouse` (wheel name → digest), so the manifest's digest (the image tag) follows them.
/// Several modules add `modules` ([`module_entry`]); one module has none, so its manifest
/// stays byte for byte what it was.
fn package_section(package: &crate::model::ServedPackage, modules: &[PlannedModule]) -> Value {
    let mut section = obj(vec![
        (
            "files",
            Value::Array(
                package
                    .files
                    .keys()
                    .map(|path| text(&format!("source/{path}")))
                    .collect(),
            ),
        ),
        (
            "requirements",
            Value::Array(package.requirements.iter().map(|r| text(r)).collect()),
        ),
        (
            "wheelhouse",
            Value::Object(
                package
                    .wheelhouse
                    .iter()
                    .map(|(name, bytes)| (name.clone(), value(&Digest::sha256(bytes))))
                    .collect(),
            ),
        ),
    ]);
    if modules.len() > 1 {
        section = with(
            section,
            vec![(
                "modules",
                Value::Array(modules.iter().enumerate().map(module_entry).collect()),
            )],
        );
    }
    section
}

/// Where a further module's `capability-ir.json` and `readiness.json` go (the first module's
/// are the bundle's top-level ones).
pub fn module_dir(module: &str) -> String {
    format!("modules/{module}")
}

/// One module of a bundle that serves several: its binding (as the manifest's top level binds
/// the first: `source`, `executable_path`, `executable_digest`, `ir_digest`,
/// `readiness_digest`), the files holding its IR and readiness (`ir`, `readiness`), the
/// capability ids it serves (`capabilities`) and, unless it stands alone, its import closure
/// (`files`, a subset of the package's), which its workers load as the package.
fn module_entry((index, module): (usize, &PlannedModule)) -> Value {
    let (ir, readiness) = match index {
        0 => (
            "capability-ir.json".to_string(),
            "readiness.json".to_string(),
        ),
        _ => {
            let dir = module_dir(&module.inspection.capability_ir.source.module);
            (
                format!("{dir}/capability-ir.json"),
                format!("{dir}/readiness.json"),
            )
        }
    };
    let mut extra = vec![
        (
            "capabilities",
            Value::Array(module.capability_ids.iter().map(|id| text(id)).collect()),
        ),
        ("ir", Value::Str(ir)),
        ("readiness", Value::Str(readiness)),
    ];
    if let Some(closure) = &module.closure {
        extra.push((
            "files",
            Value::Array(
                closure
                    .iter()
                    .map(|path| text(&format!("source/{path}")))
                    .collect(),
            ),
        ));
    }
    with(value(&module.bound), extra)
}

/// `execution/bundle.json` over every file rendered so far (the transport manifest and the
/// bundle itself are not rendered yet, so they are excluded as in the reference).
pub fn execution_bundle(
    transport: Transport,
    policy: &PolicyV1,
    plans: &[PlanEntry],
    endpoints: &[Value],
    tree: &FileTree,
) -> Result<Value, apizr_ir::CanonicalError> {
    let common = bundle_common(transport, plans, endpoints, tree)?;
    Ok(with(
        common,
        vec![
            ("backend_version", text(LOCAL_BACKEND_VERSION)),
            ("policy_digest", value(&policy.digest()?)),
            ("schema_version", text(BUNDLE_SCHEMA_V1)),
        ],
    ))
}

/// The v2 (`apizr.execution-bundle/v2`) bundle: as v1 plus the OCI backend, the provider and
/// the runtime image.
pub fn execution_bundle_v2(
    transport: Transport,
    oci: &OciSettings,
    plans: &[PlanEntry],
    endpoints: &[Value],
    tree: &FileTree,
) -> Result<Value, apizr_ir::CanonicalError> {
    let common = bundle_common(transport, plans, endpoints, tree)?;
    Ok(with(
        common,
        vec![
            ("backend", text(oci.policy.backend)),
            ("backend_version", text(OCI_BACKEND_VERSION)),
            ("policy_digest", value(&oci.policy.digest()?)),
            ("policy_version", text(oci.policy.schema_version)),
            ("provider_version", text(oci.image.provider)),
            ("runtime", value(&oci.image)),
            ("schema_version", text(BUNDLE_SCHEMA_V2)),
        ],
    ))
}

fn bundle_common(
    transport: Transport,
    plans: &[PlanEntry],
    endpoints: &[Value],
    tree: &FileTree,
) -> Result<Value, apizr_ir::CanonicalError> {
    let contract_digest = Digest::sha256(&Value::Array(endpoints.to_vec()).canonical_bytes()?);
    let capabilities: BTreeMap<String, Value> = plans
        .iter()
        .map(|p| {
            (
                p.capability_id.clone(),
                obj(vec![("digest", value(&p.digest)), ("path", text(&p.path))]),
            )
        })
        .collect();
    Ok(obj(vec![
        ("artifacts", artifacts(tree.iter())),
        ("capabilities", Value::Object(capabilities)),
        ("contract_digest", value(&contract_digest)),
        ("policy_artifact", text("execution/policy.json")),
        ("transport", text(transport.name())),
    ]))
}
