from importlib import import_module


def load(name):
    return import_module(name)


child = load("near_cycle.child")
NAME = "cycle"


def probe(x: int) -> int:
    return x
