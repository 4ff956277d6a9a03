use super::*;
use crate::facts::calls::Callee;

fn parsed(text: &str) -> ParsedModule {
    ParsedModule::parse(text.to_string(), "m".to_string()).unwrap()
}

fn names<'a>(facts: &ModuleFacts<'a>, name: &str, view: View) -> Vec<(u32, BindingKind<'a>)> {
    facts
        .bindings_of(name, view)
        .map(|(_, b)| (b.line, b.kind.clone()))
        .collect()
}

#[test]
fn views_differ_exactly_where_the_reference_differs() {
    let module = parsed(
        "[x for x in range(3)]\n\
         x: int\n\
         def f(a: (x := int), b=(x := 1)): pass\n\
         class C((x := object)): pass\n\
         g = lambda c=(x := 2): c\n\
         x = 3\n",
    );
    let facts = ModuleFacts::collect(&module);
    use BindingKind::*;
    assert_eq!(
        names(&facts, "x", View::Provenance),
        [
            (1, ComprehensionTarget),
            (2, AnnotationOnly),
            (3, Walrus), // the default, not the annotation
            (6, Assignment)
        ]
    );
    assert_eq!(
        names(&facts, "x", View::Namespace),
        [
            (3, Walrus),
            (3, Walrus),
            (4, Walrus),
            (5, Walrus),
            (6, Assignment)
        ]
    );
}

#[test]
fn bindings_are_in_evaluation_order() {
    let module = parsed("@d(f := 1)\ndef f(a=(f := 2)) -> (f := int): pass\nf += 1\n");
    let facts = ModuleFacts::collect(&module);
    let (def, _, _) = facts.function("f", 2).unwrap();
    let own = facts.own_binding(def).unwrap();
    let order: Vec<(bool, BindingKind)> = facts
        .bindings_of("f", View::Namespace)
        .map(|(id, b)| (id > own, b.kind.clone()))
        .collect();
    use BindingKind::*;
    assert_eq!(
        order,
        [
            (false, Walrus),
            (false, Walrus),
            (false, Walrus),
            (false, Def),
            (true, AugmentedAssignment)
        ]
    );
}

#[test]
fn statements_know_their_place() {
    let module = parsed(
        "import a\nif x:\n    def f(): pass\nelse:\n    try:\n        y = 1\n    except E:\n        pass\n",
    );
    let facts = ModuleFacts::collect(&module);
    let shape: Vec<(u32, usize, Option<u32>, Arm)> = facts
        .statements()
        .map(|(_, s)| (s.line, s.top, s.parent.map(|p| p.0), s.arm))
        .collect();
    assert_eq!(
        shape,
        [
            (1, 0, None, Arm::Module),
            (2, 1, None, Arm::Module),
            (3, 1, Some(1), Arm::Body),
            (5, 1, Some(1), Arm::Clause(0)),
            (6, 1, Some(3), Arm::Body),
            (8, 1, Some(3), Arm::Handler(0)),
        ]
    );
}

#[test]
fn calls_and_imports_carry_their_scope() {
    let module = parsed(
        "import os\n\
         eval('1')\n\
         def f():\n    import numpy\n    g = lambda: exec('x')\n    class K:\n        vars()\n\
         class C:\n    import json\n    locals()\n    def m(self):\n        globals()\n\
         h = lambda: __import__('x')\n",
    );
    let facts = ModuleFacts::collect(&module);
    let f = facts.function("f", 3).unwrap().0;
    let c = facts.classes().next().unwrap().0;
    let call = |scope: Scope| -> Vec<Callee> {
        facts
            .calls
            .iter()
            .filter(|x| x.scope == scope)
            .map(|x| x.callee())
            .collect()
    };
    assert_eq!(call(Scope::Module), [Callee::Name("eval")]);
    assert_eq!(
        call(Scope::Function(f)),
        [Callee::Name("exec"), Callee::Name("vars")]
    );
    assert_eq!(call(Scope::Class(c)), [Callee::Name("locals")]);
    assert_eq!(
        call(Scope::Deferred),
        [Callee::Name("globals"), Callee::Name("__import__")]
    );
    let imported = |scope: Scope| -> Vec<String> {
        facts
            .imports_in(scope)
            .flat_map(|i| i.modules())
            .map(|m| m.written())
            .collect()
    };
    assert_eq!(imported(Scope::Module), ["os"]);
    assert_eq!(imported(Scope::Function(f)), ["numpy"]);
    assert_eq!(imported(Scope::Class(c)), ["json"]);
}

#[test]
fn target_contexts_hide_calls_and_stores_from_module_scans() {
    let module = parsed(
        "[0 for d[eval('1')] in y]\n\
         d[vars()]: int\n\
         [0 for d.x in y]\n\
         e.y: int\n\
         f().z = 1\n\
         locals()\n",
    );
    let facts = ModuleFacts::collect(&module);
    let scanned: Vec<Callee> = facts.calls_in(Scope::Module).map(|c| c.callee()).collect();
    assert_eq!(scanned, [Callee::Name("f"), Callee::Name("locals")]);
    let stores: Vec<Option<&str>> = facts.mutations().map(|m| m.root).collect();
    assert_eq!(stores, [None]);
    assert!(!facts.is_mutated("d") && !facts.is_mutated("e"));
    assert_eq!(facts.namespace_calls().count(), 1);
}

#[test]
fn dynamic_import_names_include_aliases_from_any_scope() {
    let module = parsed(
        "def f():\n    from importlib import import_module as im\n\
         im('x')\nimport_module('y')\nq.__import__('z')\nimportlib.import_module('w')\nother('v')\n",
    );
    let facts = ModuleFacts::collect(&module);
    assert_eq!(facts.dynamic_import_calls(Scope::Module).count(), 4);
}

#[test]
fn inert_decorator_disqualifiers_are_their_own_set() {
    let disqualified = |text: &str| {
        let module = parsed(text);
        ModuleFacts::collect(&module).disqualifies_inert_decorator()
    };
    assert!(disqualified("__import__('json')\n"));
    assert!(disqualified("x.import_module('json')\n"));
    assert!(disqualified("from os import *\n"));
    assert!(disqualified("a.b = 1\n"));
    assert!(!disqualified("builtins.__import__('json')\n"));
    assert!(!disqualified("import_module('json')\n"));
    assert!(!disqualified("[0 for a.b in c]\nd.e: int\n"));
}

#[test]
fn relative_imports_resolve_against_the_package() {
    let module = parsed("from . import a\nfrom ..b.c import d\nfrom ... import e\nimport x.y\n");
    let facts = ModuleFacts::collect(&module);
    let resolved: Vec<Option<String>> = facts
        .imports_in(Scope::Module)
        .flat_map(|i| i.modules())
        .map(|m| m.absolute("pkg.sub"))
        .collect();
    assert_eq!(
        resolved,
        [
            Some("pkg.sub".to_string()),
            Some("pkg.b.c".to_string()),
            None,
            Some("x.y".to_string())
        ]
    );
}
