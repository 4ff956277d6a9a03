"""Forward references (string annotations) and names that only type checkers import: under v2
they mean the expression the string spells, in the module's environment."""
from __future__ import annotations

import sys
import typing as t
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typing_extensions as te
    from typing_extensions import Literal

    if sys.version_info >= (3, 10):
        from typing import TypeAlias
    else:
        from typing_extensions import TypeAlias

NumberOrString: TypeAlias = "float | str"


def ordinal(value: NumberOrString, gender: str = "male") -> str:
    return f"{value}:{gender}"


def stream(name: "te.Literal['stdin', 'stdout', 'stderr']") -> str:
    return name


def sort_by(by: 'te.Literal["key", "value"]' = "key", reverse: Literal[True, False] = False) -> str:
    return f"{by}{reverse}"


def listed(items: "t.List[NumberOrString]") -> int:
    return len(items)


# Near misses: a string that does not parse, a name nothing binds as a type, and a string
# inside a forward reference (not read again).
def broken(x: "int |") -> int:
    return 1


def unknown(x: "Missing") -> int:
    return 1


def nested(x: "t.List['int']") -> int:
    return 1


Plain = "float | str"


def constant(x: Plain) -> int:
    return 1
