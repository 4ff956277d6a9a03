from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .models import Holder, Loose

if TYPE_CHECKING:
    from .cycle import Ring
    from .noisy import Noise


def hold(h: Holder) -> int:
    return 0


def loose(l: Loose) -> int:
    return 0


def ring(r: Ring) -> int:
    return 0


def noisy(n: Noise) -> int:
    return 0


@dataclass
class Ring2:
    back: Ring
