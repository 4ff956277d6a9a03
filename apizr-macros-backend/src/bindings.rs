//! The Rust source of `#[python]` bindings for planned contracts: what `apizr generate` writes
//! into a project's `src/main.rs`, one binding per capability.
//!
//! Rule: the types come from the one reverse mapping ([`crate::check::suggest`]) of the
//! checker's mapping, so what the generator writes is what the macro accepts (the tests
//! below run the written bindings through [`crate::analyze_binding`]). A TypedDict becomes a
//! serde struct of its own. Bindings live in a module of their own (`mod bindings`) so that a
//! Python function named `main` cannot clash with the program's `main`.

use apizr_ir::interface::InvocationContract;

use crate::check::suggest::{Structs, rust_ident, rust_type_with};

/// How the bound functions run, as the attribute spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingMode<'a> {
    /// `mode = "direct"`: the warm pool.
    Direct,
    /// `policy = "<file>"`: a v1 policy file (relative to the crate).
    Policy(&'a str),
    /// A v2 policy file with its runtime image and platform.
    Container {
        policy: &'a str,
        image: &'a str,
        platform: &'a str,
    },
}

/// The file every binding binds and how its functions run.
#[derive(Debug, Clone, Copy)]
pub struct BindingSource<'a> {
    /// Relative to the crate's manifest directory.
    pub file: &'a str,
    pub module: &'a str,
    pub mode: BindingMode<'a>,
    /// Bind `conditional` capabilities (the project was generated with `--allow-conditional`).
    pub allow_conditional: bool,
}

/// The written bindings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenBindings {
    /// `mod bindings { ... }`, ready to paste into a crate root.
    pub module: String,
    /// The paths to register, in contract order (`bindings::total`).
    pub paths: Vec<String>,
}

/// A contract Rust cannot bind: a parameter name that is not a Rust identifier, or a
/// `*args`/`**kwargs` parameter (readiness v2), which a fixed Rust signature cannot pass (the
/// generator then serves the capability from its bundle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unbindable {
    pub function: String,
    pub parameter: String,
    /// The parameter is `*args` or `**kwargs`.
    pub variadic: bool,
}

impl std::fmt::Display for Unbindable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = if self.variadic {
            "is variadic (*args/**kwargs)"
        } else {
            "is not a Rust identifier"
        };
        write!(
            f,
            "parameter `{}` of `{}` {why}",
            self.parameter, self.function
        )
    }
}

impl std::error::Error for Unbindable {}

/// Names a binding function may not take: they would shadow what the signatures name.
const RESERVED: [&str; 6] = [
    "std",
    "core",
    "alloc",
    "serde",
    "serde_json",
    "apizr_runtime",
];

/// The bindings of `contracts`, all from `source`.
pub fn write(
    source: &BindingSource<'_>,
    contracts: &[InvocationContract],
) -> Result<WrittenBindings, Unbindable> {
    let mut structs = Structs::default();
    let mut items = String::new();
    let mut paths = Vec::new();
    for (i, contract) in contracts.iter().enumerate() {
        let fn_ident = rust_ident(&contract.name)
            .filter(|id| id.starts_with(|c: char| c.is_ascii_lowercase() || c == '_'))
            .filter(|id| !RESERVED.contains(&id.as_str()))
            .unwrap_or_else(|| format!("capability_{i}"));
        let mut args = Vec::new();
        for param in &contract.parameters {
            let unbindable = |variadic| Unbindable {
                function: contract.name.clone(),
                parameter: param.name.clone(),
                variadic,
            };
            if param.kind.is_variadic() {
                return Err(unbindable(true));
            }
            let ident = rust_ident(&param.name).ok_or_else(|| unbindable(false))?;
            let hint = format!("{}_{}", contract.name, param.name);
            let ty = rust_type_with(&param.type_spec, !param.required, &mut structs, &hint);
            args.push(format!("{ident}: {ty}"));
        }
        let hint = format!("{}_result", contract.name);
        let returns = rust_type_with(&contract.returns, false, &mut structs, &hint);
        items.push_str(&format!(
            "    #[apizr_runtime::python({})]\n    pub fn {fn_ident}({}) -> Result<{returns}, apizr_runtime::CallError>;\n\n",
            attribute(source, &contract.name),
            args.join(", ")
        ));
        paths.push(format!("bindings::{fn_ident}"));
    }
    let mut module = String::from(
        "/// One binding per capability, checked against the Python source at compile time.\n\
         #[allow(dead_code, non_snake_case, non_camel_case_types, clippy::all)]\n\
         mod bindings {\n",
    );
    for definition in structs.definitions() {
        for line in definition.lines() {
            module.push_str("    ");
            module.push_str(line);
            module.push('\n');
        }
        module.push('\n');
    }
    module.push_str(&items);
    while module.ends_with("\n\n") {
        module.pop();
    }
    module.push_str("}\n");
    Ok(WrittenBindings { module, paths })
}

fn attribute(source: &BindingSource<'_>, function: &str) -> String {
    let mut parts = vec![
        format!("file = {:?}", source.file),
        format!("module = {:?}", source.module),
        format!("function = {function:?}"),
    ];
    match source.mode {
        BindingMode::Direct => parts.push("mode = \"direct\"".into()),
        BindingMode::Policy(file) => parts.push(format!("policy = {file:?}")),
        BindingMode::Container {
            policy,
            image,
            platform,
        } => parts.extend([
            format!("policy = {policy:?}"),
            format!("runtime_image = {image:?}"),
            format!("runtime_platform = {platform:?}"),
        ]),
    }
    if source.allow_conditional {
        parts.push("allow_conditional".into());
    }
    parts.join(", ")
}
