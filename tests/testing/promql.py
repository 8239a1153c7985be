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


def shape(expr: str) -> tuple[list[dict[str, str]], list[list[str]]]:
    """The parsed query's selectors (label -> `=value` or `=~regex`, the metric name under __name__) and the label
    lists of its `by (...)` aggregations, from promql-parser's syntax tree."""
    module("promql_parser", "parses PromQL with quoted UTF-8 names")
    import promql_parser

    selectors: list[dict[str, str]] = []
    groupings: list[list[str]] = []
    ops = {"MatchOp.Equal": "=", "MatchOp.Re": "=~", "MatchOp.NotEqual": "!=", "MatchOp.NotRe": "!~"}

    def visit(node: object) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            named = {"__name__": "=" + node.name} if node.name else {}
            selectors.append(named | {m.name: ops[str(m.op)] + m.value for m in node.matchers.matchers})
        elif isinstance(node, promql_parser.MatrixSelector):
            visit(node.vector_selector)
        elif isinstance(node, promql_parser.AggregateExpr):
            groupings.append(list(node.modifier.labels) if node.modifier else [])
            visit(node.expr)
        elif isinstance(node, promql_parser.BinaryExpr):
            visit(node.lhs)
            visit(node.rhs)
        elif isinstance(node, promql_parser.Call):
            for arg in node.args:
                visit(arg)
        elif isinstance(node, (promql_parser.ParenExpr, promql_parser.UnaryExpr, promql_parser.SubqueryExpr)):
            visit(node.expr)

    visit(promql_parser.parse(expr))
    return selectors, groupings
