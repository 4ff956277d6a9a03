try:
    import simplejson as json
except ImportError:
    pass
DUMPS = json


def probe(x: int) -> int:
    return x
