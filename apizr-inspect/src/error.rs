//! Every way an inspection can fail. All of them are input errors (CLI exit code 2); each
//! carries enough position information for a precise, one-line message.

use std::path::PathBuf;

/// A 1-based line and column (column counted in characters, like editors show it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The file could not be opened or read (missing, permission, symlink, directory, ...).
    #[error("{path}: {message}")]
    Read { path: PathBuf, message: String },

    /// Only `.py` and `.ipynb` are accepted.
    #[error("{path}: unsupported source suffix; expected a .py file or a .ipynb notebook")]
    UnsupportedSuffix { path: PathBuf },

    /// More than 16 MiB.
    #[error("source is {size} bytes; the limit is {limit} bytes")]
    TooLarge { size: u64, limit: u64 },

    /// The logical module name is not a dotted Python identifier.
    #[error("Expected a logical dotted Python module name, got {name:?}")]
    ModuleName { name: String },

    /// PEP 263 decoding failed (unknown codec, invalid bytes for the declared codec, NUL bytes).
    #[error("{message}")]
    Decode {
        message: String,
        position: Option<Position>,
    },

    /// The text does not parse with the CPython 3.11 grammar.
    #[error("{message}")]
    Syntax {
        message: String,
        position: Position,
        /// The offending source line (without its newline), for a caret display.
        line_text: String,
    },

    /// More than 100,000 AST nodes or deeper than 128.
    #[error("{message}")]
    StructureLimit { message: String },

    /// The notebook is not valid JSON, not an object, or not a valid nbformat 4 notebook.
    #[error("{message}")]
    Notebook { message: String },

    /// The exported notebook calls `get_ipython()` (magics or shell commands).
    #[error(
        "Notebook magics and shell commands are not supported; convert them to ordinary Python first"
    )]
    NotebookMagics { position: Option<Position> },

    /// CPython 3.11 `ast.unparse` refuses an annotation, default or decorator (the reference
    /// fails the inspection with this message).
    #[error("{0}")]
    Unparse(#[from] crate::unparse::UnparseError),

    /// A capability (or overload) signature repeats a parameter name; the reference's IR model
    /// rejects such a document.
    #[error(
        "Duplicate parameter names: '{name}' appears more than once in the signature of {symbol}"
    )]
    DuplicateParameter {
        symbol: String,
        name: String,
        position: Position,
    },

    /// A value could not be canonically encoded (should not happen for IR built here).
    #[error("internal encoding error: {0}")]
    Encoding(#[from] apizr_ir::CanonicalError),
}

impl InspectError {
    /// A stable, machine-readable name for each kind of inspection failure.
    pub fn kind(&self) -> &'static str {
        match self {
            InspectError::Read { .. } => "read",
            InspectError::UnsupportedSuffix { .. } => "unsupported_suffix",
            InspectError::TooLarge { .. } => "too_large",
            InspectError::ModuleName { .. } => "module_name",
            InspectError::Decode { .. } => "decode",
            InspectError::Syntax { .. } => "syntax",
            InspectError::StructureLimit { .. } => "structure_limit",
            InspectError::Notebook { .. } => "notebook",
            InspectError::NotebookMagics { .. } => "notebook_magics",
            InspectError::Unparse(_) => "unparse",
            InspectError::DuplicateParameter { .. } => "duplicate_parameter",
            InspectError::Encoding(_) => "encoding",
        }
    }

    /// Where in the (decoded or exported) text the problem is, if known.
    pub fn position(&self) -> Option<Position> {
        match self {
            InspectError::Syntax { position, .. }
            | InspectError::DuplicateParameter { position, .. } => Some(*position),
            InspectError::Decode { position, .. } | InspectError::NotebookMagics { position } => {
                *position
            }
            _ => None,
        }
    }
}
