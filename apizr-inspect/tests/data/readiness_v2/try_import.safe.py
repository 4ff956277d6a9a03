try:
    import simplejson as json
except ImportError:
    import json
try:
    from fastlib import speedup
except (ImportError, AttributeError):
    speedup = None


def probe(x: int) -> int:
    return x
