from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    size: int
