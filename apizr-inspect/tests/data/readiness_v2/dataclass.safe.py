from dataclasses import dataclass, field
from typing import ClassVar, List

@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: List[str] = field(default_factory=list)
    registry: ClassVar[dict] = {}

    def norm(self) -> float:
        return (self.x ** 2 + self.y ** 2) ** 0.5

@dataclass(kw_only=True)
class Options:
    verbose: bool = False
    name: str


def probe(x: int) -> int:
    return x
