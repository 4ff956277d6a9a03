from .names import NAMES


def grow():
    NAMES.append({})
