//! Structure budgets. OWNER: front-end helper.
use crate::error::InspectError;
use crate::module::ParsedModule;

/// Cheap pre-scan of nesting before the recursive-descent parser sees the text.
pub fn prescan(_text: &str) -> Result<(), InspectError> {
    Ok(())
}

/// At most 100,000 CPython AST nodes and depth 128.
pub fn check_structure(_module: &ParsedModule) -> Result<(), InspectError> {
    Ok(())
}
