#!/usr/bin/env python3
"""(nodes, depth) of CPython 3.11 ASTs for a corpus of snippets: the reference's budget walk.

Nodes include the Module; depth counts the Module as 0 (observed: 126 nested lists pass,
127 fail with `source_structure_limit`; 100,000 nodes pass, 100,001 fail).
"""
import ast, json, sys

def shape(tree):
    stack = [(tree, 0)]
    nodes = depth = 0
    while stack:
        node, d = stack.pop()
        nodes += 1
        depth = max(depth, d)
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return nodes, depth

snippets = [
    "", "x = 1", "x = y = z", "x += 1", "x: int = 1", "x: int", "del a, b.c, d[0]",
    "import a, b.c as d", "from . import x", "from ..a import (b, c as d)", "from x import *",
    "global a, b", "pass\nbreak\ncontinue",
    "def f(a, b=1, /, c=2, *args, d, e=3, **kw) -> int:\n    return a",
    "async def f():\n    await g()\n    async for x in y: pass\n    async with a as b, c: pass",
    "lambda: 1", "lambda x, *y, z=1, **k: x", "@d1\n@d2(x)\ndef f(): pass",
    "class A(B, C, metaclass=M, **kw):\n    x = 1", "class A: pass",
    "if a:\n    pass\nelif b:\n    pass\nelif c:\n    x\nelse:\n    y",
    "if a:\n    pass\nelse:\n    if b:\n        pass", "if a: pass\nelif b: pass",
    "while x:\n    pass\nelse:\n    pass", "for a, b in c:\n    pass\nelse:\n    pass",
    "try:\n    pass\nexcept E as e:\n    pass\nexcept (A, B):\n    pass\nexcept:\n    pass\nelse:\n    pass\nfinally:\n    pass",
    "try:\n    pass\nexcept* E:\n    pass", "with a as (b, c), d: pass", "raise E from c", "raise",
    "assert x, 'm'", "x = a if b else c", "x = (y := 1)", "x = a and b or c and not d",
    "x = a < b <= c != d is e is not f in g not in h", "x = -a + +b * ~c ** d // e % f @ g << h >> i & j | k ^ l",
    "x = {1: 2, **d}", "x = {1, 2}", "x = [1, *a]", "x = (1,)", "x = ()", "x = []", "x = {}",
    "x = [a for a in b if c if d for e in f]", "x = {a: b for a, b in c}", "x = {a for a in b}",
    "x = (a for a in b)", "f(a, *b, c=d, **e)", "x = a.b.c", "x = a[1:2, ::3, 4]", "x = a[1:2]",
    "x = a[:]", "x = yield", "def g():\n    x = yield y\n    yield from z",
    "x = 'a' 'b'", "x = b'a' b'b'", "x = 1.5j", "x = ...", "x = None, True, False",
    "x = f''", "x = f'a'", "x = f'{a}'", "x = f'a{b}c{d}e'", "x = f'{a}{b}'", "x = f'{a!r}'",
    "x = f'{a:>10}'", "x = f'{a:{b}}'", "x = f'{a:{b}.{c}f}'", "x = f'{a=}'", "x = f'b{a=}'",
    "x = f'{a=}b'", "x = f'{a=!s:>4}'", "x = 'a' f'{b}' 'c'", "x = f'{a}' 'b' f'{c}'",
    "x = 'a' f''", "x = f'' ''", "x = f'{a:}'", "x = f'{a!r:}'", "x = f'{{}}'", "x = f'{{{a}}}'",
    "x = f'''{\na\n}'''", "x = f'{f\"{a}\"}'", "x = f'{a:{b:{c}}}'" if False else "x = f'{a:{b}{c}}'",
    "match x:\n    case 1 | 2:\n        pass\n    case [a, *rest]:\n        pass\n    case {'k': v, **kw}:\n        pass\n    case P(1, a=b):\n        pass\n    case None:\n        pass\n    case -1:\n        pass\n    case 1+2j:\n        pass\n    case a.b:\n        pass\n    case (x as y) if y > 0:\n        pass\n    case _:\n        pass",
    "x[a] = b\nx.a = c\n(a, b) = c\n[a, *b] = c",
    "def f(*, a): pass", "def f(a, /): pass", "def f(**k): pass",
    "nonlocal_ = 1", "x = not a", "x = a if b else c if d else e",
    "print(*a, sep='')", "x = [[1, 2], [3, [4, 5]]]", "x = {'a': [1, {'b': (2,)}]}",
    "x = a\\\n    + b", "x = '''a\nb'''",
    "for x in y:\n    if a:\n        while b:\n            with c:\n                try:\n                    pass\n                except E:\n                    pass",
]
snippets += ["x = " + "[" * n + "]" * n for n in (1, 50, 126, 127)]
snippets += ["if a:\n    pass\n" + "elif b:\n    pass\n" * n for n in (1, 10, 125, 126, 130)]
out = []
for src in snippets:
    tree = ast.parse(src)
    nodes, depth = shape(tree)
    out.append({"source": src, "nodes": nodes, "depth": depth})
json.dump(out, sys.stdout, indent=0)
sys.stdout.write("\n")
