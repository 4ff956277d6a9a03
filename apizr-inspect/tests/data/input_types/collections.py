"""Abstract collections a list is an instance of: JSON arrays under readiness v2."""
import collections.abc
import typing as t
from collections.abc import Iterable
from typing import Collection, MutableSequence, Reversible, Sequence

import collections.abc as cabc


def total(values: Sequence[int]) -> int:
    return sum(values)


def join(words: Iterable[str], sep: str = " ") -> str:
    return sep.join(words)


def count(items: Collection[str]) -> int:
    return len(items)


def push(stack: MutableSequence[int], top: int) -> int:
    stack.append(top)
    return len(stack)


def nested(rows: t.Sequence[t.Iterable[float]]) -> float:
    return sum(sum(row) for row in rows)


def spelled(a: collections.abc.Sequence[str], b: cabc.Collection[int]) -> int:
    return len(a) + len(b)


def anything(values: Sequence) -> int:
    return len(values)


# Near-misses: each keeps READY-013 under v2.
def reversible(values: Reversible[int]) -> int:
    return len(list(values))


def mapping(values: t.Mapping[str, int]) -> int:  # ready: a dict is a Mapping
    return len(values)


def iterator(values: t.Iterator[int]) -> int:
    return sum(values)



def members(tags: t.AbstractSet[str], more: cabc.MutableSet[int]) -> int:
    return len(tags) + len(more)


def lookup(table: t.Mapping[str, int], extra: collections.abc.MutableMapping[str, str]) -> int:
    return len(table) + len(extra)


def int_keys(table: t.Mapping[int, str]) -> int:  # READY-012: JSON keys are strings
    return len(table)
