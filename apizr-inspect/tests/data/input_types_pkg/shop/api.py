from __future__ import annotations

from typing import TYPE_CHECKING

from shop.kinds import Points

from .models import Color, Point, Tagged

if TYPE_CHECKING:
    from .extra import Box
    from .models import Pair


def move(p: Point, dx: int) -> Point:
    if type(p) is not Point:
        raise TypeError(type(p))
    return Point(p.x + dx, p.y)


def paint(t: Tagged, c: Color) -> str:
    if type(t) is not Tagged or type(t.point) is not Point or not isinstance(c, Color):
        raise TypeError((type(t), type(c)))
    return "%s,%s:%s/%s" % (t.point.x, t.point.y, t.color.value, c.value)


def total(ps: Points) -> int:
    if not all(type(p) is Point for p in ps):
        raise TypeError(ps)
    return sum(p.x + p.y for p in ps)


def unbox(b: Box, pair: Pair) -> int:
    if type(b).__module__ != "shop.extra" or type(b).__name__ != "Box":
        raise TypeError(type(b))
    if type(pair).__module__ != "shop.models" or type(pair).__name__ != "Pair":
        raise TypeError(type(pair))
    return b.size + len(pair.left)
