from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .refused import Ring2


@dataclass
class Ring:
    next: Ring2
