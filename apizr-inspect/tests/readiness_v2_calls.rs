//! Readiness v2's calls, str/bytes methods, stdlib values and process-local registries, each
//! rule with a safe statement v2 proves and a near miss it keeps as a READY-004 reason at the
//! named line and column. Both are run in real CPython (one process, each snippet in a fresh
//! namespace, warnings as errors, stdout captured): the safe ones import cleanly and print
//! nothing, and every near miss really raises the named exception or has the named effect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod v2_support;

use apizr_ir::ReadinessPolicy;

/// What a near miss does in CPython: raises this exception, or has this effect (a Python
/// expression over the snippet's namespace `ns`, the filters added `added`, and what it
/// printed `out`, true when the effect happened).
enum Outcome {
    Raises(&'static str),
    Effect(&'static str),
}
use Outcome::{Effect, Raises};

/// (imports, safe statements, near-miss statements, what the near miss does, the text its
/// culprit starts with: its first occurrence in the module gives the line and column v2 must
/// name).
type Case = (
    &'static str,
    &'static str,
    &'static str,
    Outcome,
    &'static str,
);

const CASES: &[Case] = &[
    // re.compile: flags re accepts with the pattern; bytes patterns.
    (
        "import re",
        "P = re.compile('a', re.I | re.X)",
        "P = re.compile('a', 4)",
        Raises("ValueError"),
        "4)",
    ),
    (
        "import re",
        "P = re.compile('a', flags=re.A)",
        "P = re.compile('a', re.A | re.U)",
        Raises("ValueError"),
        "re.A | re.U",
    ),
    (
        "import re",
        "P = re.compile(rb'^[^:\\s][^:\\r\\n]*$', re.A)",
        "P = re.compile(b'a', re.U)",
        Raises("ValueError"),
        "re.U)",
    ),
    (
        "import re",
        "P = re.compile('a', re.M)",
        "P = re.compile('a', 128)",
        Effect("out != ''"),
        "128",
    ),
    (
        "import re",
        "P = re.compile(rb'\\\\([0-3][0-7]{2}|.)')",
        "P = re.compile(rb'\\u0041')",
        Raises("error"),
        "rb'",
    ),
    // str methods whose value v2 folds, feeding re.compile.
    (
        "import re",
        "J = ', '.join(('gzip', 'deflate'))\nR = re.compile('|'.join(['a', J]))",
        "J = ', '.join(('a', 1))",
        Raises("TypeError"),
        "', '.join",
    ),
    (
        "import re",
        "F = re.compile('(?:{hex}:{hex}|{ipv4})'.format(hex='[0-9a-f]', ipv4='x'))",
        "F = '{0}{}'.format('a', 'b')",
        Raises("ValueError"),
        "'{0}{}'.format",
    ),
    (
        "",
        "F = '{{{}}}'.format('a')",
        "F = '{x}'.format(y='a')",
        Raises("KeyError"),
        "'{x}'.format",
    ),
    (
        "import re",
        "U = re.compile(' A b '.strip().lower().replace('a', '(x)'))",
        "U = re.compile(' a( '.strip())",
        Raises("error"),
        "' a( '.strip()",
    ),
    (
        "",
        "NUL = '\\x00'.encode('ascii')\nNUL2 = NUL * 2\nLINE = '-' * 72\nM = [1] * 31",
        "E = 'é'.encode('ascii')",
        Raises("UnicodeEncodeError"),
        "'é'.encode",
    ),
    (
        "",
        "E = 'é'.encode('utf-8')",
        "E = '\\ud800'.encode('utf-8')",
        Raises("UnicodeEncodeError"),
        "'\\ud800'.encode",
    ),
    (
        "",
        "N = 3\nS = 'ab' * 3",
        "N = 100000 * 100000 * 100000 * 100000\nS = 'ab' * N",
        Raises("OverflowError"),
        "'ab' * N",
    ),
    // A tuple of known strings keeps its items; a list does not (another name can change it).
    (
        "import re",
        "TAGS = ('a', 'b')\nP = re.compile('|'.join(TAGS))",
        "L = ['a']\nL2 = L\nL2 += ['(']\nP = re.compile('|'.join(L))",
        Raises("error"),
        "'|'.join(L)",
    ),
    // A local function's folded argument keeps its value in the body.
    (
        "def _b(s):\n    return s.encode('ASCII')",
        "NUL = _b('\\0')",
        "E = _b('é')",
        Raises("UnicodeEncodeError"),
        "s.encode",
    ),
    // re.Scanner: phrases without groups, pairs, no flags.
    (
        "import re",
        "S = re.Scanner([(r'[^ =}]+=\".*?\"', str), (r' ', None)])",
        "S = re.Scanner([('a(', None)])",
        Raises("error"),
        "'a('",
    ),
    (
        "import re",
        "S = re.Scanner([(r'x', None)])",
        "S = re.Scanner([('a',)])",
        Raises("ValueError"),
        "('a',)",
    ),
    // struct formats, a Struct's methods, typing.cast.
    (
        "import struct, typing",
        "S = struct.Struct('>Q')\nP = S.pack\nU = typing.cast('int', S.unpack)\nN = struct.calcsize('@2i 3s')",
        "S = struct.Struct('<n')",
        Raises("error"),
        "struct.Struct('<n')",
    ),
    (
        "import struct",
        "N = struct.calcsize('999999999x')",
        "N = struct.calcsize('99999999999999999999x')",
        Raises("error"),
        "struct.calcsize(",
    ),
    (
        "import struct",
        "S = struct.Struct('!H')\nZ = S.size",
        "S = struct.Struct('!H')\nX = S.nope",
        Raises("AttributeError"),
        "S.nope",
    ),
    // Process-local registries.
    (
        "import logging",
        "logging.getLogger(__name__).addHandler(logging.NullHandler())\nlogging.getLogger('x').setLevel(logging.DEBUG)",
        "logging.getLogger(__name__).addHandler(logging.StreamHandler())",
        Effect(
            "any(type(h).__name__ == 'StreamHandler' for h in logging.getLogger('fixture').handlers)",
        ),
        "logging.getLogger(__name__).addHandler(logging.StreamHandler",
    ),
    (
        "import logging",
        "logging.getLogger('x').setLevel('INFO')",
        "logging.getLogger('x').setLevel('LOUD')",
        Raises("ValueError"),
        "logging.getLogger('x').setLevel('LOUD",
    ),
    (
        "import warnings",
        "warnings.simplefilter('ignore', DeprecationWarning)\nwarnings.simplefilter('always', append=True)",
        "warnings.simplefilter('error', UserWarning)",
        Effect("any(f[0] == 'error' and f[2] is UserWarning for f in added)"),
        "'error'",
    ),
    (
        "import warnings",
        "warnings.simplefilter('once')",
        "warnings.simplefilter('loud')",
        Raises("AssertionError"),
        "'loud'",
    ),
    (
        "import warnings",
        "warnings.filterwarnings('ignore', message='x.*', category=UserWarning)",
        "warnings.filterwarnings('ignore', message='(')",
        Raises("error"),
        "'('",
    ),
    (
        "import warnings",
        "warnings.filterwarnings('default', module='m')",
        "warnings.filterwarnings('ignore', category=ValueError)",
        Raises("AssertionError"),
        "ValueError",
    ),
    // Codec error handlers under a name of their own; urllib.parse's scheme lists.
    (
        "import codecs",
        "def h(e):\n    return ('?', e.end)\ncodecs.register_error('fixture.h', h)\ncodecs.register_error('fixture.' + 'l', lambda e: ('?', e.end))",
        "codecs.register_error('fixture.n', 1)",
        Raises("TypeError"),
        "1)",
    ),
    (
        "import codecs",
        "def h(e):\n    return ('?', e.end)\ncodecs.register_error('fixture.h', h)",
        "def h(e):\n    return ('?', e.end)\ncodecs.register_error(b'fixture.b', h)",
        Raises("TypeError"),
        "b'fixture.b'",
    ),
    (
        "import codecs",
        "def h(e):\n    return ('?', e.end)\ncodecs.register_error('fixture.h', h)",
        // A built-in name: the worker's own `errors="namereplace"` now runs the module's code
        // (the effect check puts CPython's handler back for the next snippets).
        "def h(e):\n    return ('?', e.end)\ncodecs.register_error('namereplace', h)",
        Effect(
            "(codecs.lookup_error('namereplace') is h, codecs.register_error('namereplace', codecs.namereplace_errors))[0]",
        ),
        "'namereplace'",
    ),
    (
        "import urllib.parse",
        "if 'fixture-scheme' not in urllib.parse.uses_netloc:\n    urllib.parse.uses_netloc.append('fixture-scheme')",
        "urllib.parse.uses_netloc.append()",
        Raises("TypeError"),
        "urllib.parse.uses_netloc.append()",
    ),
    (
        "import urllib.parse",
        "S = 'fixture-scheme' in urllib.parse.uses_relative",
        "S = 'fixture-scheme' in urllib.parse.uses_netlocs",
        Raises("AttributeError"),
        "urllib.parse.uses_netlocs",
    ),
    // Bytes of byte literals, decoded: a known string (werkzeug's URL quoting tables).
    (
        "import re",
        "U = bytes((*range(0x21), 0x25, 0x7F)).decode()\nQ = re.compile('[' + re.escape(U + '&=+#') + ']')\nL = bytes([0xE9]).decode('latin-1') + b'ok'.decode('ascii')",
        "U = bytes((*range(0x21), 0x100)).decode()",
        Raises("ValueError"),
        "bytes((",
    ),
    (
        "",
        "U = bytes((0xC3, 0xA9)).decode()",
        "U = bytes((0xFF,)).decode()",
        Raises("UnicodeDecodeError"),
        "bytes((",
    ),
    (
        "",
        "U = bytes([0x41]).decode('ascii')",
        "U = bytes([0x41, 0x80]).decode('ascii')",
        Raises("UnicodeDecodeError"),
        "bytes([",
    ),
    // Joins of generators v2 folds (`ord`, int format specs), and a local factory renaming
    // the function it returns (werkzeug.urls's `_make_unquote_part`).
    (
        "import re",
        "C = '|'.join(f'{ord(c):02X}' for c in sorted('%/ \\x7f'))\nP = re.compile(f'((?:%(?:{C}))+)', re.I)\nN = '-'.join(f'{ord(i):3}' for i in ('a', 'b'))",
        "C = '|'.join(f'{ord(c):02X}' for c in sorted('ab'))\nP = re.compile(f'((?:%(?:{C})+)', re.I)",
        Raises("error"),
        "f'((",
    ),
    (
        "",
        "C = '|'.join(f'{ord(c):x}' for c in ('a', 'b'))",
        "C = '|'.join(f'{ord(c):x}' for c in ('ab',))",
        Raises("TypeError"),
        "'|'.join",
    ),
    (
        "",
        "C = f'{ord(\"a\"):08b}'",
        "C = f'{ord(\"a\"):02s}'",
        Raises("ValueError"),
        "f'",
    ),
    (
        "import re",
        "def make(name, chars):\n    choices = '|'.join(f'{ord(c):02X}' for c in sorted(chars))\n    pattern = re.compile(f'((?:%(?:{choices}))+)', re.I)\n\n    def part(value):\n        return pattern.sub('', value)\n\n    part.__name__ = f'_unquote_{name}'\n    return part\nU = bytes((*range(0x21), 0x25, 0x7F)).decode()\nF = make('fragment', U)\nQ = make('query', U + '&=+#')",
        "def make(name):\n    def part(value):\n        return value\n\n    part.__name__ = 1\n    return part\nF = make('fragment')",
        Raises("TypeError"),
        "part.__name__",
    ),
    // A plain class body importing a stdlib module, wrapping one of its functions and
    // deleting the name again (werkzeug's `EnvironBuilder`).
    (
        "",
        "class B:\n    import json\n    dumps = staticmethod(json.dumps)\n    del json",
        "import json\nclass B:\n    dumps = staticmethod(json.dumps)\n    del json",
        Raises("NameError"),
        "del json",
    ),
    (
        "import json",
        "S = staticmethod(json.loads)",
        "S = staticmethod(json.dumpz)",
        Raises("AttributeError"),
        "json.dumpz",
    ),
    // Generic classes of the module subscripted (werkzeug.utils's `_DictAccessorProperty[T]`
    // bases): as many arguments as type parameters, and only `typing.Generic`'s
    // `__class_getitem__`.
    (
        "import typing as t\nT = t.TypeVar('T')\nU = t.TypeVar('U')",
        "class A(t.Generic[T, U]):\n    pass\nclass B(A[T, int]):\n    pass\nclass C(B[str]):\n    pass\nX = A[int, str]\nY = B[bytes]",
        "class A(t.Generic[T, U]):\n    pass\nclass B(A[T, int]):\n    pass\nY = B[bytes, str]",
        Raises("TypeError"),
        "bytes, str",
    ),
    (
        "import typing as t\nT = t.TypeVar('T')",
        "class A(t.Generic[T]):\n    pass\nX = A[int]",
        "class A(t.Generic[T]):\n    def __class_getitem__(cls, item):\n        raise KeyError(item)\nX = A[int]",
        Raises("KeyError"),
        "A[int]",
    ),
    // Values whose items are hashable unpacked into a set; `hasattr(sys, "real_prefix")` is
    // false on every worker (werkzeug._reloader).
    (
        "import sys",
        "A = tuple({sys.base_prefix, sys.base_exec_prefix})\nP = {*A, sys.prefix, *'ab', *frozenset((1,))}\nif hasattr(sys, 'real_prefix'):\n    P.add(sys.real_prefix)\nS = tuple(P)\ndel P",
        "P = {*tuple([[], 1])}",
        Raises("TypeError"),
        "tuple([[], 1])",
    ),
    (
        "import sys",
        "if hasattr(sys, 'real_prefix'):\n    X = sys.real_prefix",
        "if hasattr(sys, 'base_prefix'):\n    X = sys.real_prefix",
        Raises("AttributeError"),
        "sys.real_prefix",
    ),
    // Comprehensions over displays of proved values, with conditions (werkzeug.security).
    (
        "import os",
        "S = list(sep for sep in [os.sep, os.path.altsep] if sep is not None and sep != '/')\nT = [x for x in (1, 'a', None) if x is not None]",
        "S = list(sep for sep in [os.sep, os.path.altsep] if sep < '/')",
        Raises("TypeError"),
        "sep < '/'",
    ),
    // Set displays unpacking proved generators; f-strings of builtin scalars.
    (
        "",
        "D = {'CON', *(f'COM{i}' for i in range(10)), *('A', 'B')}",
        "D = {'CON', *([] for i in range(2))}",
        Raises("TypeError"),
        "[] for",
    ),
    (
        "",
        "N = 3\nS = f'n={N!r} {1.5} {None} {True} {N=}'",
        "S = f'{\"a\":d}'",
        Raises("ValueError"),
        "f'",
    ),
    // Tests fixed on every worker: `hasattr(os, "fork")` is true (only its arm runs), and a
    // dynamic import under `os.name == "nt"` never happens (no READY-014 either).
    (
        "import os",
        "F = hasattr(os, 'fork')\nif F:\n    X = 1\nelse:\n    X = []\nD = {X}",
        "F = hasattr(os, 'fork_nope')\nif F:\n    X = 1\nelse:\n    X = []\nD = {X}",
        Raises("TypeError"),
        "X}",
    ),
    (
        "import os",
        "if os.name == 'nt':\n    try:\n        __import__('colorama')\n    except ImportError:\n        pass",
        "if os.name == 'posix':\n    __import__('colorama_nope')",
        Raises("ModuleNotFoundError"),
        "__import__",
    ),
    // Stdlib values built from literals.
    (
        "import datetime",
        "Z = datetime.timedelta(0)\nH = datetime.timedelta(hours=1, minutes=-5)\nD = datetime.date(2024, 2, 29)\nT = datetime.datetime(1970, 1, 1, 0, 0)",
        "D = datetime.date(2023, 2, 29)",
        Raises("ValueError"),
        "datetime.date(2023",
    ),
    (
        "import datetime",
        "W = datetime.timedelta(weeks=1000000)",
        "W = datetime.timedelta(days=1000000000)",
        Raises("OverflowError"),
        "datetime.timedelta(days",
    ),
    (
        "import sys, io",
        "A = hasattr(sys, 'audit')\nG = getattr(sys, 'nope', None)",
        "A = hasattr(io, 'OpenWrapper')",
        Raises("DeprecationWarning"),
        "hasattr(io",
    ),
    (
        "import functools",
        "P = functools.partial(int, base=2)",
        "P = functools.partial(3)",
        Raises("TypeError"),
        "3)",
    ),
    (
        "import errno, logging, socket, sys",
        "E = {errno.EAGAIN, errno.EWOULDBLOCK}\nL = logging.DEBUG\nS = (sys.base_prefix, socket.AF_UNIX)",
        "E = errno.EFOO",
        Raises("AttributeError"),
        "errno.EFOO",
    ),
    // Several exception bases: CPython lays them out when at most one solid base other than
    // `BaseException`'s is among them, and their MROs merge (aliases are one class).
    (
        "",
        "class A(Exception):\n    pass\nclass B(A, ValueError):\n    pass\nclass C(OSError):\n    pass\nclass D(C, ConnectionError, B):\n    pass",
        "class A(OSError):\n    pass\nclass B(A, ImportError):\n    pass",
        Raises("TypeError"),
        "B(A, ImportError)",
    ),
    (
        "",
        "class A(KeyError, UserWarning):\n    pass",
        "class A(ValueError):\n    __slots__ = ('x',)\nclass C(A, OSError):\n    pass",
        Raises("TypeError"),
        "C(A, OSError)",
    ),
    (
        "",
        "class E(ValueError, Exception):\n    pass",
        "class E(Exception, ValueError):\n    pass",
        Raises("TypeError"),
        "E(Exception",
    ),
    (
        "",
        "class E(ConnectionError, IOError):\n    pass",
        "class E(OSError, IOError):\n    pass",
        Raises("TypeError"),
        "E(OSError",
    ),
    (
        "",
        "class E(LookupError, UnicodeError):\n    pass",
        "class E(int, ValueError):\n    pass",
        Raises("TypeError"),
        "E(int",
    ),
    // Rebinding a builtin exception to its own name (`BrokenPipeError = BrokenPipeError`).
    (
        "",
        "ConnectionError = ConnectionError\nBrokenPipeError = BrokenPipeError\nclass P(BrokenPipeError, TimeoutError):\n    pass",
        "B = BrokenPipeErr",
        Raises("NameError"),
        "BrokenPipeErr",
    ),
    // A name bound differently on each path, each time to a value whose truth test is safe
    // (a stdlib module or None): `if not ssl:` after an optional import.
    (
        "",
        "try:\n    import ssl\nexcept ImportError:\n    ssl = None\nif not ssl:\n    HAS_SSL = False\nelse:\n    HAS_SSL = True",
        "class Loud:\n    def __len__(self):\n        print('len')\n        return 0\ntry:\n    X = Loud()\nexcept ImportError:\n    X = None\nif not X:\n    pass",
        Effect("out != ''"),
        "X:",
    ),
    // An enum member read through its class (`_TYPE_FAILEDTELL.token`).
    (
        "import enum",
        "class T(enum.Enum):\n    token = 0\n    other = enum.auto()\nF = T.token\nO = T.other",
        "class T(enum.Enum):\n    token = 0\nF = T.tokens",
        Raises("AttributeError"),
        "T.tokens",
    ),
    (
        "import enum",
        "class T(enum.IntEnum):\n    A = 1\nF = {T.A: 'a'}",
        "class D:\n    def __get__(self, obj, owner):\n        print('get')\n        return 1\nclass T(enum.Enum):\n    d = D()\nF = T.d",
        Effect("out != ''"),
        "T.d",
    ),
    // Comparisons: ordering only numbers with numbers and int tuples with int tuples; `==`
    // and truth tests not of an instance of some class (its `__eq__`/`__len__` runs).
    (
        "import sys",
        "A = sys.version_info[:2] >= (3, 8)\nB = 1 < 2.5 <= 3\nC = (1, -2) < (1, 3)",
        "X = ('a',) < (1,)",
        Raises("TypeError"),
        "('a',) < (1,)",
    ),
    (
        "",
        "A = (1,) == ('a',)",
        "X = (1,) < 1",
        Raises("TypeError"),
        "(1,) < 1",
    ),
    (
        "",
        "class Quiet:\n    pass\nQ = Quiet()\nif Q is None:\n    pass",
        "class Loud:\n    def __len__(self):\n        print('len')\n        return 0\nX = Loud()\nif X:\n    pass",
        Effect("out != ''"),
        "X:",
    ),
    (
        "",
        "class Quiet:\n    pass\nQ = Quiet()\nif Q is not None:\n    pass",
        "class Loud:\n    def __eq__(self, other):\n        print('eq')\n        return False\nX = Loud()\nif X == 1:\n    pass",
        Effect("out != ''"),
        "X == 1",
    ),
    (
        "import sys",
        "N = not 0\nP = not sys.platform",
        "class Loud:\n    def __len__(self):\n        print('len')\n        return 0\nY = not Loud()",
        Effect("out != ''"),
        "Loud()",
    ),
    (
        "import enum",
        "class T(enum.Enum):\n    A = 1\n    def describe(self):\n        return 'a'\nS = {T.A}",
        "class T(enum.Enum):\n    A = 1\n    def __hash__(self):\n        print('hash')\n        return 1\nS = {T.A}",
        Effect("out != ''"),
        "T.A}",
    ),
    // `codecs.lookup` of a codec every CPython has, and an item of its `CodecInfo`.
    (
        "import codecs",
        "C0 = codecs.lookup('utf-8')\nC1 = codecs.lookup('utf8')\nC2 = codecs.lookup('utf_8')\nC3 = codecs.lookup('UTF-8')\nC4 = codecs.lookup('ascii')\nC5 = codecs.lookup('latin-1')\nC6 = codecs.lookup('latin1')\nC7 = codecs.lookup('latin_1')\nC8 = codecs.lookup('iso-8859-1')\nW = codecs.lookup('utf-8')[3]\nE = codecs.lookup('ascii')[-4]",
        "W = codecs.lookup('utf-9')",
        Raises("LookupError"),
        "codecs.lookup('utf-9')",
    ),
    (
        "import codecs",
        "R = codecs.lookup('latin-1')[2]",
        "W = codecs.lookup('utf-8')[4]",
        Raises("IndexError"),
        "codecs.lookup('utf-8')[4]",
    ),
    // Enum member values are hashed and compared when the class is built.
    (
        "import enum",
        "class T(enum.Enum):\n    a = (1, 'x')\n    b = None",
        "class D:\n    def __hash__(self):\n        print('hash')\n        return 1\nclass T(enum.Enum):\n    a = D()",
        Effect("out != ''"),
        "D()",
    ),
    // `**` of an int literal by a small exponent, also a comprehension's loop variable over a
    // display of such literals; `-1` is not one (`0 ** -1` raises).
    (
        "",
        "P = [10 ** x for x in (3, 6, 100)]\nQ = 2 ** 10",
        "P = [0 ** x for x in (1, -1)]",
        Raises("ZeroDivisionError"),
        "0 ** x",
    ),
    // A comprehension's code point is not a called function's local of the same name.
    (
        "",
        "def f(i):\n    j = i + 1\n    return j\nC = [chr(i) for i in range(3)]\nD = [f(i) for i in range(3)]",
        "def f(x):\n    i = 1114112\n    return chr(i)\nC = [f(i) for i in range(3)]",
        Raises("ValueError"),
        "chr(i)",
    ),
    // Markdown's `__meta__`: a local function run exactly on known arguments (`assert`, `if`,
    // `map(str, ...)`, slices, a dict lookup); a version tuple of 4 items fails its `assert`.
    (
        "",
        "__version_info__ = (3, 6, 0, 'final', 0)\ndef _get_version(version_info):\n    \" Returns a PEP 440-compliant version number. \"\n    assert len(version_info) == 5\n    assert version_info[3] in ('dev', 'alpha', 'beta', 'rc', 'final')\n    parts = 2 if version_info[2] == 0 else 3\n    v = '.'.join(map(str, version_info[:parts]))\n    if version_info[3] == 'dev':\n        v += '.dev' + str(version_info[4])\n    elif version_info[3] != 'final':\n        mapping = {'alpha': 'a', 'beta': 'b', 'rc': 'rc'}\n        v += mapping[version_info[3]] + str(version_info[4])\n    return v\n__version__ = _get_version(__version_info__)\nRC = _get_version((1, 2, 1, 'rc', 4))\nDEV = _get_version((1, 2, 0, 'dev', 0))",
        "__version_info__ = (3, 6, 0, 'final')\ndef _get_version(version_info):\n    \" Returns a PEP 440-compliant version number. \"\n    assert len(version_info) == 5\n    assert version_info[3] in ('dev', 'alpha', 'beta', 'rc', 'final')\n    parts = 2 if version_info[2] == 0 else 3\n    v = '.'.join(map(str, version_info[:parts]))\n    if version_info[3] == 'dev':\n        v += '.dev' + str(version_info[4])\n    elif version_info[3] != 'final':\n        mapping = {'alpha': 'a', 'beta': 'b', 'rc': 'rc'}\n        v += mapping[version_info[3]] + str(version_info[4])\n    return v\n__version__ = _get_version(__version_info__)",
        Raises("AssertionError"),
        "assert len",
    ),
    // A lookup of a missing key raises `KeyError`.
    (
        "",
        "def _suffix(kind):\n    mapping = {'alpha': 'a'}\n    return mapping[kind]\nS = _suffix('alpha')",
        "def _suffix(kind):\n    mapping = {'alpha': 'a'}\n    return mapping[kind]\nS = _suffix('gamma')",
        Raises("KeyError"),
        "mapping[kind]",
    ),
    // A name the body assigns is local everywhere: reading it first raises.
    (
        "",
        "def _f(a):\n    b = a\n    TAG = b\n    return TAG\nTAG = 'x'\nT = _f('y')",
        "def _f(a):\n    b = TAG\n    TAG = a\n    return b\nTAG = 'x'\nT = _f('y')",
        Raises("UnboundLocalError"),
        "TAG",
    ),
    // A module that rebinds `len`: its `len` runs, not the builtin.
    (
        "",
        "def _check(v):\n    assert len(v) == 2\n    return v\nC = _check((1, 2))",
        "def len(x):\n    return 0\ndef _check(v):\n    assert len(v) == 2\n    return v\nC = _check((1, 2))",
        Raises("AssertionError"),
        "assert len(v)",
    ),
    // The module's own decorator factory (Markdown's `deprecated`) and decorator: the closure
    // the factory returns is called with the function and returns one; a closure that
    // computes with the function raises.
    (
        "import functools, warnings",
        "def deprecated(message):\n    def wrapper(func):\n        @functools.wraps(func)\n        def deprecated_func(*args, **kwargs):\n            warnings.warn(message, DeprecationWarning)\n            return func(*args, **kwargs)\n        return deprecated_func\n    return wrapper\ndef tracked(func):\n    return func\n@deprecated('use g')\ndef f():\n    return 1\n@tracked\ndef g():\n    return 2",
        "def deprecated(message):\n    def wrapper(func):\n        return func + message\n    return wrapper\n@deprecated('use g')\ndef f():\n    return 1",
        Raises("TypeError"),
        "deprecated('use g')",
    ),
    // The module's own decorator on a class (Markdown's `@util.deprecated(...)` on
    // `UnescapePostprocessor`): `functools.wraps` of a class reads `type`'s descriptors and a
    // dict of annotations; a class body binding `__annotations__` to no dict makes
    // `update_wrapper`'s setter raise.
    (
        "import functools, warnings",
        "def deprecated(message):\n    def wrapper(func):\n        @functools.wraps(func)\n        def deprecated_func(*args, **kwargs):\n            warnings.warn(message, DeprecationWarning)\n            return func(*args, **kwargs)\n        return deprecated_func\n    return wrapper\ndef same(tag):\n    def wrapper(cls):\n        return cls\n    return wrapper\nclass Base:\n    pass\n@deprecated('use B')\nclass A(Base):\n    \"\"\"Doc.\"\"\"\n    x: int = 1\n    def run(self):\n        return 1\n@same(1)\nclass C:\n    pass\nD = C()",
        "def deprecated(message):\n    def wrapper(func):\n        @functools.wraps(func)\n        def deprecated_func(*args, **kwargs):\n            warnings.warn(message, DeprecationWarning)\n            return func(*args, **kwargs)\n        return deprecated_func\n    return wrapper\n@deprecated('use B')\nclass A:\n    __annotations__ = 1",
        Raises("TypeError"),
        "deprecated('use B')",
    ),
    // A class decorator that returns something else than a function or class: the name is
    // that value (here calling it raises, which v2 never assumes it may do).
    (
        "",
        "def same(tag):\n    def wrapper(cls):\n        return cls\n    return wrapper\n@same(1)\nclass C:\n    pass\nD = C()",
        "def same(tag):\n    def wrapper(cls):\n        return tag\n    return wrapper\n@same(1)  # applied\nclass C:\n    pass\nD = C()",
        Raises("TypeError"),
        "same(1)  # applied",
    ),
    // dateutil's `MO, TU, ... = weekdays = tuple(weekday(x) for x in range(7))`: one item per
    // `range(n)` step unpacks into as many names; one name fewer raises `ValueError`.
    (
        "",
        "class W:\n    __slots__ = ['weekday', 'n']\n    def __init__(self, weekday, n=None):\n        self.weekday = weekday\n        self.n = n\nMO, TU, WE = days = tuple(W(x) for x in range(3))\nA, B = [x for x in range(2)]\nC, D = list(x for x in range(2))",
        "class W:\n    __slots__ = ['weekday', 'n']\n    def __init__(self, weekday, n=None):\n        self.weekday = weekday\n        self.n = n\nMO, TU = days = tuple(W(x) for x in range(3))",
        Raises("ValueError"),
        "MO, TU",
    ),
    // A decorator that does not return a function: the name is no function afterwards.
    (
        "import collections",
        "def marking(tag):\n    def wrapper(func):\n        return func\n    return wrapper\n@marking(1)\ndef f():\n    return 1\nD = collections.defaultdict(f)",
        "def marking(tag):\n    def wrapper(func):\n        return tag\n    return wrapper\n@marking(1)\ndef f():\n    return 1\nD = collections.defaultdict(f)",
        Raises("TypeError"),
        "marking(1)",
    ),
    // `functools.wraps` of something else than a function: `update_wrapper` copies a
    // `__name__` that is no str.
    (
        "import functools",
        "def g():\n    return 2\n@functools.wraps(g)\ndef f():\n    return 1",
        "class Named:\n    __name__ = 1\n@functools.wraps(Named())\ndef f():\n    return 1",
        Raises("TypeError"),
        "functools.wraps(Named())",
    ),
    (
        "from http import cookiejar as cookielib",
        "class Jar(cookielib.CookieJar):\n    pass",
        "J = cookielib.CookieJarX",
        Raises("AttributeError"),
        "cookielib.CookieJarX",
    ),
    // sys.intern of a str literal (jinja2.lexer's TOKEN_ADD = intern("add")).
    (
        "from sys import intern",
        "TOKEN_ADD = intern('add')",
        "TOKEN_ADD = intern(b'add')",
        Raises("TypeError"),
        "intern(b'add')",
    ),
    // Marker decorators (v2/markers.rs): a local function that only sets non-dunder
    // attributes of its one parameter to values read from the module, and returns it.
    (
        "import enum",
        "def tag(f):\n    \"\"\"Doc.\"\"\"\n    f.kind = K.a\n    f.n = 1\n    return f\nclass K(enum.Enum):\n    a = 1\n@tag\n@tag  # applied\ndef g(): pass",
        "def tag(f):\n    f.__name__ = 1\n    return f\n@tag  # applied\ndef g(): pass",
        Raises("TypeError"),
        "tag  # applied",
    ),
    (
        "",
        "def tag(f):\n    f.kind = KIND\n    return f\nKIND = 1\n@tag  # applied\ndef g(): pass",
        "def tag(f):\n    f.kind = KIND\n    return f\n@tag  # applied\ndef g(): pass\nKIND = 1",
        Raises("NameError"),
        "tag  # applied",
    ),
    (
        "",
        "def tag(f):\n    f.kind = 1\n    return f\n@tag  # applied\nasync def g(): pass",
        "def tag(f):\n    f.kind = 1\n    return f\nclass C:\n    @tag  # applied\n    @property\n    def x(self): return 1",
        Raises("AttributeError"),
        "tag  # applied",
    ),
    (
        "",
        "def tag(f):\n    f.kind = 1\n    return f\n@tag  # applied\ndef g(): pass",
        "async def tag(f):\n    f.kind = 1\n    return f\n@tag  # applied\ndef g(): pass",
        Effect("type(g).__name__ == 'coroutine'"),
        "tag  # applied",
    ),
    (
        "",
        "class O: pass\ndef tag(f):\n    f.kind = O\n    return f\n@tag  # applied\ndef g(): pass",
        "class O: pass\ndef tag(f):\n    O.kind = 1\n    return f\n@tag  # applied\ndef g(): pass",
        Effect("O.kind == 1"),
        "tag  # applied",
    ),
    (
        "",
        "def tag(f):\n    f.kind = 1\n    return f\n@tag  # applied\ndef g(): pass",
        "def tag(f):\n    f.kind = 1\n    return None\n@tag  # applied\ndef g(): pass",
        Effect("g is None"),
        "tag  # applied",
    ),
];

fn module(imports: &str, body: &str) -> String {
    let imports = if imports.is_empty() { "pass" } else { imports };
    format!("{imports}\n{body}\n\n\ndef probe(x: int) -> int:\n    return x\n")
}

/// Whether `probe` is ready under v2, and the READY-004 culprits' notes.
fn v2(source: &str) -> (bool, Vec<String>) {
    let (ready, culprits) = v2_support::probe(source, ReadinessPolicy::V2);
    (ready, v2_support::notes(&culprits, "APIZR-READY-004"))
}

#[test]
fn each_rule_proves_its_safe_statement_and_keeps_its_near_miss_with_line_and_column() {
    let mut failures = Vec::new();
    for (imports, safe, near, _, culprit) in CASES {
        let (ready, notes) = v2(&module(imports, safe));
        if !ready {
            failures.push(format!("not proved: {safe}\n  {notes:?}"));
        }
        let source = module(imports, near);
        let (ready, notes) = v2(&source);
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

/// CPython, once for all cases: each snippet runs in a fresh namespace with warnings as errors
/// and stdout captured; one JSON line per snippet says what happened.
const DRIVER: &str = r#"
import contextlib, io, json, logging, sys, warnings
for line in sys.stdin:
    case = json.loads(line)
    ns = {"__name__": "fixture"}
    out = io.StringIO()
    result = "ok"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        before = list(warnings.filters)
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(case["source"], "fixture", "exec"), ns)
        except BaseException as e:
            result = "raises " + type(e).__name__
        added = [f for f in warnings.filters if f not in before]
        effect = case["effect"] and eval(case["effect"], dict(ns, added=added, out=out.getvalue(), logging=logging))
    logging.getLogger("fixture").handlers.clear()
    print(json.dumps({"result": result, "out": out.getvalue(), "effect": bool(effect)}))
"#;

#[test]
fn in_cpython_safe_statements_run_cleanly_and_near_misses_raise_or_have_their_effect() {
    let mut input = String::new();
    let mut expected = Vec::new();
    for (imports, safe, near, outcome, _) in CASES {
        for (source, outcome) in [
            (module(imports, safe), None),
            (module(imports, near), Some(outcome)),
        ] {
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
            None => result == "ok" && got["out"] == "",
            Some(Raises(name)) => result == format!("raises {name}"),
            Some(Effect(_)) => result == "ok" && got["effect"] == true,
        };
        if !ok {
            failures.push(format!("{source}\n  -> {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
