# Calls of local functions with parameters whose bodies v2 proves (a stream-function factory).
import sys
import typing as t
from weakref import WeakKeyDictionary


def get_text_stdin() -> t.TextIO:
    return sys.stdin


def _make_cached_stream_func(src_func, wrapper_func, *, size=None):
    """A cached stream function."""
    cache: t.MutableMapping[t.TextIO, t.TextIO] = WeakKeyDictionary()

    def func() -> t.Optional[t.TextIO]:
        stream = src_func()
        rv = cache.get(stream)
        return rv if rv is not None else wrapper_func()

    return func


_default_text_stdin = _make_cached_stream_func(lambda: sys.stdin, get_text_stdin)
_default_text_stdout = _make_cached_stream_func(
    src_func=lambda: sys.stdout, wrapper_func=get_text_stdin, size=2
)


def _pair(a, b=0):
    pair = (a, "x")
    return pair


PAIR = _pair(1)


def probe(x: int) -> int:
    return x
