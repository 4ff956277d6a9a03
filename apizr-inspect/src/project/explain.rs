//! The explanation of a whole directory (`apizr inspect DIR --explain`): one module
//! explanation (`apizr.explanation/v1`) per inspected file, errors as in the project document.
//!
//! ```text
//! {"modules":[{"explanation":EXPLANATION,"module","path"}
//!            |{"error":{"column","kind","line","message"},"module","path"}],
//!  "schema_version":"apizr.project-explanation/v1"}
//! ```

use serde::Serialize;

use super::{ModuleEntry, ProjectInspection};
use crate::explain::Explanation;

pub const PROJECT_EXPLANATION_SCHEMA: &str = "apizr.project-explanation/v1";

#[derive(Serialize)]
struct Document<'a> {
    modules: Vec<Entry<'a>>,
    schema_version: &'static str,
}

#[derive(Serialize)]
struct Entry<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<&'a Explanation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Error<'a>>,
    module: Option<&'a str>,
    path: &'a str,
}

#[derive(Serialize)]
struct Error<'a> {
    column: Option<u32>,
    kind: &'a str,
    line: Option<u32>,
    message: &'a str,
}

impl ProjectInspection {
    /// Canonical bytes of the explanation document. Modules inspected without
    /// [`crate::InspectOptions::explain`] have no explanation and are left out.
    pub fn explanation_bytes(&self) -> Result<Vec<u8>, apizr_ir::json::CanonicalError> {
        let modules = self.modules.iter().filter_map(entry).collect();
        apizr_ir::canonical_bytes(&Document {
            modules,
            schema_version: PROJECT_EXPLANATION_SCHEMA,
        })
    }
}

fn entry(module: &ModuleEntry) -> Option<Entry<'_>> {
    let (explanation, error) = match &module.result {
        Ok(report) => (Some(report.explanation.as_ref()?), None),
        Err(error) => (
            None,
            Some(Error {
                column: error.position.map(|p| p.column),
                kind: error.kind,
                line: error.position.map(|p| p.line),
                message: &error.message,
            }),
        ),
    };
    Some(Entry {
        explanation,
        error,
        module: module.module.as_deref(),
        path: &module.path,
    })
}
