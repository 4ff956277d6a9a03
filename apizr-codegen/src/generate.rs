//! The pure core of `generate`: source bytes + options → every file of the project, in memory.
//!
//! Why pure: the reference's promise "nothing is written before everything is rendered" is
//! easiest to keep when rendering cannot touch the file system at all; it also makes the
//! snapshot tests plain function calls. Order of checks follows the reference (policy →
//! inspection → selection) so the same input fails with the same message and exit code.

use apizr_inspect::on_inspect_stack;
use apizr_ir::Digest;
use apizr_ir::plan::{BoundSource, RuntimePlan};
use apizr_ir::plan_v2::{ContainerPlan, RuntimeImage};
use apizr_ir::policy::{AnyPolicy, PolicyV1};
use apizr_ir::policy_v2::PolicyV2;

use crate::model::{
    FileTree, GenerateError, Generated, OciSettings, PlanEntry, Planned, Request, Transport, input,
};
use crate::pyjson::SummaryMode;
use crate::{manifest, mcp, openapi, plan, project, pyjson};

/// Render the whole project: policy → inspection → selection → every file, in memory.
/// Inspection and planning run on a large stack ([`on_inspect_stack`]).
pub fn generate(request: &Request) -> Result<Generated, GenerateError> {
    on_inspect_stack(|| generate_here(request)).map_err(|e| GenerateError::Io(e.to_string()))?
}

fn generate_here(request: &Request) -> Result<Generated, GenerateError> {
    let (policy, oci) = parse_policy(request)?;
    // A module of a package directory: types imported from its other modules resolve.
    let index = match request.package.as_ref().and_then(|p| p.root.as_deref()) {
        Some(root) => Some(apizr_inspect::package::PackageIndex::scan(root).map_err(input)?),
        None => None,
    };
    let index = index.as_ref();
    let several = request.package.as_ref().filter(|p| p.modules.len() > 1);
    let planned = match several {
        None => {
            let one = plan::source(
                request,
                &request.source,
                &request.module,
                request.selection.as_deref(),
                index,
            )?;
            Planned {
                transport: request.transport,
                bound: BoundSource::of(&one.inspection),
                inspection: one.inspection,
                contracts: one.contracts,
                executable: one.executable,
                notebook: one.notebook,
                policy,
                oci,
                conditional: one.conditional,
                package: request.package.clone(),
                modules: Vec::new(),
            }
        }
        Some(package) => plan::modules(request, package, policy, oci, index)?,
    };
    if Digest::sha256(&planned.executable) != planned.bound.executable_digest {
        return Err(input("executable bytes do not match the inspected digest"));
    }
    render(&planned, request)
}

/// The policy file: v2 needs both image flags, image flags need v2, a v1 policy
/// must parse strictly and may not require effects (v1 never proves any). A v2 policy yields
/// its derived worker policy and the OCI settings.
fn parse_policy(
    request: &Request,
) -> Result<(Option<PolicyV1>, Option<OciSettings>), GenerateError> {
    let image_flags = request.runtime_image.is_some() || request.runtime_platform.is_some();
    let Some(bytes) = &request.policy else {
        if image_flags {
            return Err(input(
                "Runtime image/platform require an OCI v2 execution policy",
            ));
        }
        return Ok((None, None));
    };
    let doc: serde_json::Value = serde_json::from_slice(bytes).map_err(input)?;
    if AnyPolicy::is_v2_document(&doc) {
        if request.runtime_image.is_none() || request.runtime_platform.is_none() {
            return Err(input(
                "OCI policy requires --runtime-image and --runtime-platform",
            ));
        }
        return parse_v2(&doc, request);
    }
    if image_flags {
        return Err(input(
            "Runtime image/platform require an OCI v2 execution policy",
        ));
    }
    let policy = PolicyV1::from_json(&doc).map_err(input)?;
    if !policy.effects.require_known.is_empty() {
        return Err(input("unknown_required_effect"));
    }
    Ok((Some(policy), None))
}

/// A v2 policy: strict document, full image ID and platform, no backend refusal.
fn parse_v2(
    doc: &serde_json::Value,
    request: &Request,
) -> Result<(Option<PolicyV1>, Option<OciSettings>), GenerateError> {
    let image = RuntimeImage::parse(
        request.runtime_image.as_deref().unwrap_or_default(),
        request.runtime_platform.as_deref().unwrap_or_default(),
    )
    .map_err(input)?;
    let policy = PolicyV2::from_json(doc).map_err(input)?;
    // The reference refuses these at generation time with the bare control code.
    if policy.refusal().is_some() {
        return Err(input("unsupported_control"));
    }
    if !policy.effects.require_known.is_empty() {
        return Err(input("unknown_required_effect"));
    }
    Ok((
        Some(policy.worker_policy()),
        Some(OciSettings { policy, image }),
    ))
}

/// Every file, then the manifests over them, then the summary.
fn render(planned: &Planned, request: &Request) -> Result<Generated, GenerateError> {
    let canonical = |r: Result<Vec<u8>, apizr_ir::CanonicalError>| r.map_err(input);
    let mut tree = FileTree::new();
    let inspection = &planned.inspection;
    tree.insert(
        "capability-ir.json".into(),
        canonical(inspection.capability_ir.canonical_bytes())?,
    );
    tree.insert(
        "readiness.json".into(),
        canonical(apizr_ir::canonical_bytes(&inspection.readiness))?,
    );
    // Several modules: each further module's IR and readiness next to the first's.
    for module in planned.modules.iter().skip(1) {
        let dir = crate::manifest::module_dir(&module.inspection.capability_ir.source.module);
        tree.insert(
            format!("{dir}/capability-ir.json"),
            canonical(module.inspection.capability_ir.canonical_bytes())?,
        );
        tree.insert(
            format!("{dir}/readiness.json"),
            canonical(apizr_ir::canonical_bytes(&module.inspection.readiness))?,
        );
    }
    insert_source(&mut tree, planned);
    let tools = match planned.transport {
        Transport::Rest => {
            let doc = openapi::document(&planned.contracts);
            tree.insert(
                Transport::Rest.interface_file().into(),
                canonical(doc.canonical_bytes())?,
            );
            None
        }
        Transport::Mcp => {
            let tools = mcp::tool_names(&planned.contracts).map_err(input)?;
            let doc = mcp::tools_document(&planned.contracts, &tools);
            tree.insert(
                Transport::Mcp.interface_file().into(),
                canonical(doc.canonical_bytes())?,
            );
            Some(tools)
        }
    };
    let endpoints = manifest::endpoints(planned.transport, &planned.contracts, tools.as_deref());
    if let Some(policy) = &planned.policy {
        let policy_bytes = match &planned.oci {
            Some(oci) => oci.policy.canonical_bytes(),
            None => policy.canonical_bytes(),
        };
        tree.insert("execution/policy.json".into(), canonical(policy_bytes)?);
        let mut plans = Vec::new();
        for contract in &planned.contracts {
            let plan = RuntimePlan::new(
                planned.inspection_of(contract),
                contract.clone(),
                policy.clone(),
            )
            .map_err(input)?;
            let path = format!("execution/plans/{}.json", contract.name);
            let bytes = match &planned.oci {
                Some(oci) => canonical(
                    ContainerPlan::new(&plan, oci.policy.clone(), oci.image.clone())
                        .and_then(|p| p.canonical_bytes()),
                )?,
                None => canonical(plan.canonical_bytes())?,
            };
            plans.push(PlanEntry {
                capability_id: contract.capability_id.clone(),
                path: path.clone(),
                digest: Digest::sha256(&bytes),
            });
            tree.insert(path, bytes);
        }
        let bundle = match &planned.oci {
            Some(oci) => {
                manifest::execution_bundle_v2(planned.transport, oci, &plans, &endpoints, &tree)
            }
            None => {
                manifest::execution_bundle(planned.transport, policy, &plans, &endpoints, &tree)
            }
        }
        .map_err(input)?;
        tree.insert(
            "execution/bundle.json".into(),
            canonical(bundle.canonical_bytes())?,
        );
    }
    // The manifest covers the files rendered so far; the scaffolding (rendered next) names
    // the image after the manifest's digest.
    let transport_manifest = manifest::transport_manifest(planned, endpoints, &tree);
    let manifest_bytes = canonical(transport_manifest.canonical_bytes())?;
    let scaffold = project::Scaffold {
        dependency: &request.runtime_dependency,
        autoscaling: request.autoscaling,
        manifest: &manifest_bytes,
    };
    for (path, bytes) in project::render(planned, &scaffold).map_err(input)? {
        tree.insert(path, bytes);
    }
    if let Some(package) = &planned.package {
        for (name, bytes) in &package.wheelhouse {
            tree.insert(format!("python/wheelhouse/{name}"), bytes.clone());
        }
    }
    tree.insert(planned.transport.manifest_file().into(), manifest_bytes);
    let mode = match (&planned.policy, &planned.oci) {
        (_, Some(_)) => SummaryMode::GovernedOci,
        (Some(_), None) => SummaryMode::GovernedV1,
        (None, None) => SummaryMode::Direct,
    };
    let summary = pyjson::summary(planned.transport, mode, tree.keys());
    Ok(Generated {
        tree,
        summary,
        transport: planned.transport,
        mode,
    })
}

/// `source/<module path>.py` (the executable text), an empty `__init__.py` for each dotted
/// parent, and the original notebook next to them; for a module of a package, the package's
/// files instead of the empty parents.
fn insert_source(tree: &mut FileTree, planned: &Planned) {
    if let Some(package) = &planned.package {
        // A package's own files, parents' `__init__.py` included: nothing is made up.
        for (path, bytes) in &package.files {
            tree.insert(format!("source/{path}"), bytes.clone());
        }
        tree.insert(
            planned.bound.executable_path.clone(),
            planned.executable.clone(),
        );
        // Several modules: a module that stands alone gets its file and, where no package file
        // is there, the empty parents it has when generated alone.
        for module in &planned.modules {
            if module.closure.is_none() {
                insert_empty_parents(tree, &module.inspection.capability_ir.source.module);
            }
            tree.insert(
                module.bound.executable_path.clone(),
                module.executable.clone(),
            );
        }
        return;
    }
    insert_empty_parents(tree, &planned.inspection.capability_ir.source.module);
    tree.insert(
        planned.bound.executable_path.clone(),
        planned.executable.clone(),
    );
    if let Some(notebook) = &planned.notebook {
        tree.insert("notebook.ipynb".into(), notebook.clone());
    }
}

/// An empty `source/<parent>/__init__.py` for each dotted parent of `module` not already there.
fn insert_empty_parents(tree: &mut FileTree, module: &str) {
    let parts: Vec<&str> = module.split('.').collect();
    for depth in 1..parts.len() {
        let package = parts[..depth].join("/");
        tree.entry(format!("source/{package}/__init__.py"))
            .or_default();
    }
}
