# Several bases of the module's own plain classes, when Python can merge their MROs.
from abc import ABC


class ParamType:
    name = "text"


class _NumberBase(ParamType):
    pass


class _RangeBase(_NumberBase):
    pass


class IntType(_NumberBase):
    pass


class IntRange(_RangeBase, IntType):
    pass


class Mixin:
    pass


class WithAbc(Mixin, ABC):
    pass


class Mapping(dict):
    pass


class Both(Mixin, Mapping):
    pass


def probe(x: int) -> int:
    return x
