from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from somewhere_else import Thing
else:
    Thing = object

def helper(t: "Thing") -> None:
    pass


def probe(x: int) -> int:
    return x
