//! Readiness v2 for chosen modules of a package directory: `serve DIR` and `generate DIR`
//! assess the modules they serve exactly as `inspect DIR` assesses them, by the same two
//! passes ([`super::packaged`]), so a function `inspect DIR --readiness v2` calls ready is
//! served without `--allow-conditional`, and one it refuses is refused with the same reasons.
//!
//! Why the whole directory's first pass: a module's verdict depends on the own-proofs of every
//! module its import runs (parents included) and on the exports of those it reads, and theirs
//! on their own imports; only the second pass is limited to the chosen modules.
//!
//! What the proof covers is what the worker imports: a module served with its package gets
//! the files of its import closure (parents, import-time and call-time imports: a superset of
//! the import-time closure the proof reads) laid out as packages, so importing it runs its
//! parents' `__init__` first and then its import-time imports, as the proof assumes. A module
//! that stands alone is served as its file with empty parents; the proof waives the parent
//! obligation for exactly those modules ([`crate::package::PackageIndex::stands_alone`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::walk::{self, Found};
use super::{Progress, ProjectOptions, inspect_found_in, inspect_pool, packaged};
use crate::package::PackageIndex;
use crate::readiness::v2::package::PackageContext;
use crate::{InspectError, InspectOptions, Outcome, ParsedModule};

type Inspected = Result<(Outcome, ParsedModule), InspectError>;

/// Each of `modules` (module name of `index`, its source bytes), inspected with `options` and
/// the package context `inspect DIR` gives it (`index`'s root, its declared dependencies and,
/// under a wheelhouse, `provides`), with its parsed module for interface planning. In the
/// order of `modules`. Meant for readiness v2: v1 never looks at the package (its verdict is
/// the module's alone, as is every verdict on a module the index does not hold).
pub fn inspect_modules_in_dir(
    index: &PackageIndex,
    modules: &[(&str, &[u8])],
    options: InspectOptions,
    provides: &BTreeMap<String, String>,
) -> Result<Vec<(Outcome, ParsedModule)>, InspectError> {
    let root = index.root();
    let read_error = |message: String| InspectError::Read {
        path: root.to_path_buf(),
        message,
    };
    let found = walk::collect(root).map_err(|e| read_error(e.to_string()))?;
    let position: HashMap<&str, usize> = modules
        .iter()
        .enumerate()
        .map(|(i, (module, _))| (*module, i))
        .collect();
    let chosen = |f: &Found| -> Option<usize> {
        let module = index.module_of(Path::new(&f.rel))?;
        position.get(module).copied()
    };
    let project = ProjectOptions {
        inspect: options,
        threads: None,
        keep_envelopes: false,
    };
    // A chosen module: its bytes inspected in full; any other: only what v2 learned of it.
    // Only chosen modules are assessed twice, from the caller's bytes: nothing is kept.
    let inspect = |f: &Found,
                   ctx: Option<&PackageContext>,
                   earlier: crate::Earlier,
                   _: Option<&packaged::Keep>|
     -> packaged::Inspected<Option<(usize, Inspected)>> {
        // A chosen module's bytes are the caller's: the parse of the file is not used for it.
        let Some(i) = chosen(f) else {
            return (
                None,
                inspect_found_in(f.clone(), &project, ctx, earlier, None).1,
                None,
            );
        };
        let (module, bytes) = modules[i];
        let inspected = crate::inspect_bytes_in_index(
            bytes,
            apizr_ir::SourceKind::Python,
            module,
            options,
            ctx,
            None,
        );
        let learned = inspected
            .as_ref()
            .ok()
            .and_then(|(outcome, _)| outcome.package.clone());
        (Some((i, inspected)), learned, None)
    };
    let declared = crate::package::declared_dependencies(root);
    let wanted = |f: &Found| chosen(f).is_some();
    let pool = inspect_pool(None).map_err(|e| read_error(e.to_string()))?;
    let results = pool.install(|| {
        packaged::inspect_all(
            index,
            (&declared, provides),
            found,
            (&|_: Progress| {}, &wanted),
            &inspect,
        )
    });
    let mut out: Vec<Option<Inspected>> = modules.iter().map(|_| None).collect();
    for (i, inspected) in results.into_iter().flatten() {
        out[i] = Some(inspected);
    }
    out.into_iter()
        .zip(modules)
        .map(|(inspected, (module, _))| {
            inspected.unwrap_or_else(|| Err(read_error(format!("no module {module} here"))))
        })
        .collect()
}
