"""The package's import rules, checked over source text: profile -> rl -> targets -> bundle stages, imports point
down only, a target never imports another, the generic layers import no target package (fleet/ and the top layer
reach targets through the registry, rlobs.targets, only), no import circle, and only main.py touches typer."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

MAX_LINES = 450  # no module longer (the house style)
# What each layer may import, besides itself (prefixes of dotted module names; "rlobs.targets" alone is the registry
# module, never a target package below it).
HELPERS = ("rlobs.errors", "rlobs.resources", "rlobs.credentials", "rlobs.files")
REGISTRY = "rlobs.targets"
ALLOWED = {
    "profile": ("rlobs.profile", *HELPERS),
    "bundle": ("rlobs.bundle", *HELPERS),
    "rl": ("rlobs.rl", "rlobs.profile", "rlobs.bundle", *HELPERS),
    "target": ("rlobs.profile", "rlobs.rl", "rlobs.bundle", *HELPERS),
    # Above the targets: a fleet plans its clusters' bundles and parts through the registry.
    "fleet": ("rlobs.fleet", "rlobs.profile", "rlobs.rl", REGISTRY, "rlobs.bundle", *HELPERS),
    # The top layer (commands, questions, blueprints, main...): anything but a target package itself.
    "top": ("rlobs",),
}


def sources(package: Path) -> dict[str, str]:
    """dotted module name -> source, for every module of the package folder."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path.read_text(encoding="utf-8")
    return found


def imports(source: str, module: str, is_package: bool) -> Iterator[str]:
    """Every module `module` imports, anywhere in it (lazy imports inside functions count)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            # `from rlobs.rl import naming` imports the module rlobs.rl.naming.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "targets":
        return "target"
    if module == REGISTRY:
        return None  # the registry imports a target only by name, when asked (importlib)
    if len(parts) >= 2 and parts[1] in ALLOWED:
        return parts[1]
    return "top" if parts[0] == "rlobs" else None


def _is_target(name: str) -> bool:
    """A module of a target package (rlobs.targets.<t>...), not the registry module."""
    return name.startswith(REGISTRY + ".")


def _allowed(module: str, target: str, known: set[str]) -> bool:
    layer = _layer(module)
    if layer is None or not target.startswith("rlobs") or target not in known:
        return True
    prefixes = ALLOWED[layer]
    if layer == "target":
        own = ".".join(module.split(".")[:3])
        return any(target == p or target.startswith(p + ".") for p in (*prefixes, own))
    if _is_target(target):
        return False  # only a target's own package imports its modules; everyone else asks the registry
    return any(target == p or (target.startswith(p + ".") and not _is_target(target)) for p in prefixes)


def violations(modules: Mapping[str, str], packages: set[str]) -> list[str]:
    """One line per broken rule: `a imports b`, typer outside main, or an import cycle."""
    known = set(modules)
    graph: dict[str, set[str]] = {}
    problems = []
    for module, source in modules.items():
        targets = {t for t in imports(source, module, module in packages)}
        graph[module] = {t for t in targets if t in known and t != module}
        problems += [f"{module} imports {t}" for t in sorted(graph[module]) if not _allowed(module, t, known)]
        if module != "rlobs.main" and any(t == "typer" or t.startswith("typer.") for t in targets):
            problems.append(f"{module} imports typer (only rlobs.main may)")
    problems += [f"import cycle: {' -> '.join(c)}" for c in _cycles(graph)]
    return problems


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (a package importing its own modules is no
    cycle: `rlobs.x` -> `rlobs.x.y` is how a package exposes a registry)."""
    edges = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    found, state = [], dict.fromkeys(edges, 0)

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state[nxt] == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif state[nxt] == 0:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if state[node] == 0:
            visit(node, [])
    return found
