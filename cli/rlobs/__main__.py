"""`python -m rlobs`."""

from __future__ import annotations

from rlobs.entry import run

if __name__ == "__main__":
    run()
