#!/usr/bin/env python3
"""Notebook export vectors: run with a Python that has nbconvert 7.17.2 + IPython (the oracle
venv). For every notebook the expected exported text comes from nbconvert's PythonExporter;
`oracle` records the reference CLI's transformed_digest (or its error) when APIZR is set.

Usage: APIZR=/work/oracle-venv/bin/apizr /work/oracle-venv/bin/python gen-notebook-vectors.py > ../tests/data/frontend/notebook-vectors.json
"""
import hashlib, json, os, subprocess, sys, tempfile, warnings
warnings.simplefilter("ignore")
import nbformat
from nbconvert import PythonExporter

def code(src, count=None, **extra):
    c = {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": [], "source": src}
    c.update(extra)
    return c

def md(src, **extra):
    return {"cell_type": "markdown", "metadata": {}, "source": src, **extra}

def raw(src, mime=None):
    meta = {} if mime is None else {"raw_mimetype": mime}
    return {"cell_type": "raw", "metadata": meta, "source": src}

def nb(cells, minor=4, metadata=None, ids=False):
    if ids:
        for i, c in enumerate(cells):
            c.setdefault("id", "c%d" % i)
    return {"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": minor}

F = "def total(prices: list[float], *, tax: float = 0.2) -> float:\n    return sum(prices) * (1 + tax)\n"
notebooks = {
    "empty": nb([]),
    "empty45": nb([], minor=5),
    "one": nb([code("x = 1")]),
    "counts": nb([code("x = 1", 7), code("y = 2", 12), code("z = 3", 0)]),
    "trailing": nb([code("x = 1\n\n\n")]),
    "list_source": nb([code(["def f(a):\n", "    return a\n"])]),
    "v40": nb([code(F, 1), md("# Title")], minor=0),
    "v45": nb([code(F, 1), md("# Title")], minor=5, ids=True),
    "crlf": nb([code("a = 1\r\nb = 2\r\n"), md("x\r\ny")]),
    "nonascii": nb([code("s = 'héllo ✓'\ndef f(x='日本'):\n    return x\n"), md("Ünïcode **bold**")]),
    "md_blank": nb([md("# T\n\ntext\n\n\nend\n"), code("x = 1")]),
    "md_empty": nb([md(""), md([]), code("")]),
    "raw_plain": nb([raw("r = 1\n"), code("x = 1")]),
    "raw_python": nb([raw("r = 1", "text/x-python"), code("x = 1")]),
    "raw_html": nb([raw("<b>hi</b>", "text/html"), code("x = 1")]),
    "raw_rst": nb([raw("Title\n=====", "text/restructuredtext")]),
    "leading_blank": nb([code("\n\n  \nx = 1\n")]),
    "indented": nb([code("    x = 1\n    if x:\n        y = 2\n")]),
    "ws_lines": nb([code("x = 1\n    \ny = 2\n\t\nz = 3")]),
    "mixed_indent": nb([code("  a = 1\n    b = 2\n")]),
    "metadata": nb([code("x = 1", metadata={"tags": ["a", "b"], "collapsed": True, "jupyter": {"source_hidden": True}})],
                   metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                             "language_info": {"name": "python", "version": "3.11.7"}}),
    "outputs": nb([code("print(1)", 3, outputs=[{"output_type": "stream", "name": "stdout", "text": ["1\n"]},
                   {"output_type": "execute_result", "data": {"text/plain": "1"}, "metadata": {}, "execution_count": 3}])]),
    "functions": nb([md("Pricing"), code(F, 1), code("async def greet(name: str, /, punct: str = '!') -> str:\n    return f'Hello {name}{punct}'\n", 2)]),
    "many": nb([code("x%d = %d" % (i, i), i) for i in range(1, 40)]),
    "comment_only": nb([code("# just a comment")]),
    "tabs": nb([code("\tx = 1\n\ty = 2\n")]),
    "formfeed": nb([code("\x0c\nx = 1\n")]),
    "extra_keys": nb([code("x = 1", extra_field=1)]),
    "magic": nb([code("%matplotlib inline\nx = 1")]),
    "shell": nb([code("!pip install numpy")]),
    "shell_assign": nb([code("files = !ls\n")]),
    "help": nb([code("len?")]),
    "cell_magic": nb([code("%%time\nx = 1\n")]),
    "indented_magic": nb([code("if True:\n    %time f()\n")]),
    "get_ipython": nb([code("ip = get_ipython()\n")]),
    "raw_prose": nb([raw("plain prose here")]),
    "missing_cells": {"metadata": {}, "nbformat": 4, "nbformat_minor": 4},
    "bad_count": nb([code("x = 1", -1)]),
    "bad_tags": nb([code("x = 1", metadata={"tags": "x"})]),
    "bad_output": nb([code("x = 1", outputs=[{"output_type": "stream"}])]),
    "bad_type": nb([{"cell_type": "foo", "metadata": {}, "source": "x"}]),
    "bad_id": nb([code("x = 1", id="a b")], minor=5),
    "nbformat3": {"cells": [], "metadata": {}, "nbformat": 3, "nbformat_minor": 0},
    "kernelspec_partial": nb([], metadata={"kernelspec": {"name": "python3"}}),
}
special = {
    "array_root": "[1, 2]",
    "invalid_json": '{"cells": [,]}',
    "bom": "\ufeff" + json.dumps(nb([code("x = 1")])),
    "deep": '{"cells": [], "metadata": {"a": ' + "[" * 70 + "]" * 70 + '}, "nbformat": 4, "nbformat_minor": 4}',
    "depth64": '{"cells": [], "metadata": {"a": ' + "[" * 63 + "]" * 63 + '}, "nbformat": 4, "nbformat_minor": 4}',
    "depth65": '{"cells": [], "metadata": {"a": ' + "[" * 64 + "]" * 64 + '}, "nbformat": 4, "nbformat_minor": 4}',
}
apizr = os.environ.get("APIZR")
out = []
items = [(k, json.dumps(v, ensure_ascii=False, indent=1)) for k, v in notebooks.items()] + list(special.items())
for name, raw_text in items:
    entry = {"name": name, "notebook": raw_text}
    try:
        node = nbformat.reads(raw_text.encode("utf-8").decode("utf-8-sig"), as_version=4)
        text, _ = PythonExporter().from_notebook_node(node)
        entry["text"] = text
    except Exception as exc:
        entry["text"] = None
        entry["nbconvert_error"] = type(exc).__name__
    if apizr:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "nb.ipynb")
            with open(path, "w", encoding="utf-8") as f:
                f.write(raw_text)
            p = subprocess.run([apizr, "inspect", path, "--ir"], capture_output=True, text=True)
            if p.returncode in (0, 1) and p.stdout.startswith("{"):
                entry["oracle_transformed"] = json.loads(p.stdout)["source"]["transformed_digest"]["value"]
            else:
                entry["oracle_error"] = (p.stderr.strip().splitlines() or [""])[-1]
                entry["oracle_exit"] = p.returncode
    if entry.get("text") is not None:
        entry["sha256"] = hashlib.sha256(entry["text"].encode("utf-8")).hexdigest()
    out.append(entry)
json.dump(out, sys.stdout, ensure_ascii=False, indent=0)
sys.stdout.write("\n")
