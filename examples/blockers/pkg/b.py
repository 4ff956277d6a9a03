"""Waits for the same two culprits; `age` also has an input type of its own."""
import datetime

from .config import SETTINGS


def size() -> int:
    return len(SETTINGS)


def age(when: datetime.datetime) -> int:
    return when.year
