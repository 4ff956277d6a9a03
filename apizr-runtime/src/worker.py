# apizr worker, protocol apizr.worker/v1 (see PROTOCOL.md in apizr-runtime).
#
# Stdlib only; run as `python3 -I -S -c <this file>` in a fresh working directory.
# One framed request on stdin, one framed response on a private duplicate of the original
# stdout. fd 1 is pointed at stderr first, so nothing user code prints can corrupt the frame.
import os

_OUT = os.dup(1)
os.dup2(2, 1)

import _json
import _signal
import binascii
import sys

try:
    from _sha256 import sha256 as _sha256
except ImportError:  # CPython 3.12+
    from _sha2 import sha256 as _sha256

# The C halves of `json` are used directly: importing `json` pulls in `re` and `enum`, which
# would double the worker's start-up time.
_ModuleType = type(sys)

PROTOCOL = "apizr.worker/v1"
# A pre-started worker may get this frame before its request: import the module now.
PREPARE_PROTOCOL = "apizr.worker-prepare/v1"
_PREPARED = b"prepared"
SCHEMA = "apizr.execution-result/v1"
MAX_REQUEST = 64 * 1024 * 1024
MAX_NODES = 100000
MAX_DEPTH = 64
_MAIN_PID = os.getpid()
_INF = float("inf")
# Captured before user code runs, so a module that monkeypatches os cannot change how the
# response is written.
_write = os.write
_exit = os._exit
_getpid = os.getpid

# Module names the reference worker (outerspace-apizr 0.4.6 on CPython 3.11.7) has in
# sys.modules during a call, observed black-box with `apizr execute` on a function returning
# sorted(sys.modules) (module `zzmod`, removed). A logical module name equal to one of these, or
# with one as a parent, is refused with binding_failed exactly as the reference does.
_REFERENCE_MODULES = frozenset((
    '__future__', '__main__', '_abc', '_ast', '_asyncio', '_bisect', '_blake2', '_bz2', '_codecs',
    '_collections', '_collections_abc', '_compression', '_contextvars', '_csv', '_datetime',
    '_decimal', '_distutils_hack', '_frozen_importlib', '_frozen_importlib_external',
    '_functools', '_hashlib', '_heapq', '_imp', '_io', '_json', '_locale', '_lzma', '_opcode',
    '_operator', '_posixsubprocess', '_random', '_sha512', '_signal', '_sitebuiltins', '_socket',
    '_sre', '_ssl', '_stat', '_string', '_struct', '_sysconfigdata__linux_x86_64-linux-gnu',
    '_thread', '_typing', '_uuid', '_warnings', '_weakref', '_weakrefset', '_zoneinfo', 'abc',
    'annotated_types', 'apizr', 'apizr.capabilities', 'apizr.capabilities.analyzer',
    'apizr.capabilities.inspection', 'apizr.capabilities.instrumentation',
    'apizr.capabilities.model', 'apizr.capabilities.serialization', 'apizr.capabilities.source',
    'apizr.capabilities.types', 'apizr.contracts', 'apizr.contracts.json_budget',
    'apizr.contracts.lowering', 'apizr.contracts.types', 'apizr.execution',
    'apizr.execution.invocation', 'apizr.execution.model', 'apizr.execution.planner',
    'apizr.execution.policy', 'apizr.execution.protocol', 'apizr.execution.serialization',
    'apizr.execution.supervisor', 'apizr.interfaces', 'apizr.interfaces.json_budget',
    'apizr.interfaces.model', 'apizr.interfaces.planner', 'apizr.interfaces.results',
    'apizr.interfaces.runtime', 'apizr.interfaces.schema', 'apizr.interfaces.serialization',
    'apizr.readiness', 'apizr.readiness.analysis', 'apizr.readiness.analyzer',
    'apizr.readiness.contracts', 'apizr.readiness.model', 'apizr.readiness.serialization',
    'apizr.readiness.source', 'apizr.readiness.stdlib', 'apizr.readiness.structured',
    'apizr.workspace', 'apizr.workspace.files', 'array', 'ast', 'asyncio', 'asyncio.base_events',
    'asyncio.base_futures', 'asyncio.base_subprocess', 'asyncio.base_tasks', 'asyncio.constants',
    'asyncio.coroutines', 'asyncio.events', 'asyncio.exceptions', 'asyncio.format_helpers',
    'asyncio.futures', 'asyncio.locks', 'asyncio.log', 'asyncio.mixins', 'asyncio.protocols',
    'asyncio.queues', 'asyncio.runners', 'asyncio.selector_events', 'asyncio.sslproto',
    'asyncio.staggered', 'asyncio.streams', 'asyncio.subprocess', 'asyncio.taskgroups',
    'asyncio.tasks', 'asyncio.threads', 'asyncio.timeouts', 'asyncio.transports',
    'asyncio.trsock', 'asyncio.unix_events', 'atexit', 'base64', 'binascii', 'bisect', 'builtins',
    'bz2', 'calendar', 'codecs', 'collections', 'collections.abc', 'concurrent',
    'concurrent.futures', 'concurrent.futures._base', 'contextlib', 'contextvars', 'copy',
    'copyreg', 'csv', 'dataclasses', 'datetime', 'decimal', 'dis', 'email',
    'email._encoded_words', 'email._parseaddr', 'email._policybase', 'email.base64mime',
    'email.charset', 'email.encoders', 'email.errors', 'email.header', 'email.iterators',
    'email.message', 'email.quoprimime', 'email.utils', 'encodings', 'encodings.aliases',
    'encodings.utf_8', 'encodings.utf_8_sig', 'enum', 'errno', 'fcntl', 'fnmatch', 'fractions',
    'functools', 'genericpath', 'hashlib', 'heapq', 'hmac', 'importlib', 'importlib._abc',
    'importlib._bootstrap', 'importlib._bootstrap_external', 'importlib.abc',
    'importlib.machinery', 'importlib.metadata', 'importlib.metadata._adapters',
    'importlib.metadata._collections', 'importlib.metadata._functools',
    'importlib.metadata._itertools', 'importlib.metadata._meta', 'importlib.metadata._text',
    'importlib.resources', 'importlib.resources._adapters', 'importlib.resources._common',
    'importlib.resources._legacy', 'importlib.resources.abc', 'importlib.util', 'inspect', 'io',
    'ipaddress', 'itertools', 'json', 'json.decoder', 'json.encoder', 'json.scanner', 'keyword',
    'linecache', 'locale', 'logging', 'lzma', 'marshal', 'math', 'ntpath', 'numbers', 'opcode',
    'operator', 'os', 'os.path', 'pathlib', 'platform', 'posix', 'posixpath', 'pwd', 'pydantic',
    'pydantic._internal', 'pydantic._internal._config', 'pydantic._internal._contextlib',
    'pydantic._internal._core_metadata', 'pydantic._internal._core_utils',
    'pydantic._internal._decorators', 'pydantic._internal._discriminated_union',
    'pydantic._internal._docs_extraction', 'pydantic._internal._fields',
    'pydantic._internal._forward_ref', 'pydantic._internal._generate_schema',
    'pydantic._internal._generics', 'pydantic._internal._import_utils',
    'pydantic._internal._known_annotated_metadata', 'pydantic._internal._mock_val_ser',
    'pydantic._internal._model_construction', 'pydantic._internal._namespace_utils',
    'pydantic._internal._repr', 'pydantic._internal._schema_gather',
    'pydantic._internal._schema_generation_shared', 'pydantic._internal._signature',
    'pydantic._internal._type_refs', 'pydantic._internal._typing_extra',
    'pydantic._internal._utils', 'pydantic._internal._validators', 'pydantic._migration',
    'pydantic.aliases', 'pydantic.annotated_handlers', 'pydantic.config', 'pydantic.errors',
    'pydantic.fields', 'pydantic.functional_serializers', 'pydantic.functional_validators',
    'pydantic.json_schema', 'pydantic.main', 'pydantic.plugin', 'pydantic.plugin._loader',
    'pydantic.plugin._schema_validator', 'pydantic.type_adapter', 'pydantic.types',
    'pydantic.version', 'pydantic.warnings', 'pydantic_core', 'pydantic_core._pydantic_core',
    'pydantic_core.core_schema', 'quopri', 'random', 're', 're._casefix', 're._compiler',
    're._constants', 're._parser', 'reprlib', 'runpy', 'secrets', 'select', 'selectors', 'shutil',
    'signal', 'site', 'socket', 'ssl', 'stat', 'string', 'struct', 'subprocess', 'sys',
    'sysconfig', 'tempfile', 'textwrap', 'threading', 'time', 'token', 'tokenize', 'traceback',
    'types', 'typing', 'typing.io', 'typing.re', 'typing_extensions', 'typing_inspection',
    'typing_inspection.introspection', 'typing_inspection.typing_objects', 'unicodedata',
    'urllib', 'urllib.parse', 'uuid', 'warnings', 'weakref', 'zipfile', 'zipimport', 'zlib',
    'zoneinfo', 'zoneinfo._common', 'zoneinfo._tzpath',
))

CO_VARARGS = 0x04
CO_VARKEYWORDS = 0x08
CO_GENERATOR = 0x20
CO_COROUTINE = 0x80
CO_ITERABLE_COROUTINE = 0x100
CO_ASYNC_GENERATOR = 0x200


class _Fail(Exception):
    def __init__(self, status):
        Exception.__init__(self, status)
        self.status = status


class _Mismatch(Exception):
    pass


def _no_default(value):
    raise TypeError("not JSON serializable")


# json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ENCODE = _json.make_encoder(
    {}, _no_default, _json.encode_basestring, None, ":", ",", True, False, False
)


def _canon(value):
    return "".join(_ENCODE(value, 0)).encode("utf-8") + b"\n"


class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    memo = {}

    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name):
        raise ValueError(name)


def _loads(text):
    value, end = _json.make_scanner(_ScanContext)(text, 0)
    if text[end:].strip(" \t\n\r"):
        raise ValueError("trailing data")
    return value


def _respond(status, value, limit):
    if _getpid() != _MAIN_PID:
        # A process forked by user code never speaks for the worker.
        _exit(0)
    body = _canon({"schema_version": SCHEMA, "status": status, "value": value})
    if len(body) > limit:
        body = _canon({"schema_version": SCHEMA, "status": "output_limit", "value": None})
    frame = memoryview(len(body).to_bytes(8, "big") + body)
    try:
        sys.stderr.flush()
        sys.stdout.flush()
    except BaseException:
        pass
    try:
        while frame:
            frame = frame[_write(_OUT, frame):]
    except BaseException:
        _exit(1)
    _exit(0)


_INBUF = bytearray()


def _read_exact(n):
    # Buffered: one read usually brings a whole frame (one syscall per frame).
    while len(_INBUF) < n:
        chunk = os.read(0, max(n - len(_INBUF), 1 << 16))
        if not chunk:
            return None
        _INBUF.extend(chunk)
    data = bytes(_INBUF[:n])
    del _INBUF[:n]
    return data


def _read_frame(protocols):
    # Exactly one frame (header, then the declared payload, which ends with a newline),
    # holding a JSON object of one of `protocols`; anything else is worker_failed.
    header = _read_exact(8)
    if header is None:
        raise _Fail("worker_failed")
    size = int.from_bytes(header, "big")
    if size > MAX_REQUEST:
        raise _Fail("worker_failed")
    data = _read_exact(size)
    if data is None or not data.endswith(b"\n"):
        raise _Fail("worker_failed")
    message = _loads(data.decode("utf-8"))
    if type(message) is not dict or message.get("protocol") not in protocols:
        raise _Fail("worker_failed")
    return message


def _read_request(protocols):
    # The request (or, in a pre-started worker, the prepare frame first: PROTOCOL.md
    # "Pre-import"). After the request, stdin must be at its end: a byte more is
    # worker_failed, as is a short frame.
    request = _read_frame(protocols)
    if request["protocol"] != PROTOCOL:
        return request
    if _INBUF or os.read(0, 1):
        raise _Fail("worker_failed")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return request


def _input_size_ok(params, arguments, max_input):
    payload = {}
    positional = [
        p["name"] for p in params if p["kind"] in ("positional_only", "positional_or_keyword")
    ]
    if len(arguments["positional"]) > len(positional):
        return False
    for name, value in zip(positional, arguments["positional"]):
        payload[name] = value
    for name, value in arguments["keyword"].items():
        if name in payload:
            return False
        payload[name] = value
    return len(_canon(payload)) <= max_input


def _install_seccomp(programs):
    # `_ctypes` directly: importing `ctypes` costs four times as much start-up time.
    import _ctypes

    class _Int(_ctypes._SimpleCData):
        _type_ = "i"

    class _ULong(_ctypes._SimpleCData):
        _type_ = "L"

    class _Ptr(_ctypes._SimpleCData):
        _type_ = "P"

    class _UShort(_ctypes._SimpleCData):
        _type_ = "H"

    class _Char(_ctypes._SimpleCData):
        _type_ = "c"

    class _Fprog(_ctypes.Structure):
        _fields_ = [("len", _UShort), ("filter", _Ptr)]

    class _Fn(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = _Int

    prctl = _Fn(_ctypes.dlsym(_ctypes.dlopen(None), "prctl"))
    zero = _ULong(0)
    if prctl(_Int(38), _ULong(1), zero, zero, zero) != 0:
        raise _Fail("policy_refused")
    keep = []
    for text in programs:
        raw = bytes.fromhex(text)
        if not raw or len(raw) % 8:
            raise _Fail("worker_failed")

        class _Buf(_ctypes.Array):
            _type_ = _Char
            _length_ = len(raw)

        buf = _Buf.from_buffer_copy(raw)
        prog = _Fprog(len(raw) // 8, _ctypes.addressof(buf))
        keep.append((buf, prog))
        if prctl(_Int(22), _ULong(2), _ctypes.byref(prog), zero, zero) != 0:
            raise _Fail("policy_refused")


def _load_module(name, path, source):
    parts = name.split(".")
    parent = None
    for i in range(1, len(parts)):
        pkg_name = ".".join(parts[:i])
        pkg = _ModuleType(pkg_name)
        pkg.__path__ = []
        pkg.__package__ = pkg_name
        sys.modules[pkg_name] = pkg
        if parent is not None:
            setattr(parent, parts[i - 1], pkg)
        parent = pkg
    module = _ModuleType(name)
    module.__file__ = path
    module.__package__ = ".".join(parts[:-1])
    sys.modules[name] = module
    if parent is not None:
        setattr(parent, parts[-1], module)
    try:
        code = compile(source, path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except BaseException:
        _print_exception()
        raise _Fail("execution_failed")
    return module


# --- A module of a package (the request's optional "package") ---------------------------------
# The package's files travel in the request with their digests; a finder placed in front of
# the path finder serves them by dotted name, as if their root were first on sys.path, so
# relative imports and imports of the package's own modules work and every parent __init__
# runs first. Directories without __init__.py are namespace packages, as in Python.


def _verified_bytes(entry):
    # The bytes of a source entry ({"base64", "digest"}) of a request, or source_mismatch when
    # they are not the ones its sha256 digest names: every module is loaded from these only.
    source = binascii.a2b_base64(entry["base64"].encode("ascii"), strict_mode=True)
    digest = entry["digest"]
    if digest.get("algorithm") != "sha256" or _sha256(source).hexdigest() != digest.get("value"):
        raise _Fail("source_mismatch")
    return source


def _refuse_loaded(name):
    # The served module and its parents must be new to this process (and never the reference
    # tool's own modules): a name already in sys.modules would bind someone else's code.
    parts = name.split(".")
    prefixes = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    if any(p in sys.modules or p in _REFERENCE_MODULES for p in prefixes):
        raise _Fail("binding_failed")


def _package_modules(package):
    # The package's modules by dotted name, and its distributions' metadata by directory
    # (`humanize-4.9.0.dist-info/METADATA` -> text; see _PackageFinder.find_distributions).
    modules = {}
    metadata = {}
    for rel, entry in package["files"].items():
        source = _verified_bytes(entry)
        parts = rel.split("/")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
            try:
                metadata[parts[0]] = source.decode("utf-8")
            except UnicodeDecodeError:
                pass
            continue
        if not rel.endswith(".py"):
            raise _Fail("worker_failed")
        parts = rel[:-3].split("/")
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts)
        if not name or (name in modules and modules[name][2]):
            # A package directory wins over a module file of the same name, as in Python.
            continue
        modules[name] = ("source/" + rel, source, is_package)
    return modules, metadata


class _PackageLoader:
    def __init__(self, path, source):
        self.path = path
        self.source = source

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = compile(self.source, self.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)


class _PackageFinder:
    def __init__(self, modules, metadata):
        self.modules = modules
        self.metadata = metadata
        self.namespaces = set()
        for name in modules:
            parts = name.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent not in modules:
                    self.namespaces.add(parent)

    def find_spec(self, name, path=None, target=None):
        from _frozen_importlib import ModuleSpec

        entry = self.modules.get(name)
        if entry is not None:
            origin, source, is_package = entry
            spec = ModuleSpec(name, _PackageLoader(origin, source), origin=origin,
                              is_package=is_package)
            spec.has_location = True
            return spec
        if name in self.namespaces:
            return ModuleSpec(name, None, is_package=True)
        return None

    def invalidate_caches(self):
        pass

    def find_distributions(self, context=None):
        # importlib.metadata asks every meta path finder (Distribution.discover) before the
        # path finder's sys.path entries: the carried metadata are distributions installed at
        # the package's root, found by name as CPython 3.11's Lookup finds a *.dist-info
        # directory (the name part before the first "-", Prepared.normalize on both sides).
        import re
        from importlib.metadata import Distribution, DistributionFinder

        def normalize(n):
            return re.sub(r"[-_.]+", "-", n).lower().replace("-", "_")

        if context is None:
            context = DistributionFinder.Context()
        if context.path is not sys.path:
            return
        for directory, text in sorted(self.metadata.items()):
            name = directory.lower().rpartition(".")[0].partition("-")[0]
            if context.name is None or normalize(name) == normalize(context.name):
                yield _carried_distribution(Distribution)(directory, text)


def _carried_distribution(base):
    class _CarriedDistribution(base):
        def __init__(self, directory, text):
            self._directory = directory
            self._text = text

        def read_text(self, filename):
            return self._text if filename == "METADATA" else None

        def locate_file(self, path):
            return "source/%s/%s" % (self._directory, path)

    return _CarriedDistribution


def _load_package_module(name, source, files):
    modules, metadata = files
    entry = modules.get(name)
    if entry is None or entry[1] != source:
        # The module imported must be the executable that was bound and inspected.
        raise _Fail("source_mismatch")
    meta = sys.meta_path
    at = len(meta)
    for i, finder in enumerate(meta):
        if getattr(finder, "__name__", "") == "PathFinder":
            at = i
            break
    meta.insert(at, _PackageFinder(modules, metadata))
    # A virtual environment (where generated images install the package's requirements): -S
    # skipped `site`, which is what reads pyvenv.cfg and sets sys.prefix, so the environment is
    # found next to the interpreter as `site` finds it, and its site-packages is added after
    # the package itself.
    bindir = os.path.dirname(sys.executable)
    venv = os.path.dirname(bindir)
    if os.path.isfile(bindir + "/pyvenv.cfg") or os.path.isfile(venv + "/pyvenv.cfg"):
        version = sys.version_info
        sys.path.append("%s/lib/python%d.%d/site-packages" % (venv, version[0], version[1]))
    try:
        __import__(name)
        return sys.modules[name]
    except BaseException:
        _print_exception()
        raise _Fail("execution_failed")


def _verify_binding(func, execution, params):
    if type(func) is not type(_main):
        raise _Fail("binding_failed")
    code = func.__code__
    flags = code.co_flags
    bad = CO_GENERATOR | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE
    if flags & bad:
        raise _Fail("binding_failed")
    if bool(flags & CO_COROUTINE) != (execution == "async"):
        raise _Fail("binding_failed")
    npos = code.co_argcount
    nkw = code.co_kwonlyargcount
    names = code.co_varnames
    defaults = func.__defaults__ or ()
    kwdefaults = func.__kwdefaults__ or {}
    # CPython's signature order: positional, *args, keyword-only, **kwargs. co_varnames holds
    # the positional and keyword-only names, then the *args name, then the **kwargs name.
    actual = []
    for i, pname in enumerate(names[:npos]):
        kind = "positional_only" if i < code.co_posonlyargcount else "positional_or_keyword"
        actual.append((pname, kind, i < npos - len(defaults)))
    extra = npos + nkw
    if flags & CO_VARARGS:
        actual.append((names[extra], "var_positional", False))
        extra += 1
    for pname in names[npos : npos + nkw]:
        actual.append((pname, "keyword_only", pname not in kwdefaults))
    if flags & CO_VARKEYWORDS:
        actual.append((names[extra], "var_keyword", False))
    expected = [(p["name"], p["kind"], p["required"] is True) for p in params]
    if actual != expected:
        raise _Fail("binding_failed")


class _Binding:
    # How arguments reach one function, in CPython's order (readiness v2 adds *args/**kwargs):
    # the server sends the positional values (positional-only ones up to the last given, or,
    # when *args is given, every parameter before it) and the rest by name; the *args array
    # under its own name is spread after the positional values, a name of no parameter is an
    # entry of **kwargs.
    __slots__ = ("positional", "by_name", "kwargs")

    def __init__(self, params):
        self.positional = [
            p for p in params if p["kind"] in ("positional_only", "positional_or_keyword")
        ]
        self.by_name = {p["name"]: p for p in params if p["kind"] != "var_keyword"}
        self.kwargs = next((p for p in params if p["kind"] == "var_keyword"), None)

    def bind(self, positional, keyword):
        if len(positional) > len(self.positional):
            raise _Mismatch()
        args = [_convert(v, p["type"]) for v, p in zip(positional, self.positional)]
        items = []
        kwargs = {}
        for k, v in keyword.items():
            p = self.by_name.get(k)
            if p is None:
                if self.kwargs is None or k == self.kwargs["name"]:
                    raise _Mismatch()
                kwargs[k] = _convert(v, self.kwargs["type"])
            elif p["kind"] == "var_positional":
                # Its items go by position only after every parameter before it.
                if type(v) is not list or len(args) != len(self.positional):
                    raise _Mismatch()
                items = [_convert(x, p["type"]) for x in v]
            else:
                kwargs[k] = _convert(v, p["type"])
        args.extend(items)
        return args, kwargs


def _item(spec, index=0):
    items = spec.get("items") or []
    return items[index] if index < len(items) else {"kind": "any"}


def _convert(value, spec):
    kind = spec.get("kind")
    t = type(value)
    if kind == "any":
        return value
    if kind == "int":
        if t is int:
            return value
        if t is float and value.is_integer():
            return int(value)
    elif kind == "float":
        if t is int or t is float:
            try:
                f = float(value)
            except OverflowError:
                raise _Mismatch()
            if f == f and f not in (_INF, -_INF):
                return f
    elif kind == "str":
        if t is str:
            return value
    elif kind == "bytes" or kind == "bytearray":
        # Readiness v2: canonical padded base64 (the server refused anything else).
        if t is str:
            try:
                data = binascii.a2b_base64(value.encode("ascii"), strict_mode=True)
            except (ValueError, UnicodeError):
                raise _Mismatch()
            return data if kind == "bytes" else bytearray(data)
    elif kind in _TEMPORAL:
        return _temporal(value, kind)
    elif kind == "bool":
        if t is bool:
            return value
    elif kind == "null":
        if value is None:
            return None
    elif kind == "list":
        if t is list:
            return [_convert(v, _item(spec)) for v in value]
    elif kind == "dict":
        if t is dict:
            return {k: _convert(v, _item(spec)) for k, v in value.items()}
    elif kind == "tuple":
        if t is list:
            if spec.get("variadic"):
                return tuple(_convert(v, _item(spec)) for v in value)
            if len(value) == len(spec.get("items") or []):
                return tuple(_convert(v, _item(spec, i)) for i, v in enumerate(value))
    elif kind == "set" or kind == "frozenset":
        if t is list:
            out = set()
            for v in value:
                member = _convert(v, _item(spec))
                try:
                    if member in out:
                        raise _Mismatch()
                except TypeError:
                    raise _Mismatch()
                out.add(member)
            return out if kind == "set" else frozenset(out)
    elif kind == "union":
        for member in spec.get("items") or []:
            try:
                return _convert(value, member)
            except _Mismatch:
                continue
    elif kind == "literal":
        for choice in spec.get("values") or []:
            c = type(choice)
            if c is bool or t is bool:
                if c is t and choice == value:
                    return _instance(choice, spec)
            elif c in (int, float) and t in (int, float):
                if choice == value:
                    return _instance(choice, spec)
            elif c is t and choice == value:
                return _instance(choice, spec)
    elif kind == "object":
        if t is dict:
            fields = {f["name"]: f for f in spec.get("fields") or []}
            if any(k not in fields for k in value):
                raise _Mismatch()
            out = {}
            for fname, field in fields.items():
                if fname in value:
                    out[fname] = _convert(value[fname], field["type"])
                elif field.get("required"):
                    raise _Mismatch()
            return _instance(out, spec)
    raise _Mismatch()


# --- datetime values (readiness v2; apizr_ir::temporal states the contract) -----------------
# date "YYYY-MM-DD", time "HH:MM:SS[.f{1,6}][Z|+HH:MM|-HH:MM]", datetime "<date>T<time>",
# timedelta a JSON number of seconds. The grammar is checked here character by character as
# the server checks it (not `fromisoformat`, which accepts more and differently per version);
# the stdlib constructors then check the ranges the server checks (year 1-9999, the month's
# days, hour < 24, offset < 1 day), so a value the server accepted always converts. Without an
# offset the value is naive; with one it carries `timezone(offset)` (`Z`: `timezone.utc`).
_TEMPORAL = frozenset(("date", "datetime", "time", "timedelta"))
_DIGITS = frozenset("0123456789")
_TIMEDELTA_MIN = -86399999913600
_TIMEDELTA_MAX = 86399999999999


def _number(text, at, n):
    part = text[at:at + n]
    if len(part) != n or not all(c in _DIGITS for c in part):
        raise _Mismatch()
    return int(part)


def _expect(text, at, char):
    if text[at:at + 1] != char:
        raise _Mismatch()
    return at + 1


def _clock(text, at):
    hour = _number(text, at, 2)
    at = _expect(text, at + 2, ":")
    minute = _number(text, at, 2)
    at = _expect(text, at + 2, ":")
    second = _number(text, at, 2)
    at += 2
    micro = 0
    if text[at:at + 1] == ".":
        end = at + 1
        while end < len(text) and text[end] in _DIGITS:
            end += 1
        fraction = text[at + 1:end]
        if not 1 <= len(fraction) <= 6:
            raise _Mismatch()
        micro, at = int(fraction.ljust(6, "0")), end
    return (hour, minute, second, micro), at


def _zone(datetime, text, at):
    rest = text[at:]
    if rest == "":
        return None
    if rest == "Z":
        return datetime.timezone.utc
    if len(rest) != 6 or rest[0] not in "+-":
        raise _Mismatch()
    hours = _number(rest, 1, 2)
    _expect(rest, 3, ":")
    minutes = _number(rest, 4, 2)
    if hours > 23 or minutes > 59:
        raise _Mismatch()
    offset = datetime.timedelta(hours=hours, minutes=minutes)
    return datetime.timezone(-offset if rest[0] == "-" else offset)


def _temporal(value, kind):
    import datetime

    t = type(value)
    try:
        if kind == "timedelta":
            if (t is int or t is float) and _TIMEDELTA_MIN <= value <= _TIMEDELTA_MAX:
                return datetime.timedelta(seconds=value)
            raise _Mismatch()
        if t is not str:
            raise _Mismatch()
        if kind == "time":
            clock, at = _clock(value, 0)
            return datetime.time(*clock, tzinfo=_zone(datetime, value, at))
        day = (_number(value, 0, 4), _number(value, 5, 2), _number(value, 8, 2))
        _expect(value, 4, "-")
        _expect(value, 7, "-")
        if kind == "date":
            if len(value) != 10:
                raise _Mismatch()
            return datetime.date(*day)
        clock, at = _clock(value, _expect(value, 10, "T"))
        return datetime.datetime(*day, *clock, tzinfo=_zone(datetime, value, at))
    except (ValueError, OverflowError):
        raise _Mismatch()


# --- Classes of the module (readiness v2 TypeSpecs with a "python" member) -------------------
# A "literal" with {"python": {"kind": "enum", ...}} is an Enum: the member is looked up by
# the value (C(value)). An "object" with kind "dataclass"/"named_tuple" is built from its
# converted fields as keyword arguments (C(**fields)). The class is read from its module's
# namespace; anything else there than a class is a binding failure. The module is the served
# one or one of its package; one that only `if TYPE_CHECKING:` imported is not loaded yet and
# is imported here (readiness v2 judged that import as a call-time import).


def _class_of(python):
    module = sys.modules.get(python["module"])
    if module is None:
        try:
            __import__(python["module"])
        except BaseException:
            _print_exception()
            raise _Fail("binding_failed")
        module = sys.modules.get(python["module"])
    cls = None if module is None else module.__dict__.get(python["name"])
    if not isinstance(cls, type):
        raise _Fail("binding_failed")
    return cls


def _instance(value, spec):
    python = spec.get("python")
    if python is None:
        return value
    cls = _class_of(python)
    try:
        if python["kind"] == "enum":
            return cls(value)
        return cls(**value)
    except _Fail:
        raise
    except BaseException:
        raise _Mismatch()


def _to_json(value, spec):
    # The inverse for results, guided by the return TypeSpec: an instance of a class the spec
    # names becomes its value (Enum) or the object of its fields; containers are walked;
    # anything else is left to _normalise unchanged.
    python = spec.get("python")
    kind = spec.get("kind")
    if python is not None:
        if isinstance(value, _class_of(python)):
            if python["kind"] == "enum":
                return value.value
            return {
                f["name"]: _to_json(getattr(value, f["name"]), f["type"])
                for f in spec.get("fields") or []
            }
        return value
    t = type(value)
    if kind == "union":
        for member in spec.get("items") or []:
            out = _to_json(value, member)
            if out is not value:
                return out
    elif kind in ("list", "tuple") and (t is list or t is tuple):
        items = spec.get("items") or []
        if kind == "tuple" and not spec.get("variadic"):
            return [_to_json(v, items[i]) if i < len(items) else v for i, v in enumerate(value)]
        return [_to_json(v, _item(spec)) for v in value]
    elif kind == "dict" and t is dict:
        return {k: _to_json(v, _item(spec)) for k, v in value.items()}
    elif kind == "object" and t is dict:
        fields = {f["name"]: f["type"] for f in spec.get("fields") or []}
        return {k: _to_json(v, fields[k]) if k in fields else v for k, v in value.items()}
    return value


def _normalise(value):
    budget = [MAX_NODES]

    def walk(x, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise _Fail("result_invalid")
        if x is None or x is True or x is False:
            return x
        if isinstance(x, str):
            return str.__str__(x)
        if isinstance(x, int):
            return int.__int__(x)
        if isinstance(x, float):
            f = float.__float__(x)
            if f != f or f in (_INF, -_INF):
                raise _Fail("result_invalid")
            return f
        if isinstance(x, (list, tuple)):
            return [walk(item, depth + 1) for item in x]
        if isinstance(x, dict):
            out = {}
            for key, item in x.items():
                if not isinstance(key, str):
                    raise _Fail("result_invalid")
                budget[0] -= 1
                out[str.__str__(key)] = walk(item, depth + 1)
            return out
        raise _Fail("result_invalid")

    # The envelope object is level 1 of the reference's depth-64 budget, so the value starts
    # at level 2: a value nested 63 deep is accepted, 64 is result_invalid.
    return walk(value, 2)


def _print_exception():
    try:
        import traceback

        traceback.print_exc(file=sys.stderr)
    except BaseException:
        pass


def _on_cpu_limit(signum, frame):
    # RLIMIT_CPU soft limit reached. As PID 1 of a PID namespace the kernel would drop the
    # default action, so exit explicitly with the shell's "killed by SIGXCPU" code.
    _exit(128 + signum)


def _import(request):
    # The served module, from the request's verified bytes: the one loader of the cold path
    # and of a pre-import (same checks, same order, same statuses).
    call = request["call"]
    source = _verified_bytes(request["executable"])
    if call.get("execution") == "async":
        import asyncio  # noqa: F401  (before the module, as always for an async call)
    name = call["module"]
    _refuse_loaded(name)
    package = request.get("package")
    modules = None if package is None else _package_modules(package)
    if request.get("seccomp"):
        _install_seccomp(request["seccomp"])
    os.environ["APIZR_SERVED_PROCESS"] = "1"
    if modules is None:
        return _load_module(name, call["path"], source)
    return _load_package_module(name, source, modules)


# What a prepare frame fixes; the request must carry exactly the same, or the worker was
# given a call it was not prepared for.
_PREPARED_KEYS = ("executable", "package", "seccomp")


def _prepared_for(prepare, request):
    call, ready = request["call"], prepare["call"]
    return (
        call["module"] == ready["module"]
        and call["path"] == ready["path"]
        and all(request.get(k) == prepare.get(k) for k in _PREPARED_KEYS)
    )


def _prepare(prepare):
    # Pre-import (PROTOCOL.md): import the module now, then tell the supervisor on the
    # response channel. A failure says nothing and exits: the pool discards the worker and
    # the call goes cold, where the same import gives the status it always gave.
    try:
        module = _import(prepare)
    except BaseException:
        _exit(3)
    marker = _PREPARED + b"\n"
    try:
        _write(_OUT, len(marker).to_bytes(8, "big") + marker)
    except BaseException:
        _exit(3)
    return module


def _main():
    limit = 128
    if hasattr(_signal, "SIGXCPU"):
        _signal.signal(_signal.SIGXCPU, _on_cpu_limit)
    try:
        request = _read_request((PROTOCOL, PREPARE_PROTOCOL))
        prepare = module = None
        if request["protocol"] == PREPARE_PROTOCOL:
            prepare = request
            module = _prepare(prepare)
            request = _read_request((PROTOCOL,))
        limits = request["limits"]
        limit = int(limits["max_output_bytes"])
        call = request["call"]
        params = request["parameters"]
        arguments = request["arguments"]
        if not _input_size_ok(params, arguments, int(limits["max_input_bytes"])):
            raise _Fail("invalid_input")
        execution = call["execution"]
        if prepare is None:
            module = _import(request)
        elif not _prepared_for(prepare, request):
            raise _Fail("worker_failed")
        if execution == "async":
            import asyncio
        func = module.__dict__.get(call["function"])
        _verify_binding(func, execution, params)
        try:
            args, kwargs = _Binding(params).bind(arguments["positional"], arguments["keyword"])
        except _Mismatch:
            raise _Fail("invalid_input")
        try:
            if execution == "async":
                result = asyncio.run(func(*args, **kwargs))
            else:
                result = func(*args, **kwargs)
        except BaseException:
            _print_exception()
            raise _Fail("execution_failed")
        try:
            returns = request.get("returns")
            if returns is not None:
                result = _to_json(result, returns)
            value = _normalise(result)
            _canon(value)
        except _Fail:
            raise
        except BaseException:
            raise _Fail("result_invalid")
        _respond("success", value, limit)
    except _Fail as failure:
        _respond(failure.status, None, limit)
    except BaseException:
        _print_exception()
        _respond("worker_failed", None, limit)


# --- Persistent "serve many requests" mode (protocol apizr.worker-serve/v2) -------------------
# Used by the direct warm pool (`apizr-runtime/src/pool`). Started as `python -I -S -c <this
# file> --serve`. Unlike the single-shot mode above, stdin stays open: the first frame loads the
# module once (its state then persists across calls, as in the reference's direct servers) and
# every later frame is one call answered by one frame. Every request carries a nonce that the
# answer echoes first, so the server can tell this call's answer from bytes written at another
# time. The single-shot path is unchanged.

SERVE_PROTOCOL = "apizr.worker-serve/v2"


def _read_serve_payload():
    header = _read_exact(8)
    if header is None:
        _exit(0)
    size = int.from_bytes(header, "big")
    if size > MAX_REQUEST:
        _exit(1)
    data = _read_exact(size)
    if data is None:
        _exit(1)
    return data


# json.dumps(ensure_ascii=False, separators=(",", ":"), allow_nan=False): insertion order kept,
# as the reference's direct servers answer.
_ENCODE_ORDERED = _json.make_encoder(
    {}, _no_default, _json.encode_basestring, None, ":", ",", False, False, False
)


def _send(nonce, status, value=None, limit=MAX_REQUEST):
    # Serve-mode response payload: b"<nonce>\n<status>\n<value JSON>\n".
    if _getpid() != _MAIN_PID:
        _exit(0)
    try:
        body = (status + "\n" + "".join(_ENCODE_ORDERED(value, 0)) + "\n").encode("utf-8")
    except BaseException:
        body = b"result_invalid\nnull\n"
    if len(body) > limit:
        body = b"output_limit\nnull\n"
    body = nonce + b"\n" + body
    frame = len(body).to_bytes(8, "big") + body
    try:
        sys.stderr.flush()
        sys.stdout.flush()
    except BaseException:
        pass
    try:
        n = _write(_OUT, frame)
        if n < len(frame):
            rest = memoryview(frame)[n:]
            while rest:
                rest = rest[_write(_OUT, rest):]
    except BaseException:
        _exit(1)


def _sets_to_lists(value):
    if isinstance(value, (set, frozenset)):
        return [_sets_to_lists(v) for v in value]
    if isinstance(value, (list, tuple)):
        return [_sets_to_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _sets_to_lists(v) for k, v in value.items()}
    return value


class _Served:
    # One capability, resolved and binding-checked once at start-up.
    __slots__ = ("func", "is_async", "binding", "positional", "sets_to_lists", "returns")

    def __init__(self, module, spec):
        params = spec["parameters"]
        self.func = module.__dict__.get(spec["function"])
        _verify_binding(self.func, spec["execution"], params)
        self.is_async = spec["execution"] == "async"
        self.binding = _Binding(params)
        self.positional = [p["name"] for p in self.binding.positional]
        self.sets_to_lists = spec.get("sets") == "list"
        self.returns = spec.get("returns")


def _serve_call(served, data):
    # Call payload: b"<nonce>\n<capability>\n<positional count>\n<the caller's JSON text>"
    # (the count of the leading positional parameters the server passes by position).
    # The server has already validated the text; decoding it here keeps the caller's key order
    # in `dict`/`any` values, as the reference does.
    nonce, _, data = data.partition(b"\n")
    try:
        name, count, body = data.split(b"\n", 2)
        cap = served.get(name.decode("utf-8"))
        if cap is None:
            raise _Fail("binding_failed")
        try:
            obj = _loads(body.decode("utf-8").lstrip("\ufeff \t\n\r"))
            names = cap.positional[: int(count)]
            positional = [obj[n] for n in names]
            keyword = {k: v for k, v in obj.items() if k not in names}
            args, kwargs = cap.binding.bind(positional, keyword)
        except (_Mismatch, KeyError, ValueError, TypeError):
            raise _Fail("invalid_input")
        try:
            if cap.is_async:
                import asyncio

                result = asyncio.run(cap.func(*args, **kwargs))
            else:
                result = cap.func(*args, **kwargs)
        except BaseException:
            _print_exception()
            raise _Fail("execution_failed")
        try:
            t = type(result)
            if t is int or t is str or t is bool or result is None:
                # Fast path for exact scalar results (no subclass hooks can run).
                value = result
            else:
                if cap.returns is not None:
                    result = _to_json(result, cap.returns)
                if cap.sets_to_lists:
                    result = _sets_to_lists(result)
                value = _normalise(result)
        except _Fail:
            raise
        except BaseException:
            raise _Fail("result_invalid")
        _send(nonce, "success", value)
    except _Fail as failure:
        _send(nonce, failure.status)
    except BaseException:
        _print_exception()
        _send(nonce, "worker_failed")


def _serve():
    nonce = b""
    try:
        init = _loads(_read_serve_payload().decode("utf-8"))
        if type(init) is not dict or init.get("protocol") != SERVE_PROTOCOL:
            raise _Fail("worker_failed")
        nonce = init["nonce"].encode("ascii")
        source = _verified_bytes(init["executable"])
        name = init["module"]
        _refuse_loaded(name)
        package = init.get("package")
        os.environ["APIZR_SERVED_PROCESS"] = "1"
        if package is None:
            module = _load_module(name, init["path"], source)
        else:
            module = _load_package_module(name, source, _package_modules(package))
        served = {n: _Served(module, spec) for n, spec in init["capabilities"].items()}
    except _Fail as failure:
        _send(nonce, failure.status)
        _exit(0)
    except BaseException:
        _print_exception()
        _send(nonce, "worker_failed")
        _exit(0)
    _send(nonce, "success")
    while True:
        _serve_call(served, _read_serve_payload())


if sys.argv[1:] == ["--serve"]:
    _serve()
else:
    _main()
