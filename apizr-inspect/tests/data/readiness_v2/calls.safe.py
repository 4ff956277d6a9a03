import logging
import re
import threading
from collections import defaultdict, OrderedDict

log = logging.getLogger(__name__)
other = logging.getLogger("pkg.other")
WORD = re.compile(r"(?P<word>[A-Za-z_]\w*)\s*=\s*(\d{1,3})?", re.I | re.M)
VERBOSE = re.compile(r"""
    \d+   # digits
    """, re.X)
_missing = object()
_lock = threading.RLock()
CACHE = defaultdict(list)
ORDER = OrderedDict()
EMPTY = frozenset({"a", "b"})


def probe(x: int) -> int:
    return x
