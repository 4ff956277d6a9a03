from dataclasses import dataclass

from .base import KINDS, Base


@dataclass
class Item(Base):
    name: str = ""
    kind: str = "a"


def describe(name: str, kind: str) -> str:
    return f"{name} ({kind})"
