import enum
from enum import Enum, IntEnum, auto, unique

@unique
class Color(Enum):
    RED = "red"
    GREEN = "green"

    def label(self) -> str:
        return self.value

class Level(IntEnum):
    LOW = 1
    HIGH = auto()

class Kind(str, enum.Enum):
    A = "a"


def probe(x: int) -> int:
    return x
