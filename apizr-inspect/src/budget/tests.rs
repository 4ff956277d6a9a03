use super::*;
use crate::module::ParsedModule;

fn parse(source: &str) -> ParsedModule {
    ParsedModule::parse(source.to_string(), "m".into()).unwrap()
}

/// (nodes, depth) computed by CPython 3.11's `ast` (`scripts/gen-structure-vectors.py`).
#[test]
fn cpython_structure_vectors() {
    let raw = include_str!("../../tests/data/frontend/structure-vectors.json");
    let vectors: Vec<serde_json::Value> = serde_json::from_str(raw).unwrap();
    assert!(vectors.len() > 100);
    let mut failures = Vec::new();
    for vector in &vectors {
        let source = vector["source"].as_str().unwrap();
        let expected = walk::Shape {
            nodes: vector["nodes"].as_u64().unwrap() as usize,
            depth: vector["depth"].as_u64().unwrap() as usize,
        };
        let got = walk::measure(parse(source).body(), usize::MAX, usize::MAX);
        if got != expected {
            failures.push(format!("{source:?}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn nested_lists(n: usize) -> String {
    format!("x = {}{}\n", "[".repeat(n), "]".repeat(n))
}

/// Oracle: 126 nested lists pass, 127 are `source_structure_limit`.
#[test]
fn depth_boundary() {
    assert!(check_structure(&parse(&nested_lists(126))).is_ok());
    let err = check_structure(&parse(&nested_lists(127))).unwrap_err();
    assert!(matches!(err, InspectError::StructureLimit { .. }), "{err}");
}

/// Oracle: 24,999 `x = 1` lines plus `x` (100,000 nodes) pass; plus `pass` more fails.
#[test]
fn node_boundary() {
    let base = "x = 1\n".repeat(24_999);
    assert!(check_structure(&parse(&format!("{base}x\n"))).is_ok());
    assert!(check_structure(&parse(&format!("{base}pass\npass\n"))).is_ok());
    for over in ["x\npass\n", "x = y\n"] {
        let err = check_structure(&parse(&format!("{base}{over}"))).unwrap_err();
        assert!(matches!(err, InspectError::StructureLimit { .. }), "{err}");
    }
    let err = check_structure(&parse(&"x = 1\n".repeat(25_000))).unwrap_err();
    assert!(matches!(err, InspectError::StructureLimit { .. }));
}

#[test]
fn bracket_and_indent_limits_match_cpython() {
    let parens = |n: usize| format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n));
    assert!(prescan(&parens(200)).is_ok());
    let err = prescan(&parens(201)).unwrap_err();
    assert_eq!(err.to_string(), "too many nested parentheses");
    assert_eq!(err.position().unwrap().column, 205);
    let field = |n: usize| format!("x = f'{{{}1{}}}'\n", "(".repeat(n), ")".repeat(n));
    assert!(prescan(&field(199)).is_ok());
    assert!(prescan(&field(200)).is_err());
    assert!(
        prescan(&format!(
            "{}{}{}",
            "(".repeat(150),
            field(100),
            ")".repeat(150)
        ))
        .is_ok()
    );
    let indent = |n: usize| {
        let mut s: String = (0..n)
            .map(|i| format!("{}if x:\n", " ".repeat(i)))
            .collect();
        s.push_str(&format!("{}pass\n", " ".repeat(n)));
        s
    };
    assert!(prescan(&indent(99)).is_ok());
    let err = prescan(&indent(100)).unwrap_err();
    assert_eq!(err.to_string(), "too many levels of indentation");
    assert_eq!(err.position().unwrap().line, 101);
    assert!(prescan("x = f'{a:{b}}'").is_ok());
    assert_eq!(
        prescan("x = f'{a:{b:{c}}}'").unwrap_err().to_string(),
        "f-string: expressions nested too deeply"
    );
}

#[test]
fn flat_constructs_are_not_refused() {
    let wide = |item: &str, n: usize| format!("x = [{}]\n", vec![item; n].join(", "));
    for source in [
        wide("-1", 30_000),
        wide("a.b.c + d * e", 10_000),
        format!("x = a{}\n", " and b".repeat(20_000)),
        format!("x = a{}\n", " < b".repeat(20_000)),
        format!("x = {}\n", "'s' ".repeat(20_000)),
        "x = 1\n".repeat(20_000),
    ] {
        assert!(prescan(&source).is_ok(), "{}", &source[..40]);
    }
}

#[test]
fn deep_chains_are_refused_before_parsing() {
    let n = 2_000;
    for source in [
        format!("x = {}1", "-".repeat(n)),
        format!("x = {}1", "not ".repeat(n)),
        format!("x = a{}", ".a".repeat(n)),
        format!("x = 1{}", "+1".repeat(n)),
        format!("x = f{}", "()".repeat(n)),
        format!("x = x{}", "[0]".repeat(n)),
        format!("x = {}1", "lambda: ".repeat(n)),
        format!("x = {}1", "2**".repeat(n)),
        format!("x = {}1", "1 if x else ".repeat(n)),
        format!("x = {}1{}", "-----(".repeat(190), ")".repeat(190)),
        format!("x = {}", "f'{".repeat(n)),
        format!("x = {}", "f'{x:{".repeat(n)),
    ] {
        let err = prescan(&source).unwrap_err();
        assert!(
            matches!(
                err,
                InspectError::StructureLimit { .. } | InspectError::Syntax { .. }
            ),
            "{}: {err}",
            &source[..20]
        );
    }
}

/// Chains right at the bound, in every shape, parse and drop on an ordinary 2 MiB stack.
#[test]
fn the_bound_is_safe_on_a_small_stack() {
    let n = MAX_EXPRESSION_NESTING as usize - 2;
    let sources = vec![
        format!("x = {}1\n", "-".repeat(n)),
        format!("x = {}1\n", "not ".repeat(n)),
        format!("x = {}1\n", "~".repeat(n)),
        format!("x = a{}\n", ".a".repeat(n)),
        format!("x = 1{}\n", "+1".repeat(n)),
        format!("x = f{}\n", "()".repeat(n / 2)),
        format!("x = x{}\n", "[0]".repeat(n / 2)),
        format!("x = {}1\n", "lambda: ".repeat(n)),
        format!("x = {}1\n", "2**".repeat(n)),
        format!("x = {}1\n", "1 if x else ".repeat(n / 2)),
        format!("x = {}1{}\n", "----(".repeat(190), ")".repeat(190)),
        format!("x = {}1{}\n", "[-".repeat(190), "]".repeat(190)),
        format!("x = {}1\n", "await ".repeat(n)),
        format!("x = {}1\n", "yield ".repeat(n)),
        format!("x = {}\n", "*".repeat(n)),
        format!("def f(x={}1): pass\n", "-".repeat(n)),
        format!(
            "match x:\n    case {}1{}: pass\n",
            "[".repeat(190),
            "]".repeat(190)
        ),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            for source in sources {
                prescan(&source).unwrap();
                if let Ok(parsed) = ParsedModule::parse(source, "m".into()) {
                    assert!(check_structure(&parsed).is_err());
                }
            }
        })
        .unwrap();
    handle.join().unwrap();
}
