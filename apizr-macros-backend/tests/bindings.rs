//! The generator's bindings pass the macro's checker: every item `bindings::write` produces
//! for a source (TypedDicts, defaults, keyword-only parameters, a keyword as a name, a Python
//! function named `main`) is analysed by `analyze_binding` against that same source, without
//! an error. Generator and checker share one type mapping; this is the end-to-end proof.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use apizr_macros_backend::bindings::{BindingMode, BindingSource, write};
use apizr_macros_backend::{ManifestDir, analyze_binding, source};
use quote::ToTokens as _;

const SOURCE: &str = r#"from typing import Any, Literal, NotRequired, Optional, TypedDict


class Item(TypedDict):
    sku: str
    qty: int
    note: NotRequired[str]


class Order(TypedDict):
    items: list[Item]
    rush: bool


def total(prices: list[float], tax: Optional[float] = None) -> float:
    return sum(prices) * (1 + (tax or 0))


def place(order: Order, *, channel: Literal["web", "shop"] = "web") -> Order:
    return order


def main(type: int, tags: dict[str, list[int]], pair: tuple[int, str]) -> dict[str, Any]:
    return {}


def maybe(x: int | None) -> int | None:
    return x
"#;

#[test]
fn written_bindings_pass_the_checker() {
    let dir = std::env::temp_dir().join(format!("apizr-bindings-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("source")).unwrap();
    std::fs::write(dir.join("source/shop.py"), SOURCE).unwrap();
    let cached = source::analyze(SOURCE.as_bytes(), apizr_ir::SourceKind::Python, "shop");
    let analysis = cached.as_ref().as_ref().unwrap();
    let contracts: Vec<_> = analysis
        .capabilities
        .iter()
        .map(|p| p.contract.clone().unwrap().unwrap())
        .collect();
    assert_eq!(contracts.len(), 4);
    let source = BindingSource {
        file: "source/shop.py",
        module: "shop",
        mode: BindingMode::Direct,
        allow_conditional: false,
    };
    let written = write(&source, &contracts).unwrap();
    assert_eq!(
        written.paths,
        [
            "bindings::main",
            "bindings::maybe",
            "bindings::place",
            "bindings::total"
        ]
    );
    for line in [
        "pub fn total(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, apizr_runtime::CallError>;",
        "pub fn place(order: PlaceOrder, channel: Option<String>) -> Result<PlaceResult, apizr_runtime::CallError>;",
        "pub fn main(r#type: i64, tags: std::collections::BTreeMap<String, Vec<i64>>, pair: (i64, String)) -> Result<serde_json::Value, apizr_runtime::CallError>;",
        "pub fn maybe(x: Option<i64>) -> Result<Option<i64>, apizr_runtime::CallError>;",
        "pub struct PlaceOrderItems {",
        "pub items: Vec<PlaceOrderItems>,",
    ] {
        assert!(written.module.contains(line), "{line}\n{}", written.module);
    }
    let file: syn::File = syn::parse_str(&written.module).unwrap();
    let syn::Item::Mod(module) = &file.items[0] else {
        panic!("not a module")
    };
    let mut checked = 0;
    for item in &module.content.as_ref().unwrap().1 {
        let syn::Item::Verbatim(tokens) = item else {
            continue;
        };
        // A body-less fn parses as verbatim tokens: `#[apizr_runtime::python(ATTR)] ITEM`.
        let text = tokens.to_string();
        let (attr, rest) = text
            .split_once(")]")
            .map(|(a, r)| (a.split_once("python (").unwrap().1, r))
            .unwrap();
        let binding = analyze_binding(
            attr.parse().unwrap(),
            rest.parse().unwrap(),
            &ManifestDir::at(&dir),
        );
        assert!(
            binding.is_ok(),
            "{text}: {:?}",
            binding.err().map(|e| e.to_string())
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
    let _ = module.to_token_stream();
    let _ = std::fs::remove_dir_all(&dir);
}
