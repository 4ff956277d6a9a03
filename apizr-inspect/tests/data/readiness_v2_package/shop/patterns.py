import re

from . import texts
from .texts import PREVENT_BACKSLASH, TAGS

# The imported strings keep their values: both patterns are checked like literals.
STRIKE = re.compile(r"(?:" + PREVENT_BACKSLASH + r"\\~|[^\s~])~~(?!~)")
TAG = re.compile("<(?:{})>".format("|".join(TAGS)) + texts.PREVENT_BACKSLASH)


def patterns(x: int) -> int:
    return x
