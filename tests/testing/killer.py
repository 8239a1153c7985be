"""Run the rlobs CLI and signal it at a rename (os.replace): `python -m testing.killer WHEN rlobs-args...`.

An injected failure point that needs no hook in rlobs: the process signals itself with the real signal just before
the rename. WHEN is N (SIGKILL at its Nth rename: nothing after that instant runs, no finally, no atexit), `SIG:N`
(SIGINT or SIGTERM at its Nth rename) or `SIG:commit` (at the first rename onto the journal: a write's commit
point). With N = 0 it runs to the end and prints what each rename did and, on stderr's last line, how many it made,
so a test can then signal it at any of them. Only this process signals itself, never a forked worker.
"""

from __future__ import annotations

import os
import signal
import sys


def _kind(dst: str, dir_fd: object) -> str:
    """What a rename is, as a step of a write: a record in rlobs's user cache (`cache:journals`, `cache:bundles`),
    the commit point, the manifest, or a bundle file (created or replaced alike: one call in rlobs.bundle.tree)."""
    if not isinstance(dir_fd, int):
        return "cache:" + os.path.basename(os.path.dirname(dst))
    return dst if dst in (".rlobs-journal.json", ".rlobs-manifest.json") else "file"


def _signal_at(when: str) -> list[str]:
    """Make this process signal itself at a rename, as WHEN says; the list has each rename's kind (_kind)."""
    name, _, at = when.rpartition(":")
    sig = getattr(signal, f"SIG{name}") if name else signal.SIGKILL
    calls: list[str] = []
    fired, me = [False], os.getpid()
    real = os.replace

    def replace(*args: object, **kw: object) -> None:
        calls.append(_kind(str(args[1]), kw.get("dst_dir_fd")))
        hit = os.path.basename(str(args[1])) == ".rlobs-journal.json" if at == "commit" else len(calls) == int(at)
        if hit and not fired[0] and os.getpid() == me:
            fired[0] = True
            os.kill(me, sig)
        real(*args, **kw)  # type: ignore[arg-type]

    os.replace = replace  # type: ignore[assignment]
    return calls


def _run(args: list[str]) -> int:
    from rlobs.entry import run

    sys.argv = ["rlobs", *args]
    try:
        run()
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    return 0


def many(spec: str) -> None:
    """`python -m testing.killer --many SPEC.json`: SPEC is {"warm": [args], "trials": [[WHEN, [args], log]]}.
    Renders `warm` once here (so every module a render needs is imported), then forks one child per trial, two at
    a time, each the CLI signalling itself at its rename as main() does, stderr into `log`; prints the children's
    exit statuses as a JSON list (negative: ended by that signal). A fleet render took 0.45 s in a warm fork against
    0.92 s from a fresh interpreter (2 busy cores): what makes a trial at every rename of a fleet affordable."""
    import json

    with open(spec, encoding="utf-8") as fh:
        plan = json.loads(fh.read())
    quiet, saved = os.open(os.devnull, os.O_WRONLY), (os.dup(1), os.dup(2))
    os.dup2(quiet, 1), os.dup2(quiet, 2)
    _run(plan["warm"])
    sys.stdout.flush(), sys.stderr.flush()
    os.dup2(saved[0], 1), os.dup2(saved[1], 2)
    running: dict[int, int] = {}
    statuses: list[int] = [0] * len(plan["trials"])

    def reap() -> None:
        pid, status = os.wait()
        statuses[running.pop(pid)] = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)

    for index, (when, args, log) in enumerate(plan["trials"]):
        while len(running) >= 2:
            reap()
        pid = os.fork()
        if pid == 0:  # the trial: the CLI as a fresh process runs it, only already imported
            os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2), os.dup2(quiet, 1)
            _signal_at(when)
            code = _run(args)
            sys.stdout.flush(), sys.stderr.flush()
            os._exit(code)
        running[pid] = index
    while running:
        reap()
    print(json.dumps(statuses))


def main() -> None:
    if sys.argv[1] == "--many":
        many(sys.argv[2])
        return
    calls = _signal_at(sys.argv[1])
    sys.argv = ["rlobs", *sys.argv[2:]]
    from rlobs.entry import run

    try:
        run()
    finally:
        print(f"kinds: {' '.join(calls)}", file=sys.stderr)
        print(f"renames: {len(calls)}", file=sys.stderr)


if __name__ == "__main__":
    main()
