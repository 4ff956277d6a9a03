import requests


def fetch(url: str) -> str:
    return requests.get(url).text
