#!/usr/bin/env python3
"""Generate readiness v2's table of the CPython standard library (what `from M import N` finds).

    scripts/gen-stdlib-table.py [--check] [--python PYTHON]...

writes apizr-inspect/src/readiness/v2/stdlib_names.txt: one line per stdlib module the workers
can import without effects, `module name name ...` (the keys of the module's `__dict__` right
after a fresh import, sorted). Workers run the host's `python3` (local, direct) or the worker
image's Debian bookworm `/usr/bin/python3.11` (OCI), whose patch releases and build options
differ (`tarfile.data_filter`, Bluetooth constants of `socket`): the table holds the modules
and names every given interpreter has (default: both). A submodule is a line of its own (`xml.dom`), so `from xml import
dom` is valid although `dom` is not yet an attribute of `xml`. `--check` compares instead of
writing (exit 1 on a difference), which the test suite runs so the file cannot rot.

Every module is imported in a fresh isolated interpreter (`python3 -I -S`, as workers run, in
an empty temporary directory; a child forked from one that imported nothing else), so no
module sees another's effects. Modules known to have
effects when imported are never imported, and neither are their submodules: they stay out
of the table, so readiness v2 never proves an import of them (`this` prints, `antigravity`
opens a browser, `__main__` modules run programs, `idlelib`/`turtledemo`/`tkinter`/`turtle`
open windows, `lib2to3` writes grammar caches, `readline` writes to the terminal, `test` is
CPython's test suite). A module that fails to import (Windows-only, a missing C extension) is
absent too. Must run under CPython 3.11 on Linux, the workers' interpreter.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "apizr-inspect", "src", "readiness", "v2", "stdlib_names.txt")
CLASSES = os.path.join(ROOT, "apizr-inspect", "src", "readiness", "v2", "stdlib_classes.txt")

# Root packages never imported (their import has effects, or they are test suites).
SKIP_ROOTS = {
    "__main__", "this", "antigravity", "idlelib", "turtledemo", "tkinter", "turtle",
    "lib2to3", "readline", "test", "__hello__", "__phello__", "ensurepip", "venv",
    "pydoc_data",
}
# Submodule names never imported: `__main__` runs a program, tests run suites.
SKIP_PARTS = {"__main__", "test", "tests", "idle_test"}

# Runs in a fresh interpreter (`-I -S`, nothing imported but what start-up imports) that
# forks one child per module: each child is that fresh interpreter importing one module. It
# prints the module's namespace, then (importing `pkgutil` only after) its submodules for a
# package and the children the import registered (`os.path`). A failing import prints nothing.
PROBE = r"""
import sys, posix
P = tuple.__itemsize__  # sizeof(PyObject *)
HEAPTYPE, BASETYPE = 1 << 9, 1 << 10

def key(t):
    return t.__module__ + "." + t.__qualname__

def extra_ivars(t, b):
    # typeobject.c's extra_ivars (3.11): t adds fields to b's instance layout.
    t_size, b_size = t.__basicsize__, b.__basicsize__
    if t.__itemsize__ or b.__itemsize__:
        return t_size != b_size or t.__itemsize__ != b.__itemsize__
    if (t.__weakrefoffset__ and not b.__weakrefoffset__
            and t.__weakrefoffset__ + P == t_size and t.__flags__ & HEAPTYPE):
        t_size -= P
    if (t.__dictoffset__ and not b.__dictoffset__
            and t.__dictoffset__ + P == t_size and t.__flags__ & HEAPTYPE):
        t_size -= P
    return t_size != b_size

def solid(t):
    # typeobject.c's solid_base: the nearest type along __base__ that adds fields.
    base = solid(t.__base__) if t.__base__ is not None else object
    return t if extra_ivars(t, base) else base

def solid_chain(t):
    out, s = [], solid(t)
    while s is not object:
        out.append(key(s))
        s = solid(s.__base__)
    return out

def hook(t):
    # The class whose __init_subclass__ a subclass of t runs.
    return next(c for c in t.__mro__ if "__init_subclass__" in vars(c))

def class_lines(name, module):
    # Public classes a subclass can be created from without running code but type's or
    # ABCMeta's: metaclass type or abc.ABCMeta, object's __init_subclass__, subclassable.
    # `class` key metaclass variable solid-chain MRO (the class and object left out), and
    # `as` access-name key when the module binds it under another name.
    out = []
    if name.startswith(("encodings.", "distutils")):
        return out
    for attr, value in sorted(vars(module).items()):
        if attr.startswith("_") or not isinstance(value, type) or value is object:
            continue
        meta = key(type(value))
        if meta not in ("builtins.type", "abc.ABCMeta") or hook(value) is not object:
            continue
        if not value.__flags__ & BASETYPE or len(value.__mro__) > 13:
            continue
        variable = "var" if value.__itemsize__ else "fixed"
        chain = ",".join(solid_chain(value)) or "-"
        mro = ",".join(key(c) for c in value.__mro__[1:-1]) or "-"
        out.append(" ".join(["class", key(value), meta, variable, chain, mro]))
        if key(value) != name + "." + attr:
            out.append(" ".join(["as", name + "." + attr, key(value)]))
    if name == "typing":
        # Aliases whose __mro_entries__ gives their origin (and Generic): `typing.List`.
        import typing
        for attr, value in sorted(vars(module).items()):
            if isinstance(value, typing._SpecialGenericAlias) and isinstance(value.__origin__, type):
                out.append(" ".join(["alias", name + "." + attr, key(value.__origin__)]))
    return out

for name in sys.argv[1:]:
    read, write = posix.pipe()
    pid = posix.fork()
    if pid == 0:
        posix.close(read)
        try:
            __import__(name)
            module = sys.modules[name]
            lines = ["names " + " ".join(sorted(vars(module)))]
            subs = {k for k in sys.modules if k.startswith(name + ".") and "." not in k[len(name) + 1:]}
            if hasattr(module, "__path__"):
                import pkgutil
                subs |= {name + "." + m.name for m in pkgutil.iter_modules(module.__path__)}
            lines.append("subs " + " ".join(sorted(subs)))
            lines.extend(class_lines(name, module))
            out = ("module " + name + "\n" + "\n".join(lines) + "\n").encode()
            while out:
                out = out[posix.write(write, out):]
        except BaseException:
            pass
        posix._exit(0)
    posix.close(write)
    chunks = []
    while chunk := posix.read(read, 65536):
        chunks.append(chunk)
    posix.close(read)
    posix.waitpid(pid, 0)
    sys.stdout.buffer.write(b"".join(chunks))
"""


def skipped(name):
    parts = name.split(".")
    return parts[0] in SKIP_ROOTS or any(p in SKIP_PARTS for p in parts[1:])


def probe(python, names, cwd):
    """{module: (names, submodules, class lines)} for the modules that import cleanly."""
    done = subprocess.run(
        [python, "-I", "-S", "-c", PROBE, *names],
        cwd=cwd, capture_output=True, text=True, timeout=600,
        stdin=subprocess.DEVNULL, env={},
    )
    out, module = {}, None
    for line in done.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "module":
            module = rest
            out[module] = ([], [], [])
        elif kind == "names" and module:
            out[module][0].extend(rest.split())
        elif kind == "subs" and module:
            out[module][1].extend(rest.split())
        elif kind in ("class", "as", "alias") and module:
            out[module][2].append(line)
    return out


def version(python):
    out = subprocess.run(
        [python, "-I", "-S", "-c",
         "import sys; print(sys.executable, sys.implementation.name, *sys.version_info[:2], "
         "sys.platform, *sorted(sys.stdlib_module_names))"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    return out[0], out[1], f"{out[2]}.{out[3]}", out[4], out[5:]


def probe_all(python):
    """{module: names} for one interpreter."""
    # The interpreter itself (not a launcher such as a pyenv shim), probed with no environment.
    python, impl, minor, platform, roots = version(python)
    if (impl, minor, platform) != ("cpython", "3.11", "linux"):
        sys.exit(f"need CPython 3.11 on Linux, got {impl} {minor} {platform} ({python})")
    table, class_table = {}, {}
    pending = sorted(r for r in roots if not skipped(r))
    seen = set(pending)
    with tempfile.TemporaryDirectory() as cwd, ThreadPoolExecutor(2) as pool:
        while pending:
            halves = [pending[0::2], pending[1::2]]
            results = {}
            for part in pool.map(lambda names: probe(python, names, cwd), halves):
                results.update(part)
            pending = []
            for name, (names, subs, classes) in sorted(results.items()):
                table[name] = set(names)
                class_table[name] = set(classes)
                for sub in subs:
                    if sub not in seen and not skipped(sub):
                        seen.add(sub)
                        pending.append(sub)
            pending.sort()
    return table, class_table


def generate(pythons):
    """The modules every interpreter imports, each with the names all of them bind."""
    probed = [probe_all(python) for python in pythons]
    tables = [names for names, _ in probed]
    modules = set.intersection(*(set(t) for t in tables))
    classes = sorted(
        {
            line
            for name in modules
            for line in set.intersection(*(classes[name] for _, classes in probed))
        }
    )
    header = (
        "# CPython 3.11 on Linux: the names each standard-library module binds after a fresh\n"
        "# import (on every worker interpreter: " + ", ".join(pythons) + "), one module a\n"
        "# line. Generated by scripts/gen-stdlib-table.py; do not edit. `!roots`: packages never\n"
        "# imported (effects), `!parts`: submodule names never imported (`__main__`, tests).\n"
        + " ".join(["!roots", *sorted(SKIP_ROOTS)]) + "\n"
        + " ".join(["!parts", *sorted(SKIP_PARTS)]) + "\n"
    )
    names = header + "".join(
        " ".join([name, *sorted(set.intersection(*(t[name] for t in tables)))]) + "\n"
        for name in sorted(modules)
    )
    class_header = (
        "# CPython 3.11 on Linux: standard-library classes a class statement may subclass without\n"
        "# running code but type's or ABCMeta's (metaclass type or abc.ABCMeta, object's\n"
        "# __init_subclass__, subclassable, MRO of at most 12 classes besides object), the same on\n"
        "# every worker interpreter (" + ", ".join(pythons) + "). Generated by\n"
        "# scripts/gen-stdlib-table.py; do not edit.\n"
        "# class <module.qualname> <metaclass> <fixed|var: itemsize> <solid bases, nearest first,\n"
        "#   or -> <MRO after the class, object left out, or ->; as <name a module binds> <class>;\n"
        "# alias <typing name> <origin class>: as a base it stands for its origin (and Generic).\n"
        "# (encodings.* codecs and distutils are left out.)\n"
    )
    return {OUT: names, CLASSES: class_header + "".join(line + "\n" for line in classes)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument(
        "--python", action="append",
        help="a worker's CPython 3.11 (repeatable; default: python3 and the worker image's "
        "Debian bookworm /usr/bin/python3.11)",
    )
    args = parser.parse_args()
    pythons = args.python or ["python3", "/usr/bin/python3.11"]
    for path, text in generate(pythons).items():
        if args.check:
            with open(path, encoding="utf-8") as f:
                if f.read() != text:
                    sys.exit(f"{path} differs from what {' and '.join(pythons)} generate; re-run the script")
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
