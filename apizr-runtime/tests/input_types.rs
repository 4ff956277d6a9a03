//! Readiness v2 input types through a real CPython worker: the fixture's functions take and
//! return an Enum (by value), dataclasses (nested, with defaults) and a NamedTuple, and raise
//! unless the worker converted every argument into an instance of the module's class. Each
//! Type aliases (one bound only under `if TYPE_CHECKING:`) stand for their value. Each
//! call runs in the direct warm pool and in a governed (sandboxed, fresh process) call;
//! results come back as JSON values/objects. Schema-invalid arguments are refused in Rust
//! before any worker runs.
#![cfg(feature = "serve")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use apizr_inspect::{InspectOptions, interface, on_inspect_stack};
use apizr_runtime::ir::interface::InvocationContract;
use apizr_runtime::ir::{ReadinessPolicy, SourceKind};
use apizr_runtime::pool::executor::DirectExecutor;
use apizr_runtime::pool::{PoolConfig, SetResults};
use apizr_runtime::{AnyExecutor, Call, Executable, Status};

const SOURCE: &[u8] = include_bytes!("input_types_data/shapes.py");

fn contracts() -> Vec<InvocationContract> {
    on_inspect_stack(|| {
        let options = InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        };
        let (outcome, parsed) =
            apizr_inspect::inspect_bytes_parsed(SOURCE, SourceKind::Python, "shapes", options)
                .unwrap();
        interface::plan_interfaces(&parsed, &outcome.inspection, None).unwrap()
    })
    .unwrap()
}

/// (function, arguments, expected result as canonical JSON).
const CALLS: [(&str, &str, &str); 6] = [
    (
        "paint",
        r#"{"shape": {"color": "red", "corners": [{"x": 2}, {"x": 3, "y": 1, "label": null}], "size": "l"}, "mode": "fill"}"#,
        r#"{"label":"RED/fill/LARGE","x":2,"y":5}"#,
    ),
    (
        "paint",
        r#"{"shape": {"color": 42}, "mode": 1}"#,
        r#"{"label":"ANSWER/1/-","x":0,"y":0}"#,
    ),
    (
        "pick",
        r#"{"color": "green", "pair": {"left": "a", "right": 3}}"#,
        "42",
    ),
    (
        "walk",
        r#"{"points": [{"x": 1, "y": 2}], "size": "s"}"#,
        r#"{"left":"1:2","right":1.0}"#,
    ),
    // Aliases (one only under `if TYPE_CHECKING:`) and a returned list of instances.
    (
        "outline",
        r#"{"corners": [{"x": 1, "label": "a"}], "score": 2}"#,
        r#"[{"label":null,"x":3,"y":0}]"#,
    ),
    ("outline", r#"{"corners": []}"#, "null"),
];

fn check(executor: &AnyExecutor, contracts: &[InvocationContract], executable: &Executable) {
    for (function, arguments, expected) in CALLS {
        let contract = contracts.iter().find(|c| c.name == function).unwrap();
        let call =
            Call::from_json(contract, executable.clone(), "shapes", arguments.as_bytes()).unwrap();
        let outcome = executor.execute(&call);
        assert_eq!(
            outcome.status,
            Status::Success,
            "{function} {arguments}: {outcome:?}"
        );
        assert_eq!(
            outcome.value.canonical_string().unwrap(),
            expected,
            "{function}"
        );
    }
    // Validated in Rust against the exact schema: not a member value, an unknown field, a
    // missing required field.
    for (function, arguments) in [
        ("pick", r#"{"color": "blue", "pair": {"left": "a"}}"#),
        (
            "pick",
            r#"{"color": "red", "pair": {"left": "a", "extra": 1}}"#,
        ),
        ("paint", r#"{"shape": {"corners": []}, "mode": "fill"}"#),
        ("paint", r#"{"shape": {"color": "red"}, "mode": "dots"}"#),
    ] {
        let contract = contracts.iter().find(|c| c.name == function).unwrap();
        let refused = Call::from_json(contract, executable.clone(), "shapes", arguments.as_bytes());
        assert!(refused.is_err(), "{function} {arguments} was accepted");
    }
}

/// The governed executor (a fresh sandboxed worker per call, default v1 execution policy) and
/// its temp root (removed when dropped).
fn governed(tag: &str) -> (AnyExecutor, common::TempRoot) {
    let root = common::temp_root(tag);
    let config = apizr_runtime::RuntimeConfig {
        launcher: apizr_runtime::LauncherLocation::Binary(
            env!("CARGO_BIN_EXE_apizr-launch").into(),
        ),
        temp_root: root.to_path_buf(),
        ..apizr_runtime::RuntimeConfig::default()
    };
    (AnyExecutor::local(Default::default(), config), root)
}

#[test]
fn enum_dataclass_namedtuple_and_literal_arguments_reach_python_as_instances() {
    let contracts = contracts();
    assert_eq!(contracts.len(), 4);
    // Bundles and generated bindings read contracts back with `serve::decode`: the class
    // references must survive the round trip, or the worker would get plain dicts.
    for contract in &contracts {
        let value = apizr_runtime::ir::to_value(contract).unwrap();
        let decoded = apizr_runtime::serve::decode::contract(&value).unwrap();
        assert_eq!(&decoded, contract);
    }
    assert!(contracts.iter().all(|c| c.returns.has_python_class()
        || c.parameters.iter().any(|p| p.type_spec.has_python_class())));
    let executable = Executable::new(SOURCE.to_vec());
    // Direct: the warm pool (`apizr.worker-serve/v2`).
    let direct = DirectExecutor::start_blocking(PoolConfig {
        python: "python3".into(),
        workers: 1,
        timeout: None,
        executable: executable.clone(),
        module: "shapes".into(),
        path: "source/shapes.py".into(),
        capabilities: contracts.clone(),
        sets: SetResults::ToList,
    })
    .unwrap();
    check(
        &AnyExecutor::Direct(Arc::new(direct)),
        &contracts,
        &executable,
    );
    // Governed: a fresh sandboxed worker per call under the default v1 execution policy.
    let (governed, _root) = governed("input-types");
    let (function, arguments, expected) = CALLS[0];
    let contract = contracts.iter().find(|c| c.name == function).unwrap();
    let call =
        Call::from_json(contract, executable.clone(), "shapes", arguments.as_bytes()).unwrap();
    let outcome = governed.execute(&call);
    assert_eq!(outcome.status, Status::Success, "{outcome:?}");
    assert_eq!(outcome.value.canonical_string().unwrap(), expected);
}

/// The package fixture of the inspector's tests: `shop.api` takes classes of `shop.models`,
/// an alias of `shop.kinds` and (only under `if TYPE_CHECKING:`) a class of `shop.extra`.
const PACKAGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../apizr-inspect/tests/data/input_types_pkg"
);

/// Classes imported from sibling modules (readiness v2 over a package directory): a real,
/// sandboxed worker per call gets instances of the class of the module that declares it
/// (`shop.extra` is imported by the worker itself: `shop.api` imports it only for type
/// checkers); the fixture functions raise unless they get them.
#[test]
fn classes_of_sibling_modules_reach_python_as_instances_of_their_own_module() {
    use apizr_inspect::package::PackageIndex;
    let index = PackageIndex::scan(std::path::Path::new(PACKAGE)).unwrap();
    let source = std::fs::read(format!("{PACKAGE}/shop/api.py")).unwrap();
    let contracts = on_inspect_stack(|| {
        let options = InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        };
        let (outcome, parsed) = apizr_inspect::inspect_bytes_in_index(
            &source,
            SourceKind::Python,
            "shop.api",
            options,
            None,
            Some(&index),
        )
        .unwrap();
        let all: Vec<_> = outcome.inspection.readiness.assessments.iter().collect();
        interface::contracts_in_package(&parsed, &outcome.inspection, &all, Some(&index)).unwrap()
    })
    .unwrap();
    // The files a bundle of `shop.api` carries: its import closure (as `serve DIR` ships it).
    let files = index
        .closure(&["shop.api"], true)
        .unwrap()
        .into_iter()
        .map(|module| {
            let path = index.module_path(&module).unwrap();
            let key = match index.is_package(&module) {
                true => format!("{}/__init__.py", module.replace('.', "/")),
                false => format!("{}.py", module.replace('.', "/")),
            };
            (key, std::fs::read(index.root().join(path)).unwrap())
        })
        .collect();
    let executable = Executable::new(source.clone()).with_package(apizr_runtime::PackageFiles {
        files,
        ..Default::default()
    });
    let (governed, _root) = governed("input-types-package");
    for (function, arguments, expected) in [
        (
            "move",
            r#"{"p": {"x": 1, "y": 2}, "dx": 3}"#,
            r#"{"x":4,"y":2}"#,
        ),
        (
            "paint",
            r#"{"t": {"point": {"x": 1}, "color": "red"}, "c": "green"}"#,
            r#""1,0:red/green""#,
        ),
        ("total", r#"{"ps": [{"x": 1, "y": 1}, {"x": 2}]}"#, "4"),
        (
            "unbox",
            r#"{"b": {"size": 3}, "pair": {"left": "ab"}}"#,
            "5",
        ),
    ] {
        let contract = contracts.iter().find(|c| c.name == function).unwrap();
        let call = Call::from_json(
            contract,
            executable.clone(),
            "shop.api",
            arguments.as_bytes(),
        )
        .unwrap();
        let outcome = governed.execute(&call);
        assert_eq!(outcome.status, Status::Success, "{function}: {outcome:?}");
        assert_eq!(
            outcome.value.canonical_string().unwrap(),
            expected,
            "{function}"
        );
    }
    // Validated in Rust against the other module's exact schema: an unknown Color value.
    let contract = contracts.iter().find(|c| c.name == "paint").unwrap();
    let refused = Call::from_json(
        contract,
        executable,
        "shop.api",
        br#"{"t": {"point": {"x": 1}, "color": "blue"}, "c": "red"}"#,
    );
    assert!(refused.is_err());
}

const ARRAYS: &[u8] = include_bytes!("input_types_data/arrays.py");

/// Readiness v2 abstract collections (`Sequence[int]`, `collections.abc.Iterable[str]`,
/// `MutableSequence[float]`) through a governed worker: each arrives as a `list` of converted
/// items (the function reports `type(x).__name__` and mutates its list), `AbstractSet[str]`
/// as a `set` and `Mapping[str, int]` as a `dict`; a string where an array is declared, or a
/// repeated set item, is refused in Rust, naming the parameter, before any worker runs.
#[test]
fn abstract_collection_arguments_reach_python_as_lists() {
    let contracts = on_inspect_stack(|| {
        let options = InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        };
        let (outcome, parsed) =
            apizr_inspect::inspect_bytes_parsed(ARRAYS, SourceKind::Python, "arrays", options)
                .unwrap();
        interface::plan_interfaces(&parsed, &outcome.inspection, None).unwrap()
    })
    .unwrap();
    let executable = Executable::new(ARRAYS.to_vec());
    let kinds = contracts.iter().find(|c| c.name == "kinds").unwrap();
    let (governed, _root) = governed("input-types-arrays");
    let arguments = br#"{"values": [1, 2], "words": ["a"], "stack": [1]}"#;
    let call = Call::from_json(kinds, executable.clone(), "arrays", arguments).unwrap();
    let outcome = governed.execute(&call);
    assert_eq!(outcome.status, Status::Success, "{outcome:?}");
    assert_eq!(
        outcome.value.canonical_string().unwrap(),
        r#""list,list,list,float:4.5""#
    );
    // `AbstractSet[str]` arrives as a `set`, `Mapping[str, int]` as a `dict`.
    let shapes = contracts.iter().find(|c| c.name == "shapes").unwrap();
    let arguments = br#"{"tags": ["b", "a"], "table": {"x": 1}}"#;
    let call = Call::from_json(shapes, executable.clone(), "arrays", arguments).unwrap();
    let outcome = governed.execute(&call);
    assert_eq!(outcome.status, Status::Success, "{outcome:?}");
    assert_eq!(
        outcome.value.canonical_string().unwrap(),
        r#""set,dict:a,b""#
    );
    // A set's items are unique: refused in Rust.
    let twice = br#"{"tags": ["a", "a"], "table": {}}"#;
    let refused = Call::from_json(shapes, executable.clone(), "arrays", twice).unwrap_err();
    assert_eq!(refused.field_error().path, "/tags/1");
    let refused = Call::from_json(
        kinds,
        executable,
        "arrays",
        br#"{"values": "12", "words": [], "stack": []}"#,
    )
    .expect_err("a string is not an array");
    let field = refused.field_error();
    assert_eq!(
        (
            field.path.as_str(),
            field.expected.as_str(),
            field.found.as_str()
        ),
        ("/values", "array of integer", "string")
    );
}

/// Readiness v2 `bytes`/`bytearray` through a governed worker: base64 strings arrive decoded,
/// as `bytes` and a mutable `bytearray` (and `bytes` items of a `Sequence[bytes]`); text that
/// is not canonical padded base64 is refused in Rust with the parameter, the character and
/// why, before any worker runs.
#[test]
fn base64_arguments_reach_python_as_bytes_and_bytearray() {
    let contracts = on_inspect_stack(|| {
        let options = InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        };
        let (outcome, parsed) =
            apizr_inspect::inspect_bytes_parsed(ARRAYS, SourceKind::Python, "arrays", options)
                .unwrap();
        interface::plan_interfaces(&parsed, &outcome.inspection, None).unwrap()
    })
    .unwrap();
    let blobs = contracts.iter().find(|c| c.name == "blobs").unwrap();
    // Bundles and generated projects read contracts back: the kinds survive the round trip.
    let value = apizr_runtime::ir::to_value(blobs).unwrap();
    assert_eq!(
        &apizr_runtime::serve::decode::contract(&value).unwrap(),
        blobs
    );
    let executable = Executable::new(ARRAYS.to_vec());
    let (governed, _root) = governed("input-types-bytes");
    // b"\xffA", b"\x00", [b"z"]
    let arguments = br#"{"data": "/0E=", "buf": "AA==", "parts": ["eg=="]}"#;
    let call = Call::from_json(blobs, executable.clone(), "arrays", arguments).unwrap();
    let outcome = governed.execute(&call);
    assert_eq!(outcome.status, Status::Success, "{outcome:?}");
    assert_eq!(
        outcome.value.canonical_string().unwrap(),
        "\"bytes,bytearray,list,bytes:00ff41:\u{ff}A\""
    );
    for (arguments, path, found) in [
        (
            r#"{"data": "Zh==", "buf": "", "parts": []}"#,
            "/data",
            "string with non-zero unused bits (not canonical) at character 1",
        ),
        (
            r#"{"data": "", "buf": "", "parts": ["ab$="]}"#,
            "/parts/0",
            "string with a character outside the base64 alphabet at character 2",
        ),
        (r#"{"data": 1, "buf": "", "parts": []}"#, "/data", "integer"),
    ] {
        let refused = Call::from_json(blobs, executable.clone(), "arrays", arguments.as_bytes())
            .expect_err(arguments);
        let field = refused.field_error();
        assert_eq!((field.path.as_str(), field.found.as_str()), (path, found));
    }
}

/// Readiness v2 `datetime` arguments: the server's grammar (`validate::temporal`) and the
/// worker's conversion (`worker.py` `_temporal`, run here in real CPython from the worker's
/// own source) accept exactly the same strings and numbers. The candidates are valid values
/// of each kind and every one-character replacement, deletion and insertion of them (digits,
/// separators, `t`/`z`, a space, a non-ASCII digit), plus the timedelta bounds; one
/// disagreement would be a 422 for a value the worker takes or a conversion failure after
/// the server accepted.
#[test]
fn temporal_grammar_of_the_server_is_the_workers_in_cpython() {
    use apizr_runtime::ir::TypeKind;
    use apizr_runtime::validate::temporal::{check, seconds_in_range};
    let worker = include_str!("../src/worker.py");
    let start = worker.find("# --- datetime values").unwrap();
    let end = worker.find("# --- Classes of the module").unwrap();
    let section = &worker[start..end];
    let bases = [
        ("date", TypeKind::Date, "2024-02-29"),
        ("date", TypeKind::Date, "1900-12-31"),
        ("time", TypeKind::Time, "23:59:59.123456+05:30"),
        ("time", TypeKind::Time, "00:00:00Z"),
        (
            "datetime",
            TypeKind::Datetime,
            "0001-01-01T00:00:00.5-23:59",
        ),
        ("datetime", TypeKind::Datetime, "9999-12-31T12:30:59"),
    ];
    let alphabet = [
        "0", "1", "2", "3", "5", "9", "-", ":", "T", "t", "Z", "z", "+", ".", " ", "\u{663}",
    ];
    let mut candidates: Vec<(&str, TypeKind, String)> = Vec::new();
    for (name, kind, base) in bases {
        candidates.push((name, kind, base.to_string()));
        let chars: Vec<char> = base.chars().collect();
        for i in 0..=chars.len() {
            for c in alphabet {
                let mut replaced: String = chars[..i].iter().collect();
                replaced.push_str(c);
                let inserted = format!("{replaced}{}", chars[i..].iter().collect::<String>());
                if i < chars.len() {
                    replaced.extend(&chars[i + 1..]);
                    candidates.push((name, kind, replaced));
                }
                candidates.push((name, kind, inserted));
            }
            if i < chars.len() {
                let deleted: String = chars[..i].iter().chain(&chars[i + 1..]).collect();
                candidates.push((name, kind, deleted));
            }
        }
    }
    let rust: Vec<bool> = candidates
        .iter()
        .map(|(_, kind, text)| check(*kind, text).is_ok())
        .collect();
    let seconds = [
        "0",
        "1.5",
        "-0.000001",
        "86399999999999",
        "86400000000000",
        "86399999999999.5",
        "-86399999913600",
        "-86399999913601",
        "1e300",
        "100000000000000000000000",
    ];
    let mut input = String::new();
    for (name, _, text) in &candidates {
        input.push_str(&serde_json::to_string(&(name, text)).unwrap());
        input.push('\n');
    }
    for s in seconds {
        input.push_str(&format!("[\"timedelta\", {s}]\n"));
    }
    let script = format!(
        "import json, sys\nclass _Mismatch(Exception): pass\n{section}\n\
         for line in sys.stdin:\n    kind, value = json.loads(line)\n    try:\n        \
         _temporal(value, kind)\n        print(1)\n    except _Mismatch:\n        print(0)\n"
    );
    let mut child = std::process::Command::new("python3")
        .args(["-I", "-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let python: Vec<bool> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l == "1")
        .collect();
    assert_eq!(python.len(), candidates.len() + seconds.len());
    let mut accepted = 0;
    for ((name, _, text), (r, p)) in candidates.iter().zip(rust.iter().zip(&python)) {
        assert_eq!(r, p, "{name} {text:?}: server {r}, worker {p}");
        accepted += usize::from(*r);
    }
    // Both sides accept some mutations (other digits) and refuse most.
    assert!(
        accepted > 50 && accepted < candidates.len() / 2,
        "{accepted}"
    );
    for (s, p) in seconds.iter().zip(&python[candidates.len()..]) {
        let r = s.parse::<f64>().is_ok_and(seconds_in_range);
        assert_eq!(r, *p, "timedelta {s}");
    }
}

const TEMPORAL: &[u8] = include_bytes!("../../apizr-inspect/tests/data/input_types/temporal.py");

/// `datetime` arguments through a governed worker arrive as the stdlib's values (naive without
/// an offset, aware with `timezone(offset)`), as the same call builds them in CPython; values
/// outside the grammar are refused in Rust with the parameter, the character and why.
#[test]
fn temporal_arguments_reach_python_as_datetime_values() {
    let contracts = on_inspect_stack(|| {
        let options = InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        };
        let (outcome, parsed) =
            apizr_inspect::inspect_bytes_parsed(TEMPORAL, SourceKind::Python, "temporal", options)
                .unwrap();
        let served = ["stamp", "span", "either", "later", "many"].map(String::from);
        interface::plan_interfaces(&parsed, &outcome.inspection, Some(&served)).unwrap()
    })
    .unwrap();
    let find = |name: &str| contracts.iter().find(|c| c.name == name).unwrap();
    for contract in &contracts {
        let value = apizr_runtime::ir::to_value(contract).unwrap();
        assert_eq!(
            &apizr_runtime::serve::decode::contract(&value).unwrap(),
            contract
        );
    }
    let executable = Executable::new(TEMPORAL.to_vec());
    let (governed, _root) = governed("input-types-temporal");
    for (name, arguments, expected) in [
        (
            "stamp",
            r#"{"value": "2024-02-29T23:05:01.25+05:30"}"#,
            "datetime.datetime(2024, 2, 29, 23, 5, 1, 250000, tzinfo=datetime.timezone(datetime.timedelta(seconds=19800)))",
        ),
        (
            "stamp",
            r#"{"value": "2024-02-29T23:05:01Z"}"#,
            "datetime.datetime(2024, 2, 29, 23, 5, 1, tzinfo=datetime.timezone.utc)",
        ),
        (
            "stamp",
            r#"{"value": "2024-02-29T23:05:01"}"#,
            "datetime.datetime(2024, 2, 29, 23, 5, 1)",
        ),
        (
            "span",
            r#"{"value": 90.5}"#,
            "datetime.timedelta(seconds=90, microseconds=500000)",
        ),
        (
            "either",
            r#"{"value": "2024-01-02"}"#,
            "datetime.date(2024, 1, 2)",
        ),
        (
            "later",
            r#"{"value": "2024-01-02T00:00:00", "by": -3600}"#,
            "datetime.datetime(2024, 1, 1, 23, 0)",
        ),
    ] {
        let call = Call::from_json(
            find(name),
            executable.clone(),
            "temporal",
            arguments.as_bytes(),
        )
        .unwrap();
        let outcome = governed.execute(&call);
        assert_eq!(
            outcome.status,
            Status::Success,
            "{name} {arguments}: {outcome:?}"
        );
        assert_eq!(
            outcome.value.canonical_string().unwrap(),
            serde_json::to_string(expected).unwrap(),
            "{name} {arguments}"
        );
    }
    for (name, arguments, path, found) in [
        (
            "stamp",
            r#"{"value": "2023-02-29T00:00:00"}"#,
            "/value",
            "string with a day the month does not have at character 8",
        ),
        (
            "many",
            r#"{"values": ["2024-01-01 00:00:00"], "gaps": {}}"#,
            "/values/0",
            "string with a `T` between date and time at character 10",
        ),
        (
            "many",
            r#"{"values": [], "gaps": {"a": 1e20}}"#,
            "/gaps/a",
            "number outside -86399999913600..86399999999999 seconds",
        ),
        ("span", r#"{"value": "90"}"#, "/value", "string"),
    ] {
        let refused = Call::from_json(
            find(name),
            executable.clone(),
            "temporal",
            arguments.as_bytes(),
        )
        .expect_err(arguments);
        let field = refused.field_error();
        assert_eq!(
            (field.path.as_str(), field.found.as_str()),
            (path, found),
            "{arguments}"
        );
    }
}

const FROZEN: &[u8] = include_bytes!("../../apizr-inspect/tests/data/input_types/frozen.py");

/// `frozenset[T]` arguments arrive as frozensets through a governed worker, also as members of
/// a set; Rust refuses what Python's set would collapse: a member equal to an earlier one as a
/// set (`[1, 2]` and `[2, 1.0]`), and duplicate items inside one.
#[test]
fn frozenset_arguments_reach_python_as_frozensets() {
    let contracts = on_inspect_stack(|| {
        let options = InspectOptions {
            readiness: ReadinessPolicy::V2,
            ..InspectOptions::default()
        };
        let (outcome, parsed) =
            apizr_inspect::inspect_bytes_parsed(FROZEN, SourceKind::Python, "frozen", options)
                .unwrap();
        let served = ["skip_until", "groups"].map(String::from);
        interface::plan_interfaces(&parsed, &outcome.inspection, Some(&served)).unwrap()
    })
    .unwrap();
    let find = |name: &str| contracts.iter().find(|c| c.name == name).unwrap();
    for contract in &contracts {
        let value = apizr_runtime::ir::to_value(contract).unwrap();
        assert_eq!(
            &apizr_runtime::serve::decode::contract(&value).unwrap(),
            contract
        );
    }
    let executable = Executable::new(FROZEN.to_vec());
    let (governed, _root) = governed("input-types-frozen");
    for (name, arguments, expected) in [
        (
            "skip_until",
            r#"{"src": "abc", "pos": 1, "expect": "!", "error_on": ["b", "a"]}"#,
            "frozenset:['a', 'b']:bc!",
        ),
        (
            "groups",
            r#"{"members": [[2, 1], [3], []]}"#,
            "frozenset[1, 2],frozenset[3],frozenset[]",
        ),
    ] {
        let call = Call::from_json(
            find(name),
            executable.clone(),
            "frozen",
            arguments.as_bytes(),
        )
        .unwrap();
        let outcome = governed.execute(&call);
        assert_eq!(
            outcome.status,
            Status::Success,
            "{name} {arguments}: {outcome:?}"
        );
        assert_eq!(
            outcome.value.canonical_string().unwrap(),
            serde_json::to_string(expected).unwrap()
        );
    }
    for (arguments, path, found) in [
        (
            r#"{"members": [[1, 2], [2, 1.0]]}"#,
            "/members/1",
            "duplicate of item 0",
        ),
        (
            r#"{"members": [[1, 1]]}"#,
            "/members/0/1",
            "duplicate of item 0",
        ),
    ] {
        let refused = Call::from_json(
            find("groups"),
            executable.clone(),
            "frozen",
            arguments.as_bytes(),
        )
        .expect_err(arguments);
        let field = refused.field_error();
        assert_eq!(
            (field.path.as_str(), field.found.as_str()),
            (path, found),
            "{arguments}"
        );
    }
}
