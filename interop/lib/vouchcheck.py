"""The environment run.sh gives every check (see ../README.md), and small
assertions whose message says what was wrong, for the Python checks."""

import contextlib
import json
import os


def need(name: str) -> str:
    """need returns the environment variable name, and raises when run.sh did not set it."""
    v = os.environ.get(name)
    if not v:
        raise RuntimeError(f"{name} is not set: run the check through interop/run.sh")
    return v


class CheckFailed(AssertionError):
    """What a check raises when the server did not do what it should."""


def ok(cond: object, msg: str) -> None:
    """ok raises msg unless cond holds."""
    if not cond:
        raise CheckFailed(msg)


def equal(got: object, want: object, what: str) -> None:
    """equal raises unless got equals want."""
    if got != want:
        raise CheckFailed(f"{what}: got {show(got)}, want {show(want)}")


def show(v: object) -> str:
    """show writes v on one line, cut to a readable length."""
    try:
        s = json.dumps(v, default=repr)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= 400 else s[:400] + "…"


def leaves(err: BaseException) -> list[BaseException]:
    """leaves lists the exceptions in err, inside the groups anyio's task groups wrap them in."""
    if isinstance(err, BaseExceptionGroup):
        return [leaf for e in err.exceptions for leaf in leaves(e)]
    return [err]


@contextlib.contextmanager
def step(what: str):
    """step names what the check was doing in any error its block raises
    that is not already a CheckFailed (an SDK's or a connection's)."""
    try:
        yield
    except CheckFailed:
        raise
    except Exception as err:  # noqa: BLE001 - reported, not handled
        found = leaves(err)
        if len(found) == 1 and isinstance(found[0], CheckFailed):
            raise found[0] from err
        why = "; ".join(f"{type(e).__name__}: {' '.join(str(e).split())}" for e in found)
        raise CheckFailed(f"{what}: {why}") from err
