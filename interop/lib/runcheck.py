"""Runs one Python check: the file named on the command line, whose
top-level code raises when the check fails. The last line of stderr is
"why: <the reason on one line>" on a failure. The process then exits,
whatever threads or handles the check left open.
"""

import os
import runpy
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vouchcheck import leaves  # noqa: E402 - from the directory just put on the path

status = 0
try:
    runpy.run_path(sys.argv[1], run_name="__main__")
except BaseException as err:  # noqa: BLE001 - a check fails however it stops
    status = 1
    traceback.print_exc()
    why = " ".join(str(err).split())
    if not isinstance(err, AssertionError):
        # Not a check's own failure (vouchcheck.CheckFailed): name its type.
        why = f"{type(err).__name__}: {why}" if why else type(err).__name__
    if isinstance(err, BaseExceptionGroup):
        # anyio's task groups wrap what a check raised; name the leaves.
        why = "; ".join(f"{type(e).__name__}: {' '.join(str(e).split())}" for e in leaves(err))
    print("why: " + why, file=sys.stderr)
sys.stdout.flush()
sys.stderr.flush()
os._exit(status)
