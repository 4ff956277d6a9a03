from typing import Callable, Dict, List, Literal, Optional, Union
import typing
Number = Union[int, float]
MaybeStr = Optional[str]
Table = Dict[str, List["Row"]]
Handler = Callable[[int, str], None]
Mode = Literal["r", "w", -1]
Pair = tuple[int, ...]
Either = int | None
Deep = typing.Mapping[str, Number]


def probe(x: int) -> int:
    return x
