"""Readiness v2 arrays: each function reports the Python types the worker gave it."""
from collections.abc import Iterable
from typing import AbstractSet, Mapping, MutableSequence, Sequence


def kinds(values: Sequence[int], words: Iterable[str], stack: MutableSequence[float]) -> str:
    stack.append(0.5)
    got = (values, words, stack, stack[0])
    return ",".join(type(x).__name__ for x in got) + ":" + str(sum(values) + sum(stack))


def blobs(data: bytes, buf: bytearray, parts: Sequence[bytes]) -> str:
    buf.extend(data)
    got = (data, buf, parts, parts[0] if parts else b"")
    return ",".join(type(x).__name__ for x in got) + ":" + buf.hex() + ":" + data.decode("latin-1")


def shapes(tags: AbstractSet[str], table: Mapping[str, int]) -> str:
    return type(tags).__name__ + "," + type(table).__name__ + ":" + ",".join(sorted(tags))
