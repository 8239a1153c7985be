"""Parse PromQL the way the backends will: promtool for classic names, promql-parser for quoted UTF-8 names."""

from __future__ import annotations

from testing.helpers import module


def parse(expr: str) -> None:
    """Raise ValueError when `expr` is not valid PromQL (quoted UTF-8 names allowed, Prometheus 3 syntax)."""
    module("promql_parser", "parses PromQL with quoted UTF-8 names")
    import promql_parser

    try:
        promql_parser.parse(expr)
    except Exception as exc:  # the binding raises a bare ValueError-like exception type
        raise ValueError(f"{expr}: {exc}") from None
