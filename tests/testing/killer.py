"""Run the rlobs CLI and SIGKILL it at its Nth rename (os.replace): `python -m testing.killer N rlobs-args...`.

An injected failure point that needs no hook in rlobs: the process kills itself with the real signal, so nothing
after that instant runs (no finally, no atexit). With N = 0 it runs to the end and prints how many renames it made
on stderr's last line, so a test can then kill at every one of them.
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    kill_at = int(sys.argv[1])
    calls = [0]
    real = os.replace

    def replace(*args: object, **kw: object) -> None:
        calls[0] += 1
        if calls[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        real(*args, **kw)  # type: ignore[arg-type]

    os.replace = replace  # type: ignore[assignment]
    sys.argv = ["rlobs", *sys.argv[2:]]
    from rlobs.main import app

    try:
        app()
    finally:
        print(f"renames: {calls[0]}", file=sys.stderr)


if __name__ == "__main__":
    main()
