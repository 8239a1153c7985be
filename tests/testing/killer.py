"""Run the rlobs CLI and signal it at a rename (os.replace): `python -m testing.killer WHEN rlobs-args...`.

An injected failure point that needs no hook in rlobs: the process signals itself with the real signal just before
the rename. WHEN is N (SIGKILL at its Nth rename: nothing after that instant runs, no finally, no atexit), `SIG:N`
(SIGINT or SIGTERM at its Nth rename) or `SIG:commit` (at the first rename onto the journal: a write's commit
point). With N = 0 it runs to the end and prints how many renames it made on stderr's last line, so a test can then
kill at every one of them. Only this process signals itself, never a forked worker.
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    when = sys.argv[1]
    name, _, at = when.rpartition(":")
    sig = getattr(signal, f"SIG{name}") if name else signal.SIGKILL
    calls, fired, me = [0], [False], os.getpid()
    real = os.replace

    def replace(*args: object, **kw: object) -> None:
        calls[0] += 1
        hit = os.path.basename(str(args[1])) == ".rlobs-journal.json" if at == "commit" else calls[0] == int(at)
        if hit and not fired[0] and os.getpid() == me:
            fired[0] = True
            os.kill(me, sig)
        real(*args, **kw)  # type: ignore[arg-type]

    os.replace = replace  # type: ignore[assignment]
    sys.argv = ["rlobs", *sys.argv[2:]]
    from rlobs.entry import run

    try:
        run()
    finally:
        print(f"renames: {calls[0]}", file=sys.stderr)


if __name__ == "__main__":
    main()
