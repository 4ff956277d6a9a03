import json

class Config:
    data = json.loads("{}")


def probe(x: int) -> int:
    return x
