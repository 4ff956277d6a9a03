"""Classes other modules of the package instantiate or subclass at import."""
from typing import NamedTuple


class Item(NamedTuple):
    pattern: str
    builder: str
    tags: str = ""


class LookupDict(dict):
    def __init__(self, name=None):
        self.name = name
        super().__init__()


class Plugin:
    """A base class without hooks."""

    def run(self) -> str:
        return "ok"


class Registered:
    """Subclassing it runs `__init_subclass__`, which refuses a subclass without `name`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not hasattr(cls, "name"):
            raise TypeError(cls.__name__)


def count(x: int) -> int:
    return x
