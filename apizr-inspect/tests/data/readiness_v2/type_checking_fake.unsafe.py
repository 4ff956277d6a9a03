# Near miss: a module's own TYPE_CHECKING is true at run time; its body runs.
TYPE_CHECKING = True
if TYPE_CHECKING:
    THING = undefined_name  # noqa: F821


def probe(x: int) -> int:
    return x
