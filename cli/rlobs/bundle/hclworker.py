"""python-hcl2 in a child process, for the HCL that rlobs.bundle.hclread does not read (the Terraform templates).

Importing lark and loading python-hcl2's grammar cache costs ~250 ms, more than the whole render; the checker
starts the process before it checks the other formats, so on a second core that overlaps them. Requests and
answers are one JSON line each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from types import TracebackType

_CHILD = """
import json, sys
import hcl2
hcl2.loads("warm = 1\\n")
for line in sys.stdin:
    failures = []
    for path, text in json.loads(line).items():
        try:
            hcl2.loads(text)
        except Exception as exc:
            failures.append(f"{path}: does not parse back: {type(exc).__name__}: {exc}")
    print(json.dumps(failures), flush=True)
"""


class HclWorker:
    def __init__(self) -> None:
        # stderr goes to a file, not a pipe nobody reads until the end: a chatty child can never block on it.
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed by close()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )

    def parse(self, files: dict[str, str]) -> list[str]:
        """Failures (`path: does not parse back: ...`) among `files`, path -> HCL text."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(json.dumps(files) + "\n")
            self._proc.stdin.flush()
            answer = self._proc.stdout.readline()
        except OSError:
            answer = ""
        if not answer:
            self._proc.wait()
            self._stderr.seek(0)
            return [f"python-hcl2 check process failed: {self._stderr.read().strip()[-500:]}"]
        failures: list[str] = json.loads(answer)
        return failures

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()

    def __enter__(self) -> HclWorker:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
