"""`frozenset[T]` (readiness v2): a JSON array of unique items the worker freezes; being
hashable, a frozenset may itself be a set member (tomli's `skip_until(..., error_on:
frozenset[str])`)."""


def skip_until(src: str, pos: int, expect: str, *, error_on: frozenset[str]) -> str:
    return f"{type(error_on).__name__}:{sorted(error_on)}:{src[pos:]}{expect}"


def groups(members: set[frozenset[int]]) -> str:
    return ",".join(sorted(f"{type(g).__name__}{sorted(g)}" for g in members))


# Near miss: unsubscripted, it says nothing about its items.
def bare(x: frozenset) -> int:
    return len(x)
