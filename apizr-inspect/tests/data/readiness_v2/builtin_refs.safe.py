# Builtin functions named as values, string prefix tests as values, `os.path` constants,
# `io` classes as bases and `types` classes in annotations.
import io
import os
import sys
import typing as t
from types import TracebackType

CYGWIN = sys.platform.startswith("cygwin")
WIN = sys.platform.startswith(("win", "cygwin"))
if WIN and CYGWIN:
    SEP = "\\"
visible_prompt_func: t.Callable[[str], str] = input
TESTS = {"callable": callable, "len": len, "isinstance": isinstance}
SPLITTER = os.path.pathsep


class Wrapper(io.TextIOWrapper):
    pass


def close(tb: t.Optional[TracebackType]) -> None:
    pass


def probe(x: int) -> int:
    return x
