"""A top-level module: no package to wait for; its function has an input type reason only."""
import datetime


def stamp(when: datetime.datetime) -> str:
    return when.isoformat()
