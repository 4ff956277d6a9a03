import abc
import collections
import gettext
import io
import logging
import operator
import re
import struct
import time
from typing import Optional, Tuple, Union

_32_BIT = struct.calcsize("P") == 4
_SIZES = collections.defaultdict(lambda: 50)
_OPERATORS = {"<": operator.lt, "<=": operator.le, "in": operator.contains}
clock = time.perf_counter
_TRANSLATIONS = {None: gettext.NullTranslations()}
NoneType = type(None)
BuildTag = Union[Tuple[()], Tuple[int, str]]
MaybePattern = Optional[re.Pattern]
OPERATOR = re.compile(r"(?<===|!=)\s*(?P<v>\w+)(?<!==|!=|~=)")


class Base(metaclass=abc.ABCMeta):
    _op = r"(?P<operator>(~=|==))"
    _version = r"\s*[0-9]+"
    _regex = re.compile(r"^\s*" + _op + _version + r"\s*$", re.VERBOSE | re.IGNORECASE)

    @abc.abstractmethod
    def name(self) -> str: ...


class Flags:
    _all = ("a",)
    enable = classmethod(lambda cls, name: cls._all)


class Stream(io.RawIOBase):
    def readable(self) -> bool:
        return True


class Colored(logging.StreamHandler):
    pass


def probe(x: int) -> int:
    return x
