import yaml


def load(text: str) -> str:
    return str(yaml.safe_load(text))
