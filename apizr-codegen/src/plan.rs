//! Inspection and planning of the served source: one file or module ([`source`]), or several
//! modules of a package ([`modules`]), each exactly as it would be alone.

use apizr_inspect::InspectOptions;
use apizr_inspect::interface;
use apizr_inspect::package::PackageIndex;
use apizr_ir::plan::BoundSource;
use apizr_ir::policy::PolicyV1;
use apizr_ir::{Digest, SourceKind};

use crate::conditional;
use crate::model::{
    GenerateError, OciSettings, Planned, PlannedModule, Request, ServedPackage, input,
};

/// One source inspected and planned for its selection: inspection → selection → contracts,
/// in the reference's order (so the same input fails with the same message).
pub(crate) struct SourcePlan {
    pub inspection: apizr_ir::Inspection,
    pub contracts: Vec<apizr_ir::interface::InvocationContract>,
    pub conditional: Option<apizr_ir::Value>,
    pub executable: Vec<u8>,
    pub notebook: Option<Vec<u8>>,
}

/// `index`: the package directory of a module of a package, so that types imported from its
/// other modules resolve and, under readiness v2, the module gets the verdict `inspect DIR`
/// gives it (its local imports judged with the package).
pub(crate) fn source(
    request: &Request,
    source: &[u8],
    module: &str,
    selection: Option<&str>,
    index: Option<&PackageIndex>,
) -> Result<SourcePlan, GenerateError> {
    let options = InspectOptions {
        readiness: request.readiness,
        ..InspectOptions::default()
    };
    let (outcome, parsed) = match index {
        Some(index) if request.readiness == apizr_ir::ReadinessPolicy::V2 => {
            // The import names the bundle's wheels install, as `inspect --wheelhouse` reads
            // them (`yaml` is PyYAML's): the same READY-020 verdicts.
            let wheels = request.package.iter().flat_map(|p| &p.wheelhouse);
            let provides = apizr_inspect::package::wheel_files_imports(
                wheels.map(|(name, bytes)| (name.as_str(), bytes.as_slice())),
            )
            .map_err(input)?;
            apizr_inspect::project::inspect_modules_in_dir(
                index,
                &[(module, source)],
                options,
                &provides,
            )
            .map_err(input)?
            .pop()
            .ok_or_else(|| input(format!("{module}: not inspected")))?
        }
        _ => apizr_inspect::inspect_bytes_in_index(
            source,
            request.kind,
            module,
            options,
            None,
            index,
        )
        .map_err(input)?,
    };
    let selection = match selection {
        Some(text) => Some(interface::parse_selection(text)?),
        None => None,
    };
    let inspection = outcome.inspection;
    let (contracts, conditional) = match (&selection, request.allow_conditional) {
        (Some(selection), true) => {
            conditional::plan_in_package(&parsed, &inspection, selection, index)?
        }
        (None, true) => return Err(input("--allow-conditional requires --select")),
        (_, false) => (
            interface::plan_in_package(&parsed, &inspection, selection.as_deref(), index)?,
            None,
        ),
    };
    // A notebook's executable is its exported text exactly as hashed into
    // `transformed_digest` (the parser's copy has normalized line endings).
    let (executable, notebook) = match request.kind {
        SourceKind::Python => (source.to_vec(), None),
        SourceKind::Notebook => (
            apizr_inspect::notebook::export(source, false)
                .map_err(input)?
                .text
                .into_bytes(),
            Some(source.to_vec()),
        ),
    };
    Ok(SourcePlan {
        inspection,
        contracts,
        conditional,
        executable,
        notebook,
    })
}

/// Several modules of a package: each inspected and planned exactly as one module alone is
/// (its own readiness, selection and `--allow-conditional` records); the contracts are theirs
/// in selection order, the first module is the bundle's top-level binding, and every module's
/// binding is listed ([`PlannedModule`]). A name is served once: the selection parser refuses
/// one function name in two modules before anything is inspected.
pub(crate) fn modules(
    request: &Request,
    package: &ServedPackage,
    policy: Option<PolicyV1>,
    oci: Option<OciSettings>,
    index: Option<&PackageIndex>,
) -> Result<Planned, GenerateError> {
    let mut modules = Vec::with_capacity(package.modules.len());
    let mut contracts = Vec::new();
    let mut conditional = std::collections::BTreeMap::new();
    for module in &package.modules {
        let one = source(
            request,
            &module.source,
            &module.module,
            Some(&module.selection),
            index,
        )?;
        let bound = BoundSource::of(&one.inspection);
        if Digest::sha256(&one.executable) != bound.executable_digest {
            return Err(input("executable bytes do not match the inspected digest"));
        }
        if let Some(apizr_ir::Value::Object(records)) = one.conditional {
            conditional.extend(records);
        }
        modules.push(PlannedModule {
            capability_ids: one
                .contracts
                .iter()
                .map(|c| c.capability_id.clone())
                .collect(),
            inspection: one.inspection,
            bound,
            executable: one.executable,
            closure: module.closure.clone(),
        });
        contracts.extend(one.contracts);
    }
    let first = modules.first().ok_or_else(|| input("no module selected"))?;
    Ok(Planned {
        transport: request.transport,
        inspection: first.inspection.clone(),
        bound: first.bound.clone(),
        executable: first.executable.clone(),
        contracts,
        notebook: None,
        policy,
        oci,
        conditional: (!conditional.is_empty()).then_some(apizr_ir::Value::Object(conditional)),
        package: Some(package.clone()),
        modules,
    })
}
