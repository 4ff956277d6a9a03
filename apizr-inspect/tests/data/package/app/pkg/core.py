import json
from typing import TYPE_CHECKING

from . import util
from .util import helper as help_me
from .. import above

if TYPE_CHECKING:
    from pkg import typing_only


class Core:
    from pkg import shadow


def later():
    from pkg import lazy
    return lazy
