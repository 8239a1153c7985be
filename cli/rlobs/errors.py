"""The user-facing error types and their exit codes (rlobs.boundary prints them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

EXIT_OK = 0
EXIT_DRIFT = 1  # drift found by --check, or a rendered file failed its parse-back check
EXIT_USAGE = 2  # bad input: profile, flags, paths
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM, as a shell reports SIGINT


class RlobsError(Exception):
    """Something the user can fix. Printed as `error: ...` without a traceback."""

    exit_code = EXIT_USAGE

    def lines(self) -> list[str]:
        return [str(self)]

    def as_dicts(self) -> list[dict[str, object]]:
        return [{"message": line} for line in self.lines()]


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.path, "message": self.message}


class ProfileError(RlobsError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]

    def as_dicts(self) -> list[dict[str, object]]:
        return [p.as_dict() for p in self.problems]


class OutputConflictError(RlobsError):
    """A file rlobs did not generate, or a folder another bundle owns; `details`: one entry per problem, for JSON."""

    def __init__(self, message: str, details: Sequence[Mapping[str, object]] = ()) -> None:
        super().__init__(message)
        self.details = [dict(d) for d in details]

    def lines(self) -> list[str]:
        return [str(d["message"]) for d in self.details] if self.details else super().lines()

    def as_dicts(self) -> list[dict[str, object]]:
        return self.details or super().as_dicts()


class Interrupted(RlobsError):
    exit_code = EXIT_INTERRUPTED


class CheckError(RlobsError):
    """A rendered file did not parse back with its own format's parser (a bug in rlobs)."""

    exit_code = EXIT_DRIFT
