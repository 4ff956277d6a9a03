//! apizr-inspect: read a Python file or notebook *without importing it* and produce the
//! Capability IR and readiness report, byte-compatible with outerspace-apizr 0.4.6.
//!
//! Pipeline (all pure functions over values; only [`source::read_source`] touches the disk):
//!
//! 1. [`source`] — admission: suffix, 16 MiB, no-follow open, logical module name.
//! 2. [`decode`] — PEP 263 decoding of `.py` bytes (BOM, coding cookies).
//!    [`notebook`] — `.ipynb` → exported Python text (the nbconvert layout, natively).
//! 3. [`budget`] — nesting pre-scan before parsing, and the 100k-node / depth-128 AST budget.
//! 4. [`module`] — parse with the CPython 3.11 grammar (ruff's parser).
//! 5. [`facts`] — one walk over the module: statements, bindings, calls, imports, mutations,
//!    each tagged with its scope and context; every later stage queries it.
//! 6. [`discovery`] — candidates, overloads, diagnostics → [`apizr_ir::CapabilityIr`].
//! 7. [`readiness`] — the 19 reason codes and TypedDict proofs → [`apizr_ir::ReadinessReport`].
//!    [`explain`] — per reason: culprit, span and fix (`apizr.explanation/v1`, not hashed).
//! 8. [`unparse`] — the CPython 3.11 `ast.unparse` port used for every `declared` text.
//! 9. [`project`] — a whole directory, inspected in parallel; [`package`] — its import graph
//!    (which local modules an import runs), shared by readiness v2 and bundling.
//! 10. [`interface`] — InvocationContracts of eligible capabilities and selection.
//!
//! Outside the pipeline: [`imports`] lists every module a piece of code names for import
//! (the code interpreter's allowlist check).
//!
//! The parser and the unparser recurse: run inspection and planning through
//! [`on_inspect_stack`] (a thread with a large stack), as every apizr command does.

pub mod budget;
pub mod decode;
pub mod discovery;
pub mod error;
pub mod explain;
pub mod facts;
pub mod imports;
pub mod interface;
pub mod module;
pub mod notebook;
pub mod package;
pub mod project;
pub mod readiness;
pub mod source;
pub mod stack;
pub mod unparse;

use apizr_ir::{
    CAPABILITY_SCHEMA, Digest, INSPECTION_SCHEMA, Inspection, SourceKind, SourceRecord,
};

pub use error::{InspectError, Position};
pub use module::ParsedModule;
pub use stack::{StackError, on_inspect_stack};

/// Options beyond the reference tool's behaviour. The defaults reproduce 0.4.6 exactly.
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectOptions {
    /// Comment out IPython line magics / shell lines in notebooks instead of refusing them.
    pub strip_magics: bool,
    /// Also build the [`explain::Explanation`] of the readiness report.
    pub explain: bool,
    /// The readiness policy (v1, the reference's, by default).
    pub readiness: apizr_ir::ReadinessPolicy,
}

/// Something worth telling the user that does not change the (hashed) result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub position: Option<Position>,
    pub message: String,
}

/// A successful inspection plus notes for the user.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub inspection: Inspection,
    pub notes: Vec<Note>,
    /// The bytes a worker executes, hashing to `transformed_digest` or `digest`: the file
    /// itself, or a notebook's exported text exactly as hashed (before newline translation).
    pub executable: Vec<u8>,
    /// For notebooks: where each cell landed in the exported text.
    pub cells: Vec<notebook::CellLines>,
    /// With [`InspectOptions::explain`]: why each reason is there and what to change.
    pub explanation: Option<explain::Explanation>,
    /// Readiness v2 inside a package directory: what the modules importing this one need.
    pub package: Option<readiness::v2::package::PackageOutcome>,
}

/// Inspect source bytes that are already in memory.
pub fn inspect_bytes(
    bytes: &[u8],
    kind: SourceKind,
    module: &str,
    options: InspectOptions,
) -> Result<Outcome, InspectError> {
    inspect_bytes_parsed(bytes, kind, module, options).map(|(outcome, _)| outcome)
}

/// [`inspect_bytes`] that also returns the parsed module: interface planning lowers
/// annotations from the AST with the module's name resolution ([`interface`]).
pub fn inspect_bytes_parsed(
    bytes: &[u8],
    kind: SourceKind,
    module: &str,
    options: InspectOptions,
) -> Result<(Outcome, ParsedModule), InspectError> {
    inspect_bytes_in_package(bytes, kind, module, options, None)
}

/// [`inspect_bytes_parsed`] for a module of a package directory: under readiness v2 its local
/// imports are judged with `package` ([`readiness::v2::package`]).
pub fn inspect_bytes_in_package(
    bytes: &[u8],
    kind: SourceKind,
    module: &str,
    options: InspectOptions,
    package: Option<&readiness::v2::package::PackageContext>,
) -> Result<(Outcome, ParsedModule), InspectError> {
    inspect_bytes_in_index(bytes, kind, module, options, package, None)
}

/// [`inspect_bytes_in_package`]; under readiness v2, names the module imports from the other
/// modules of `index` (or of the package context's index) may be input types
/// ([`readiness::imported`]). `serve DIR` and `generate DIR` inspect a module this way.
pub fn inspect_bytes_in_index(
    bytes: &[u8],
    kind: SourceKind,
    module: &str,
    options: InspectOptions,
    package: Option<&readiness::v2::package::PackageContext>,
    index: Option<&package::PackageIndex>,
) -> Result<(Outcome, ParsedModule), InspectError> {
    inspect_bytes_reusing(
        bytes,
        kind,
        module,
        options,
        (package, index),
        Earlier::Nothing,
    )
}

/// What an earlier step computed for a module, handed to the next inspection of it.
pub(crate) enum Earlier {
    Nothing,
    /// The module's parse ([`package::PackageIndex::parse`]: the same decoding, budgets and
    /// parser).
    Parsed(ParsedModule),
    /// Everything an inspection computes before readiness ([`Built`]).
    Built(Box<Built>),
}

/// The part of a Python module's inspection that its readiness context cannot change: the
/// parse, the IR and its digest. Readiness v2 assesses some modules of a directory twice (the
/// second time with every closure known, [`project`]); the second assessment starts from this
/// instead of reading, parsing and building again. It is only used for exactly the bytes and
/// module name it was built from (the IR is a function of them), so the outcome is the same
/// either way.
pub(crate) struct Built {
    parsed: ParsedModule,
    ir: apizr_ir::CapabilityIr,
    ir_digest: Digest,
    /// The source bytes it was built from.
    bytes: Vec<u8>,
}

impl Built {
    /// What a successful inspection of a Python module leaves to reuse (its outcome is given
    /// up: the IR moves here). An unparse refusal the explanation recorded after the last
    /// check is dropped: a fresh parse has none, and the next assessment records its own.
    pub(crate) fn of(outcome: Outcome, parsed: ParsedModule) -> Option<Box<Self>> {
        let _ = parsed.take_unparse_error();
        let Outcome {
            inspection,
            executable,
            cells,
            ..
        } = outcome;
        let python = inspection.capability_ir.source.kind == apizr_ir::SourceKind::Python;
        (python && cells.is_empty()).then(|| {
            Box::new(Built {
                parsed,
                ir: inspection.capability_ir,
                ir_digest: inspection.ir_digest,
                bytes: executable,
            })
        })
    }
}

/// [`inspect_bytes_in_index`], given what an earlier step computed for the module. It is used
/// only when it is of exactly these bytes (a parse: this text) under this name; otherwise the
/// text is parsed here, so the outcome is the same either way.
fn inspect_bytes_reusing(
    bytes: &[u8],
    kind: SourceKind,
    module: &str,
    options: InspectOptions,
    (package, index): (
        Option<&readiness::v2::package::PackageContext>,
        Option<&package::PackageIndex>,
    ),
    earlier: Earlier,
) -> Result<(Outcome, ParsedModule), InspectError> {
    let module = source::validate_module_name(module)?;
    if bytes.len() as u64 > source::MAX_SOURCE_BYTES {
        return Err(InspectError::TooLarge {
            size: bytes.len() as u64,
            limit: source::MAX_SOURCE_BYTES,
        });
    }
    let parsed_before = match earlier {
        Earlier::Built(built)
            if kind == SourceKind::Python
                && built.parsed.module == module
                && built.bytes == bytes =>
        {
            let Built {
                parsed,
                ir,
                ir_digest,
                bytes,
            } = *built;
            let prepared = Prepared {
                ir,
                ir_digest,
                notes: Vec::new(),
                executable: bytes,
                cells: Vec::new(),
            };
            // The facts are a function of the parse alone: collected again, not kept.
            let facts = facts::ModuleFacts::collect(&parsed);
            let outcome = assess_prepared(&parsed, &facts, prepared, options, (package, index))?;
            drop(facts);
            return Ok((outcome, parsed));
        }
        Earlier::Built(built) => Some(built.parsed),
        Earlier::Parsed(parsed) => Some(parsed),
        Earlier::Nothing => None,
    };
    let mut notes = Vec::new();
    let mut cells = Vec::new();
    let (text, transformed_digest, executable) = match kind {
        SourceKind::Python => (decode::decode_python(bytes)?, None, bytes.to_vec()),
        SourceKind::Notebook => {
            let export = notebook::export(bytes, options.strip_magics)?;
            notes.extend(export.notes);
            cells = export.cells;
            let digest = Digest::sha256(export.text.as_bytes());
            let executable = export.text.as_bytes().to_vec();
            (export.text, Some(digest), executable)
        }
    };
    let parsed = match parsed_before {
        Some(before)
            if kind == SourceKind::Python && before.module == module && before.text == text =>
        {
            before
        }
        _ => {
            budget::prescan(&text)?;
            let parsed = ParsedModule::parse(text, module.clone())?;
            budget::check_structure(&parsed)?;
            parsed
        }
    };
    if kind == SourceKind::Notebook
        && let Some(position) = notebook::find_get_ipython_call(&parsed)
    {
        return Err(InspectError::NotebookMagics {
            position: Some(position),
        });
    }
    let record = SourceRecord {
        kind,
        module,
        digest: Digest::sha256(bytes),
        transformed_digest,
    };
    let facts = facts::ModuleFacts::collect(&parsed);
    let ir = discovery::build_ir(&parsed, &facts, record, options.readiness);
    if let Some(error) = parsed.take_unparse_error() {
        return Err(error.into());
    }
    reject_duplicate_parameters(&ir)?;
    let ir_digest = Digest::sha256(&ir.canonical_bytes()?);
    let prepared = Prepared {
        ir,
        ir_digest,
        notes,
        executable,
        cells,
    };
    let outcome = assess_prepared(&parsed, &facts, prepared, options, (package, index))?;
    drop(facts);
    Ok((outcome, parsed))
}

/// A module's IR and what goes with it into the outcome: what readiness and the explanation
/// are computed from, with the module's parse and facts.
struct Prepared {
    ir: apizr_ir::CapabilityIr,
    ir_digest: Digest,
    notes: Vec<Note>,
    executable: Vec<u8>,
    cells: Vec<notebook::CellLines>,
}

/// The outcome of a prepared module: its readiness report (and explanation).
fn assess_prepared(
    parsed: &ParsedModule,
    facts: &facts::ModuleFacts,
    prepared: Prepared,
    options: InspectOptions,
    (package, index): (
        Option<&readiness::v2::package::PackageContext>,
        Option<&package::PackageIndex>,
    ),
) -> Result<Outcome, InspectError> {
    let Prepared {
        ir,
        ir_digest,
        notes,
        executable,
        cells,
    } = prepared;
    let (readiness, package_outcome) = readiness::assess_in_index(
        parsed,
        facts,
        &ir,
        ir_digest.clone(),
        options.readiness,
        package,
        index,
    );
    if let Some(error) = parsed.take_unparse_error() {
        return Err(error.into());
    }
    let readiness_digest = Digest::sha256(&apizr_ir::canonical_bytes(&readiness)?);
    let explanation = options.explain.then(|| {
        let report = explain::Report {
            readiness: &readiness,
            digest: &readiness_digest,
            cells: &cells,
        };
        explain::explain_in_index(parsed, facts, &ir, report, package, index)
    });
    debug_assert!(
        ir.schema_version == CAPABILITY_SCHEMA
            || options.readiness == apizr_ir::ReadinessPolicy::V2
    );
    Ok(Outcome {
        inspection: Inspection {
            capability_ir: ir,
            ir_digest,
            readiness,
            readiness_digest,
            schema_version: INSPECTION_SCHEMA,
        },
        notes,
        executable,
        cells,
        explanation,
        package: package_outcome,
    })
}

/// The reference's IR model refuses a signature that repeats a parameter name (CPython's parser
/// accepts `def f(a, a)`; only the compiler would reject it).
fn reject_duplicate_parameters(ir: &apizr_ir::CapabilityIr) -> Result<(), InspectError> {
    for capability in &ir.capabilities {
        let signatures = std::iter::once((&capability.signature, &capability.source)).chain(
            capability
                .overloads
                .iter()
                .map(|o| (&o.signature, &o.source)),
        );
        for (signature, span) in signatures {
            let mut seen = std::collections::HashSet::new();
            if let Some(dup) = signature.parameters.iter().find(|p| !seen.insert(&p.name)) {
                return Err(InspectError::DuplicateParameter {
                    symbol: span.symbol.clone(),
                    name: dup.name.clone(),
                    position: Position {
                        line: span.line,
                        column: 1,
                    },
                });
            }
        }
    }
    Ok(())
}

/// Read and inspect one file. `module` overrides the default (the file stem).
pub fn inspect_path(
    path: &std::path::Path,
    module: Option<&str>,
    options: InspectOptions,
) -> Result<Outcome, InspectError> {
    inspect_path_in_package(path, module, options, None)
}

/// [`inspect_path`] for a module of a package directory (see [`inspect_bytes_in_package`]).
pub fn inspect_path_in_package(
    path: &std::path::Path,
    module: Option<&str>,
    options: InspectOptions,
    package: Option<&readiness::v2::package::PackageContext>,
) -> Result<Outcome, InspectError> {
    inspect_path_parsed(path, module, options, package, Earlier::Nothing)
        .map(|(outcome, _)| outcome)
}

/// [`inspect_path_in_package`] with what an earlier step computed for the module
/// ([`inspect_bytes_reusing`]); also returns the parse.
pub(crate) fn inspect_path_parsed(
    path: &std::path::Path,
    module: Option<&str>,
    options: InspectOptions,
    package: Option<&readiness::v2::package::PackageContext>,
    earlier: Earlier,
) -> Result<(Outcome, ParsedModule), InspectError> {
    let (bytes, kind) = source::read_source(path)?;
    // The reference treats an empty `--module-name ''` like an absent one: use the file stem.
    let (module, defaulted) = match module {
        Some(name) if !name.is_empty() => (name.to_string(), false),
        _ => (source::default_module_name(path)?, true),
    };
    let (mut outcome, parsed) =
        inspect_bytes_reusing(&bytes, kind, &module, options, (package, None), earlier)?;
    if defaulted
        && module == "__init__"
        && let Some(package) = source::package_name(path)
    {
        // The reference names it `__init__` and the name is hashed, so it stays; but a worker
        // importing `__init__` is not what the user means.
        outcome.notes.push(Note {
            position: None,
            message: format!(
                "this is package `{package}`'s `__init__.py`, named `__init__` as the reference \
                 names it; pass `--module-name {package}` (or the dotted name) for the name \
                 Python imports it under, or inspect the package directory"
            ),
        });
    }
    Ok((outcome, parsed))
}
