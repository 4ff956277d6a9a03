//! Readiness v2's rules on builtin values werkzeug's top level uses: ints of known bounds
//! (`v2/ints.rs`), dicts the module builds and fills (`v2/dicts.rs`). Each rule has safe
//! statements v2 proves and a near miss it keeps as a READY-004 reason at the named line and
//! column; both run in real CPython (each snippet in a fresh namespace): the safe ones run
//! cleanly, every near miss raises the named exception or has the named effect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use apizr_ir::ReadinessPolicy;

/// What a near miss does in CPython: raises this exception, or has this effect (a Python
/// expression over the snippet's namespace, true when the effect happened).
enum Outcome {
    Raises(&'static str),
    Effect(&'static str),
}
use Outcome::{Effect, Raises};

/// (safe statements, near-miss statements, what the near miss does, the text its culprit
/// starts with: its first occurrence in the module gives the line and column v2 must name).
type Case = (&'static str, &'static str, Outcome, &'static str);

const CASES: &[Case] = &[
    // werkzeug.http: a dict display filled from a generator over ranges and bytes.
    (
        "M = {b'\"': b'\\\\\"'}\nM.update(\n    (v.to_bytes(1, 'big'), b'\\\\%03o' % v)\n    for v in [*range(0x20), *b',;', *range(0x7F, 256)]\n)",
        "M = {}\nM.update((v.to_bytes(1, 'big'), 0) for v in [*range(0x7F, 257)])",
        Raises("OverflowError"),
        "v.to_bytes",
    ),
    (
        "B = [v.to_bytes(2, 'little') for v in [*range(65536)]]\nC = [v.to_bytes() for v in [1, 255]]",
        "C = [v.to_bytes() for v in [1, 256]]",
        Raises("OverflowError"),
        "v.to_bytes",
    ),
    (
        "C = [v.to_bytes(1, 'little') for v in [*b'ab']]",
        "C = [v.to_bytes(1, 'middle') for v in [*b'ab']]",
        Raises("ValueError"),
        "v.to_bytes",
    ),
    // bytes %-formatting of an int: one conversion that takes any int (`%c` a byte).
    (
        "F = [b'%c' % v for v in [*range(256)]]\nG = [b'%%%-4X|' % v for v in [*range(9)]]",
        "F = [b'%c' % v for v in [*range(250, 257)]]",
        Raises("OverflowError"),
        "b'%c' % v",
    ),
    (
        "F = [b'\\\\%o' % v for v in [1, 2]]",
        "F = [b'\\\\' % v for v in [1, 2]]",
        Raises("TypeError"),
        "b'\\\\' % v",
    ),
    (
        "F = [b'%d' % v for v in [1, 2]]",
        "F = [b'%d %d' % v for v in [1, 2]]",
        Raises("TypeError"),
        "b'%d %d' % v",
    ),
    (
        "F = [b'%x' % v for v in [1, 2]]",
        "F = [b'%s' % v for v in [1, 2]]",
        Raises("TypeError"),
        "b'%s' % v",
    ),
    // A display's starred range is the builtin's: a module's own `range` may yield anything.
    (
        "S = [chr(c) for c in [*range(0x10FFFF, 0x110000)]]",
        "S = [chr(c) for c in [*range(0x10FFFF, 0x110001)]]",
        Raises("ValueError"),
        "chr(c)",
    ),
    (
        "S = [v.to_bytes() for v in [*range(3)]]",
        "def range(n):\n    return [n]\nS = [v.to_bytes() for v in [*range(300)]]",
        Raises("OverflowError"),
        "[v.to_bytes()",
    ),
    // dict.update: pairs with hashable keys, of a dict the module built.
    (
        "D = dict()\nD.update({'a': 1})\nD.update((k, 0) for k in 'ab')",
        "D = {}\nD.update(([k], 0) for k in 'ab')",
        Raises("TypeError"),
        "[k], 0)",
    ),
    (
        "D = {}\nD.update((k, k) for k in [1, 2])",
        "D = {}\nD.update((k, k, k) for k in [1, 2])",
        Raises("ValueError"),
        "(k, k, k) for",
    ),
    (
        "D = {}\nD.update({1: 2})",
        "D = {}\nE = D\nE.update({1: 2})",
        Effect("D == {1: 2}"),
        "E.update",
    ),
    (
        "D = {}\nD.update({1: 2})",
        "D = {}\ndef _fill():\n    D.update({1: 2})\n    return 0\nX = _fill()",
        Effect("D == {1: 2}"),
        "D.update",
    ),
    (
        "D = {}\nD.update({1: 2})",
        "D = {}\nD.update(D for k in [1])",
        Raises("ValueError"),
        "D for k",
    ),
    // A class's own data attribute, read through the class (werkzeug.exceptions'
    // `_description = BadRequest.description`).
    (
        "class Base(Exception):\n    code = 400\n    description = 'x'\nclass Sub(Base, KeyError):\n    _description = Base.description\n    n = Base.code + 1\nclass E(enum.Enum):\n    A = 1\nV = E.A",
        "class C:\n    x = 1\nY = C.y",
        Raises("AttributeError"),
        "C.y",
    ),
    (
        "class C:\n    _x = 1\nY = C._x + 1",
        "class C:\n    __x = 1\nY = C.__x",
        Raises("AttributeError"),
        "C.__x",
    ),
    (
        "class C:\n    x = (1, 2)\nY = C.x + (3,)",
        "class D:\n    def __get__(self, obj, owner):\n        raise RuntimeError\nclass C:\n    x = D()\nY = C.x",
        Raises("RuntimeError"),
        "C.x",
    ),
    (
        "class C:\n    x = 1\nY = C.x + 1",
        "class C:\n    x = 1\n    def x(self): pass\nY = C.x + 1",
        Raises("TypeError"),
        "C.x + 1",
    ),
    (
        "class C:\n    x = 1\n    y = 2\n    del y\nY = C.x",
        "class C:\n    x = 1\n    del x\nY = C.x",
        Raises("AttributeError"),
        "C.x",
    ),
    (
        "class C:\n    x = []\nY = C.x",
        "@dataclasses.dataclass\nclass C:\n    x: list = dataclasses.field(default_factory=list)\nY = C.x",
        Raises("AttributeError"),
        "C.x",
    ),
    // werkzeug.serving's class body: a translation table from a dict comprehension of int
    // keys and int-formatting f-strings, then one more item stored.
    (
        "class H:\n    table = str.maketrans(\n        {c: rf'\\x{c:02x}' for c in [*range(0x20), *range(0x7F, 0xA0)]}\n    )\n    table[ord('\\\\')] = r'\\\\'\nM = str.maketrans({'a': 'b', 1: None})",
        "M = str.maketrans({'ab': 'c'})",
        Raises("ValueError"),
        "'ab': 'c'",
    ),
    (
        "M = str.maketrans({c: None for c in [1, 2]})",
        "M = str.maketrans({(1,): 'c'})",
        Raises("TypeError"),
        "(1,)",
    ),
    (
        "T = [f'{c:02X}|{c:3}|{c:o}' for c in [1, 2]]",
        "T = [f'{c!r:02x}' for c in [1, 2]]",
        Raises("ValueError"),
        "f'{c!r",
    ),
    (
        "T = [f'{c:08b}' for c in [1, 2]]",
        "T = [f'{c:,x}' for c in [1, 2]]",
        Raises("ValueError"),
        "f'{c:,x}'",
    ),
    (
        "T = {c: [c] for c in [1, 2]}",
        "T = {[c]: 0 for c in [1, 2]}",
        Raises("TypeError"),
        "[c]: 0",
    ),
    // In a class body a comprehension's element sees the module's names, not the class's.
    (
        "class C:\n    n = 1\n    T = [c * 2 for c in [*range(3)]]",
        "class C:\n    n = 1\n    T = [c + n for c in [1, 2]]",
        Raises("NameError"),
        "[c + n",
    ),
    // `D[k] = v` of a dict the module built: a hashable key.
    (
        "D = {}\nD['a'] = 1\nD[ord('x')] = 2\nD[(1, 'b')] = []",
        "D = {}\nD[[1]] = 2",
        Raises("TypeError"),
        "[1]] = 2",
    ),
    // A dict display changed by an item store is not the display any more (in a package the
    // interpreter does not recall it either: readiness_v2_interp's `near_store`).
    (
        "D = {'a': 1}\nD['b'] = 2\nY = D",
        "D = {'a': 1}\nD['a'] = 'x'\ndef _f():\n    return D['a'] + 1\nY = _f()",
        Raises("TypeError"),
        "D['a'] + 1",
    ),
    (
        "D = {}\nD[1] = 2",
        "D = {}\nE = D\nE[1] = 2",
        Effect("D == {1: 2}"),
        "E[1]",
    ),
    // `type(x)`: one argument is `x`'s class (werkzeug.debug.repr's `type(_paragraph_re)`).
    (
        "import re\nP = re.compile('a')\nT = type(P)\nU = type(1)\nclass C:\n    pass\nM = type(C)",
        "T = type('T', (), {}, 1)",
        Raises("TypeError"),
        "type('T'",
    ),
    (
        "T = type(None)",
        "T = type(None, x=1)",
        Raises("TypeError"),
        "type(None, x=1)",
    ),
    // A local function called in a class body: its body reads the module's names (not the
    // class's), its arguments are the class body's (werkzeug's `_calls_update("clear")`).
    (
        "def _calls(name):\n    def oncall(self, *args, **kw):\n        return name\n    oncall.__name__ = name\n    return oncall\nclass M(dict):\n    n = 'clear'\n    __setitem__ = _calls('__setitem__')\n    clear = _calls(n)",
        "def _make(name):\n    return TABLE + name\nclass C:\n    TABLE = 'a'\n    x = _make('b')",
        Raises("NameError"),
        "TABLE + name",
    ),
    (
        "def _make(name):\n    return LATER + name\nLATER = 'a'\nclass C:\n    x = _make('b')",
        "def _make(name):\n    return LATER + name\nclass C:\n    x = _make('b')\nLATER = 'a'",
        Raises("NameError"),
        "LATER + name",
    ),
    // `property(fget, fset, fdel, doc)` of functions (werkzeug's `_callback_property`).
    (
        "def _prop(name):\n    def fget(self):\n        return getattr(self, name)\n    def fset(self, value):\n        setattr(self, name, value)\n    return property(fget, fset)\nclass R:\n    units = _prop('_units')\nP = property(lambda s: 1, None, None, 'doc')\nQ = property(fget=None, doc=None)",
        "P = property(None, None, None, None, None)",
        Raises("TypeError"),
        "property(None, None, None, None, None)",
    ),
    (
        "P = property(None, doc='x')",
        "P = property(None, docs='x')",
        Raises("TypeError"),
        "property(None, docs='x')",
    ),
];

fn module(body: &str) -> String {
    format!("import dataclasses, enum\n{body}\n\n\ndef probe(x: int) -> int:\n    return x\n")
}

#[test]
fn each_rule_proves_its_safe_statement_and_keeps_its_near_miss_with_line_and_column() {
    let mut failures = Vec::new();
    for (safe, near, _, culprit) in CASES {
        let (ready, culprits) = v2_support::probe(&module(safe), ReadinessPolicy::V2);
        if !ready {
            let notes = v2_support::notes(&culprits, "APIZR-READY-004");
            failures.push(format!("not proved: {safe}\n  {notes:?}"));
        }
        let source = module(near);
        let (ready, culprits) = v2_support::probe(&source, ReadinessPolicy::V2);
        let notes = v2_support::notes(&culprits, "APIZR-READY-004");
        let (line, column) = source
            .lines()
            .enumerate()
            .find_map(|(i, l)| {
                l.find(culprit)
                    .map(|at| (i + 1, l[..at].chars().count() + 1))
            })
            .expect("the culprit is in the source");
        let at = format!("(line {line}, column {column})");
        if ready || !notes.iter().any(|n| n.contains(&at)) {
            failures.push(format!("near miss not kept at {at}: {near}\n  {notes:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// CPython, once for all cases: one JSON line per snippet says what happened.
const DRIVER: &str = r#"
import json, sys
for line in sys.stdin:
    case = json.loads(line)
    ns = {"__name__": "fixture"}
    result = "ok"
    try:
        exec(compile(case["source"], "fixture", "exec"), ns)
    except BaseException as e:
        result = "raises " + type(e).__name__
    effect = bool(case["effect"] and eval(case["effect"], ns))
    print(json.dumps({"result": result, "effect": effect}))
"#;

#[test]
fn in_cpython_safe_statements_run_cleanly_and_near_misses_raise_or_have_their_effect() {
    let mut input = String::new();
    let mut expected = Vec::new();
    for (safe, near, outcome, _) in CASES {
        for (source, outcome) in [(module(safe), None), (module(near), Some(outcome))] {
            let effect = match outcome {
                Some(Effect(check)) => *check,
                _ => "",
            };
            let case = serde_json::json!({"source": source, "effect": effect});
            input.push_str(&format!("{case}\n"));
            expected.push((source, outcome));
        }
    }
    let output = v2_support::python_stdin(DRIVER, input.as_bytes());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        expected.len(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut failures = Vec::new();
    for ((source, outcome), got) in expected.iter().zip(&lines) {
        let result = got["result"].as_str().unwrap();
        let ok = match outcome {
            None => result == "ok",
            Some(Raises(name)) => result == format!("raises {name}"),
            Some(Effect(_)) => result == "ok" && got["effect"] == true,
        };
        if !ok {
            failures.push(format!("{source}\n  -> {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
