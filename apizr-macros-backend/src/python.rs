//! `#[python]`: from the attribute and the body-less function to a checked [`PythonBinding`].
//!
//! Order: options → item → policy → source → inspection → capability → readiness →
//! contract → signature. Independent problems are all reported; a step that depends on a
//! failed one is skipped (nothing to check a signature against without a contract).

use apizr_inspect::InspectError;
use apizr_inspect::interface::bindable;
use apizr_ir::interface::InvocationContract;
use apizr_ir::plan::{BoundSource, RuntimePlan};
use apizr_ir::{Assessment, Digest, ReadinessState, ReasonCode, SourceKind};
use proc_macro2::TokenStream;
use syn::LitStr;

use crate::attr::{self, PythonArgs};
use crate::check::{self, Checked, Origin};
use crate::errors::Errors;
use crate::item::FnItem;
use crate::policy::{self, Governance};
use crate::source::{self, AnalysisError, ManifestDir};

/// The digest chain a binding embeds: source → IR → readiness → interface → policy → plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digests {
    pub source: Digest,
    /// The executable text (the source itself, or a notebook's export).
    pub executable: Digest,
    pub ir: Digest,
    pub readiness: Digest,
    pub interface: Digest,
    /// Absent in direct mode.
    pub policy: Option<Digest>,
    /// The `apizr.runtime/v1` plan (for v2: the plan of the worker inside the container).
    pub plan: Option<Digest>,
}

/// Everything the expansion needs, checked.
pub struct PythonBinding {
    pub item: FnItem,
    pub runtime: syn::Path,
    /// `file = "…"` as written (relative to the manifest directory).
    pub file: LitStr,
    pub kind: SourceKind,
    /// A notebook's exported text (what runs); `None` for `.py`, whose file bytes run as-is.
    pub notebook_executable: Option<Vec<u8>>,
    pub module: String,
    pub function: String,
    pub capability_id: String,
    /// Canonical JSON of the InvocationContract (hashes to `digests.interface`).
    pub contract: String,
    pub governance: Governance,
    /// `policy = "…"` as written, when given (tracked like `file`, so an edit rebuilds).
    pub policy_file: Option<LitStr>,
    /// The capability is `conditional` and was bound with `allow_conditional`.
    pub conditional: bool,
    pub digests: Digests,
    pub checked: Checked,
}

/// The default runtime path.
pub fn default_runtime() -> syn::Path {
    syn::parse_quote!(::apizr_runtime)
}

/// Parse, inspect and check one binding; `dir` resolves `file` and `policy`.
pub fn analyze_binding(
    attr: TokenStream,
    item: TokenStream,
    dir: &ManifestDir,
) -> syn::Result<PythonBinding> {
    let mut errors = Errors::new();
    let args = errors.take(attr::python(attr));
    let item = match syn::parse2::<FnItem>(item) {
        Ok(item) => item,
        Err(error) => {
            errors.push(error);
            return fail(errors);
        }
    };
    if let Some(body) = &item.body {
        errors.spanned(
            body.brace_token.span.join(),
            "a #[python] binding has no body (the Python function is the body): end the signature with `;`",
        );
    }
    let rust_args = item.plain_args("#[python]", &mut errors);
    let Some(args) = args else {
        return fail(errors);
    };
    let governance = policy::resolve(&args, dir, &mut errors);
    let Some(found) = inspect(&args, dir, &mut errors) else {
        return fail(errors);
    };
    let (analysis, module) = found;
    let Ok(analysis) = analysis.as_ref() else {
        return fail(errors);
    };
    let function = args
        .function
        .as_ref()
        .map_or_else(|| item.name(), LitStr::value);
    let name_span = args
        .function
        .as_ref()
        .map_or_else(|| item.sig.ident.span(), LitStr::span);
    let file = args.file.value();
    let Some(planned) = analysis.find(&function) else {
        errors.spanned(name_span, unknown_function(&file, &function, analysis));
        return fail(errors);
    };
    let line = planned.assessment.source.line;
    if !bindable(&planned.assessment, args.allow_conditional.is_some()) {
        errors.spanned(name_span, refusal(&file, &planned.assessment));
        return fail(errors);
    }
    let (Some(capability), Some(contract)) = (&planned.capability, &planned.contract) else {
        errors.spanned(
            name_span,
            format!("`{function}` in {file}:{line} has no contract"),
        );
        return fail(errors);
    };
    let contract = match contract {
        Ok(contract) => contract,
        Err(error) => {
            errors.spanned(
                name_span,
                format!("cannot plan `{function}` in {file}:{line}: {error}"),
            );
            return fail(errors);
        }
    };
    let origin = Origin {
        file: &file,
        capability,
    };
    let checked = check::signature(&item, &rust_args, contract, &origin, &mut errors);
    let (Some(checked), Some(governance)) = (checked, governance) else {
        return fail(errors);
    };
    let digests = match digests(analysis, contract, &governance) {
        Ok(digests) => digests,
        Err(message) => {
            errors.spanned(args.file.span(), message);
            return fail(errors);
        }
    };
    let contract_json = match contract.canonical_bytes().map(String::from_utf8) {
        Ok(Ok(text)) => text,
        _ => {
            errors.spanned(args.file.span(), "the contract cannot be encoded");
            return fail(errors);
        }
    };
    let conditional = planned.assessment.state == ReadinessState::Conditional
        && !planned.assessment.can_generate_interface;
    let notebook_executable =
        (analysis.kind == SourceKind::Notebook).then(|| analysis.executable.clone());
    let binding = PythonBinding {
        runtime: args.krate.clone().unwrap_or_else(default_runtime),
        file: args.file.clone(),
        kind: analysis.kind,
        notebook_executable,
        module,
        function,
        capability_id: contract.capability_id.clone(),
        contract: contract_json.trim_end().to_string(),
        governance,
        policy_file: args.policy.clone(),
        conditional,
        digests,
        checked,
        item,
    };
    errors.finish(binding)
}

fn fail<T>(errors: Errors) -> syn::Result<T> {
    errors.fail()
}

type Found = (
    std::sync::Arc<Result<source::Analysis, AnalysisError>>,
    String,
);

/// Read and inspect the file; inspection errors are recorded on the `file` literal.
fn inspect(args: &PythonArgs, dir: &ManifestDir, errors: &mut Errors) -> Option<Found> {
    let lit = &args.file;
    let path = errors.take(dir.resolve(lit, "file"))?;
    let (bytes, kind) = errors.take(source::read(&path, lit))?;
    let module = match &args.module {
        Some(m) => errors.take(
            apizr_inspect::source::validate_module_name(&m.value())
                .map_err(|e| syn::Error::new(m.span(), e.to_string())),
        )?,
        None => errors.take(
            apizr_inspect::source::default_module_name(std::path::Path::new(&lit.value())).map_err(
                |e| {
                    syn::Error::new(
                        lit.span(),
                        format!("{e}: the file stem is not a module name; add `module = \"…\"`"),
                    )
                },
            ),
        )?,
    };
    let analysis = source::analyze(&bytes, kind, &module);
    if let Err(error) = analysis.as_ref() {
        errors.spanned(lit.span(), analysis_error(&lit.value(), error));
    }
    Some((analysis, module))
}

/// A message for an inspection failure; syntax errors show `file:line:col` and the line.
pub fn analysis_error(file: &str, error: &AnalysisError) -> String {
    match error {
        AnalysisError::Inspect(InspectError::Syntax {
            message,
            position,
            line_text,
        }) => {
            let caret = " ".repeat(position.column.saturating_sub(1) as usize);
            format!(
                "Python syntax error at {file}:{}:{}: {message}\n  |\n  | {line_text}\n  | {caret}^",
                position.line, position.column
            )
        }
        AnalysisError::Inspect(error) => match error.position() {
            Some(p) => format!("cannot inspect {file}:{}:{}: {error}", p.line, p.column),
            None => format!("cannot inspect `{file}`: {error}"),
        },
        AnalysisError::Panic(message) => {
            format!(
                "the inspector panicked on `{file}` (a bug in apizr; please report it): {message}"
            )
        }
        AnalysisError::Thread(message) => {
            format!("cannot start the inspection thread for `{file}`: {message}")
        }
    }
}

fn unknown_function(file: &str, function: &str, analysis: &source::Analysis) -> String {
    let names: Vec<&str> = analysis
        .capabilities
        .iter()
        .map(|p| p.assessment.source.symbol.as_str())
        .collect();
    if names.is_empty() {
        format!("`{file}` defines no function `{function}` (it defines no module-level functions)")
    } else {
        format!(
            "`{file}` defines no function `{function}`; its functions are: {} (name another with `function = \"…\"`)",
            names.join(", ")
        )
    }
}

/// Why a capability cannot be bound, with every readiness reason explained.
fn refusal(file: &str, a: &Assessment) -> String {
    let d = &a.dimensions;
    let mut reasons: Vec<String> = [&d.binding, &d.execution, &d.inputs, &d.outputs]
        .iter()
        .flat_map(|dim| dim.reasons.iter())
        .map(|r| {
            let why = ReasonCode::ALL
                .iter()
                .find(|c| c.code() == r.code)
                .map_or("", |c| c.explanation());
            let param = r
                .parameter
                .as_ref()
                .map(|p| format!(" (`{p}`)"))
                .unwrap_or_default();
            format!("{} at line {}{param}: {why}", r.code, r.line)
        })
        .collect();
    reasons.dedup();
    let state = a.state.as_str();
    let at = format!("`{}` in {file}:{}", a.source.symbol, a.source.line);
    let listed = reasons.join("; ");
    if a.state == ReadinessState::Conditional && a.in_ir {
        format!("{at} is `{state}`: {listed}; add `allow_conditional` to bind it anyway")
    } else {
        format!("{at} is `{state}` and cannot be bound: {listed}")
    }
}

fn digests(
    analysis: &source::Analysis,
    contract: &InvocationContract,
    governance: &Governance,
) -> Result<Digests, String> {
    let inspection = &analysis.inspection;
    let bound = BoundSource::of(inspection);
    let interface = contract.digest().map_err(|e| e.to_string())?;
    let policy = match governance {
        Governance::Direct => None,
        Governance::V1 { digest, .. } | Governance::V2 { digest, .. } => Some(digest.clone()),
    };
    let plan = match governance.plan_policy() {
        None => None,
        Some(policy) => Some(
            RuntimePlan::new(inspection, contract.clone(), policy.clone())
                .and_then(|plan| plan.digest())
                .map_err(|e| e.to_string())?,
        ),
    };
    Ok(Digests {
        source: bound.source.digest.clone(),
        executable: bound.executable_digest,
        ir: bound.ir_digest,
        readiness: bound.readiness_digest,
        interface,
        policy,
        plan,
    })
}
