//! What `#[python]` and `#[endpoint]` expansions name (`apizr_runtime::__private`). Hidden:
//! the shapes change with the macros, which are always the same version as this crate.
//!
//! A binding is static data ([`PythonBinding`]): the embedded source bytes, the contract as
//! canonical JSON, the policy as canonical JSON and the digest chain computed at compile time.
//! Before anything runs, the embedded bytes are hashed again and compared with the chain, so
//! a binary whose data was altered answers `source_mismatch` instead of running other code.

use std::future::Future;

pub use schemars;
pub use serde;
pub use serde_json;

use apizr_ir::Digest;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::CallError;
use crate::status::Status;

/// `.py` or `.ipynb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Python,
    Notebook,
}

/// How the binding runs, with its policy as canonical JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Governance {
    /// The warm pool of ungoverned workers.
    Direct,
    /// A fresh governed process per call under an `apizr.execution/v1` policy.
    V1 { policy: &'static str },
    /// A fresh container per call under an `apizr.execution/v2` policy.
    V2 {
        policy: &'static str,
        image: &'static str,
        platform: &'static str,
    },
}

/// The digest chain (`sha256:<hex>`), computed when the binding was compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digests {
    pub source: &'static str,
    pub executable: &'static str,
    pub ir: &'static str,
    pub readiness: &'static str,
    pub interface: &'static str,
    pub policy: Option<&'static str>,
    pub plan: Option<&'static str>,
}

/// One `#[python]` binding.
#[derive(Debug)]
pub struct PythonBinding {
    pub rust_name: &'static str,
    /// The file as the attribute names it (relative to the crate), for messages.
    pub file: &'static str,
    /// The file's bytes (`include_bytes!`).
    pub source: &'static [u8],
    pub kind: SourceKind,
    /// A notebook's exported text, which is what runs; `None` for `.py` (the source runs).
    pub notebook_executable: Option<&'static [u8]>,
    pub module: &'static str,
    pub function: &'static str,
    pub capability_id: &'static str,
    /// Canonical JSON of the InvocationContract.
    pub contract: &'static str,
    pub governance: Governance,
    /// Bound with `allow_conditional` although its readiness is `conditional`.
    pub conditional: bool,
    pub digests: Digests,
}

impl PythonBinding {
    /// The bytes a worker executes.
    pub fn executable(&self) -> &'static [u8] {
        self.notebook_executable.unwrap_or(self.source)
    }

    /// Check the embedded bytes against the compile-time digests (`source_mismatch` if not).
    pub fn verify(&self) -> Result<(), CallError> {
        let checks = [
            ("source", self.source, self.digests.source),
            ("executable", self.executable(), self.digests.executable),
            ("contract", self.contract_bytes(), self.digests.interface),
        ];
        for (what, bytes, expected) in checks {
            if Digest::sha256(bytes).prefixed() != expected {
                return Err(CallError::new(
                    Status::SourceMismatch,
                    format!(
                        "the embedded {what} of `{}` does not match its digest",
                        self.rust_name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The contract as hashed (canonical JSON + LF).
    fn contract_bytes(&self) -> &'static [u8] {
        // Expansions embed the contract without its final LF; the digest covers it.
        static_with_newline(self.contract)
    }
}

/// `text` + `\n` as a leaked-once static (one small allocation per binding and process).
fn static_with_newline(text: &'static str) -> &'static [u8] {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<usize, &'static [u8]>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(text.as_ptr() as usize).or_insert_with(|| {
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(b'\n');
        Box::leak(bytes.into_boxed_slice())
    })
}

/// One encoded argument (`None`: omitted, so the Python default applies).
#[derive(Debug)]
pub struct Argument {
    pub name: &'static str,
    value: Option<Result<Value, String>>,
}

impl Argument {
    pub fn required<T: Serialize + ?Sized>(name: &'static str, value: &T) -> Self {
        Argument {
            name,
            value: Some(serde_json::to_value(value).map_err(|e| e.to_string())),
        }
    }

    /// `None` leaves the argument out.
    pub fn optional<T: Serialize>(name: &'static str, value: &Option<T>) -> Self {
        Argument {
            name,
            value: value
                .as_ref()
                .map(|v| serde_json::to_value(v).map_err(|e| e.to_string())),
        }
    }
}

/// The arguments as the JSON object a caller of `apizr execute` would write.
pub fn arguments_object(args: &[Argument]) -> Result<serde_json::Map<String, Value>, CallError> {
    let mut object = serde_json::Map::new();
    for arg in args {
        match &arg.value {
            None => {}
            Some(Ok(value)) => {
                object.insert(arg.name.to_string(), value.clone());
            }
            Some(Err(error)) => {
                return Err(CallError::new(
                    Status::InvalidInput,
                    format!("argument `{}` cannot be encoded as JSON: {error}", arg.name),
                ));
            }
        }
    }
    Ok(object)
}

/// A synchronous call of a binding.
pub fn call_sync<T: DeserializeOwned>(
    binding: &'static PythonBinding,
    args: &[Argument],
) -> Result<T, CallError> {
    let arguments = arguments_object(args)?;
    super::run::run_blocking(binding, &arguments)
}

/// An asynchronous call of a binding.
pub async fn call_async<T: DeserializeOwned>(
    binding: &'static PythonBinding,
    args: &[Argument],
) -> Result<T, CallError> {
    let arguments = arguments_object(args)?;
    if tokio::runtime::Handle::try_current().is_err() {
        // Not on tokio (another executor, or a plain block_on): run on this thread.
        return super::run::run_blocking(binding, &arguments);
    }
    super::run::run_async(binding, &arguments).await
}

/// The binding's error type from a [`CallError`] (`E: From<CallError>`).
pub fn convert_error<T, E: From<CallError>>(result: Result<T, CallError>) -> Result<T, E> {
    result.map_err(E::from)
}

/// A bound Python function or a native endpoint, for a server's registration list.
#[derive(Debug)]
pub enum Registration {
    Python(&'static PythonBinding),
    Native(NativeEndpoint),
}

impl Registration {
    /// The name a server exposes.
    pub fn name(&self) -> &'static str {
        match self {
            Registration::Python(b) => b.rust_name,
            Registration::Native(e) => e.name,
        }
    }
}

pub use crate::serve::native::{BoxFuture, EndpointError, Handler, Limits, NativeEndpoint};

/// The JSON Schema (draft 2020-12) of what `T` deserializes from.
pub fn input_schema_for<T: schemars::JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_deserialize();
    // Subschemas inline (no `$defs`): the schema is embedded in openapi.json, where a
    // `#/$defs/...` reference would resolve against the document instead.
    settings.inline_subschemas = true;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The JSON Schema (draft 2020-12) of what `T` serializes to.
pub fn output_schema_for<T: schemars::JsonSchema + ?Sized>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = true;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

pub fn decode_arguments<T: DeserializeOwned>(input: Value) -> Result<T, EndpointError> {
    serde_json::from_value(input).map_err(|e| EndpointError::InvalidInput(e.to_string()))
}

pub fn encode_output<T: Serialize + ?Sized>(value: &T) -> Result<Value, EndpointError> {
    serde_json::to_value(value).map_err(|e| EndpointError::ResultInvalid(e.to_string()))
}

pub fn encode_result<T: Serialize, E: std::fmt::Display>(
    result: Result<T, E>,
) -> Result<Value, EndpointError> {
    match result {
        Ok(value) => encode_output(&value),
        Err(error) => Err(EndpointError::Failed(error.to_string())),
    }
}

pub fn boxed<F>(future: F) -> BoxFuture
where
    F: Future<Output = Result<Value, EndpointError>> + Send + 'static,
{
    Box::pin(future)
}
