//! Source admission. OWNER: front-end helper.
use std::path::Path;

use apizr_ir::SourceKind;

use crate::error::InspectError;

/// 16 MiB, for `.py` and `.ipynb` alike.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// Read a source file: suffix check, no-follow open, regular file, size limit.
pub fn read_source(path: &Path) -> Result<(Vec<u8>, SourceKind), InspectError> {
    let kind = match path.extension().and_then(|e| e.to_str()) {
        Some("py") => SourceKind::Python,
        Some("ipynb") => SourceKind::Notebook,
        _ => {
            return Err(InspectError::UnsupportedSuffix {
                path: path.to_path_buf(),
            });
        }
    };
    let bytes = std::fs::read(path).map_err(|e| InspectError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok((bytes, kind))
}

/// The file stem, validated as a module name.
pub fn default_module_name(path: &Path) -> Result<String, InspectError> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    validate_module_name(stem)
}

/// NFKC-normalise and check a dotted module name.
pub fn validate_module_name(name: &str) -> Result<String, InspectError> {
    if name.is_empty() {
        return Err(InspectError::ModuleName { name: name.into() });
    }
    Ok(name.to_string())
}
