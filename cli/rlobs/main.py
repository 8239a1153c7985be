"""The command line: thin Typer commands over the domain functions, and the one error boundary."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rlobs import __version__
from rlobs.errors import EXIT_OK, RlobsError

app = typer.Typer(
    name="rlobs",
    help="Render GitOps-ready observability bundles for RL and AI training workloads on GKE and EKS.",
    no_args_is_help=True,
    # --install-completion / --show-completion for bash, zsh, fish and PowerShell (shellingham, imported lazily).
    add_completion=True,
    pretty_exceptions_show_locals=False,  # never dump a profile's values in a traceback
    # Rich help and usage errors cost ~110 ms of imports, more than the rest of `--help` together: plain help.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _help_without_python_types() -> None:
    """Help shows what to type, not Python types: typer 0.29 labels an argument with its annotation
    (`PROFILE <list[Path]>`) and every flag `<bool>`, which reads as if `--check true` were the syntax. Arguments keep
    their name (`PROFILE...`), flags show nothing, and valued options keep `<path>` or their choices."""
    from typer.core import TyperArgument, TyperOption

    def argument_type(_self: TyperArgument, ctx: object) -> str | None:  # noqa: ARG001 (typer's signature)
        return None

    option_type = TyperOption.display_type_rich

    def flag_type(self: TyperOption, ctx: typer.Context) -> str | None:
        return None if self.is_flag else option_type(self, ctx)

    TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign,assignment]
    TyperOption.display_type_rich = flag_type  # type: ignore[method-assign,assignment]


_help_without_python_types()


class Fmt(StrEnum):
    text = "text"
    json = "json"


class SignalsFmt(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


@contextmanager
def _errors(fmt: Fmt = Fmt.text) -> Iterator[None]:
    """The error boundary (rlobs.boundary): user errors print `error: ...` lines and exit with their code; no
    traceback. With --format json the problems are also printed to stdout as JSON, for editors and CI."""
    from rlobs import boundary

    try:
        yield
    except (RlobsError, KeyboardInterrupt, OSError, ValueError) as exc:
        code = boundary.exit_code(exc, as_json=fmt is Fmt.json)
        if code is None:
            raise
        raise typer.Exit(code) from None


def _version(value: bool) -> None:
    if value:
        print(f"rlobs {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """rlobs: one profile YAML in, a complete observability bundle out."""


@app.command()
def init(
    blueprint: Annotated[str | None, typer.Option("--blueprint", "-b", help="Start from this blueprint.")] = None,
    target: Annotated[
        str | None,
        typer.Option("--target", "-t", help="Start from this target's blueprint (`rlobs blueprints` lists them)."),
    ] = None,
    out: Annotated[Path, typer.Option("--output", "-o", help="Profile file to write.")] = Path("rlobs.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing profile.")] = False,
    fleet: Annotated[bool, typer.Option("--fleet", help="Write a starter fleet file (EKS and GKE clusters).")] = False,
) -> None:
    """Write a starter profile from a blueprint.

    Asks on a terminal; takes --blueprint or --target otherwise. Also writes rlobs.schema.json beside it.
    """
    from rlobs import commands, output

    with _errors():
        if fleet:
            from rlobs.fleet import commands as fleets

            target_file = out if out != Path("rlobs.yaml") else Path("fleet.yaml")
            for path in fleets.init(target_file, force=force):
                output.say(f"wrote {path}", style="green")
            output.say(f"next: edit {target_file}, then run `rlobs render {target_file} -o out`")
            return
        if blueprint is None and target is None:
            blueprint = _ask_blueprint(interactive=_interactive())
        written = commands.init(blueprint, target, out, force=force)
        for path in written:
            output.say(f"wrote {path}", style="green")
        output.say(f"next: edit {out}, then run `rlobs render {out} -o out`")


def _interactive() -> bool:
    return sys.stdin.isatty()


def _ask_blueprint(*, interactive: bool) -> str:
    from rlobs.blueprints import load_blueprints

    found = load_blueprints()
    if not interactive:
        targets = "|".join(sorted({bp.target for bp in found.values()}))
        raise RlobsError(f"no terminal to ask on: pass --blueprint NAME or --target {targets}")
    for name, bp in found.items():
        print(f"  {name:<20} {bp.description}")
    choice: str = typer.prompt("Blueprint", default=next(iter(found)))
    if choice not in found:
        raise RlobsError(f"unknown blueprint {choice!r}: expected one of {', '.join(found)}")
    return choice


ProfilesArg = Annotated[list[Path], typer.Argument(help="Profile YAML files.", show_default=False, metavar="PROFILE")]
FormatOpt = Annotated[Fmt, typer.Option("--format", help="text for people, json for machines.")]


@app.command()
def render(
    profiles: ProfilesArg,
    out: Annotated[
        Path,
        typer.Option("--output", "-o", help="Bundle directory (one subdirectory per profile when several)."),
    ] = Path("out"),
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 if the bundle on disk differs.")
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff of what would change; write nothing.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; write nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files rlobs did not generate.")] = False,
    preview: Annotated[
        bool,
        typer.Option("--preview", help="Fleet: print the Applications every ApplicationSet creates; write nothing."),
    ] = False,
    fmt: FormatOpt = Fmt.text,
) -> None:
    """Render profiles (or one fleet file) into bundle directories.

    Exit 0 when done (or, with --check, when nothing differs), 1 when --check finds drift, 2 on bad input.
    """
    with _errors(fmt):
        from rlobs import commands

        if preview:
            _preview(profiles)
            return

        from rlobs import progress

        write = not (check or diff or dry_run)
        results = commands.render(profiles, out, write=write, force=force, with_diff=diff, progress=progress.bundles)
    from rlobs import output

    code = output.report_render(results, as_json=fmt is Fmt.json, check=check, diff=diff, dry_run=dry_run)
    raise typer.Exit(code)


def _preview(paths: list[Path]) -> None:
    from rlobs import commands
    from rlobs.fleet import commands as fleets

    fleet = commands.fleet_file(paths)
    if fleet is None:
        raise RlobsError("--preview expands a fleet's ApplicationSets: expected a fleet file (kind: Fleet)")
    sys.stdout.write(fleets.preview_text(fleet))


@app.command()
def validate(
    profiles: ProfilesArg,
    fmt: FormatOpt = Fmt.text,
    cluster_secrets: Annotated[
        Path | None,
        typer.Option(
            "--cluster-secrets",
            help="Fleet: the hub's cluster Secrets' metadata (YAML; the fleet README shows the kubectl command) to "
            "check against the ApplicationSets.",
        ),
    ] = None,
) -> None:
    """Check profiles (or one fleet file) and their bundles; write nothing.

    Loads each profile and renders and parse-checks its bundle in memory.
    """
    with _errors(fmt):
        from rlobs import commands, output

        names = commands.validate(profiles, cluster_secrets)
    if fmt is Fmt.json:
        output.as_json([{"profile": str(p), "name": n, "valid": True} for p, n in zip(profiles, names, strict=True)])
    else:
        for p, n in zip(profiles, names, strict=True):
            output.say(f"{p}: ok ({n})", style="green")


@app.command()
def schema(
    out: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    fleet: Annotated[bool, typer.Option("--fleet", help="The fleet file's schema instead.")] = False,
) -> None:
    """Print the profile's (or the fleet file's) JSON Schema.

    For editors: profiles from `rlobs init` point yaml-language-server at it.
    """
    from rlobs import commands

    with _errors():
        if fleet:
            from rlobs.fleet import commands as fleets

            text = fleets.schema_text()
        else:
            text = commands.schema_text()
        if out is None:
            sys.stdout.write(text)
        else:
            commands.write_file(out, text, force=force)


@app.command()
def blueprints(fmt: FormatOpt = Fmt.text) -> None:
    """List the shipped blueprints."""
    from rlobs import output
    from rlobs.blueprints import load_blueprints

    with _errors():
        found = load_blueprints()
    if fmt is Fmt.json:
        output.as_json([{"name": b.name, "target": b.target, "description": b.description} for b in found.values()])
    else:
        output.table([[b.name, b.target, b.description] for b in found.values()], ["NAME", "TARGET", "DESCRIPTION"])


@app.command()
def signals(
    fmt: Annotated[SignalsFmt, typer.Option("--format", help="table, markdown or json.")] = SignalsFmt.table,
    framework: Annotated[
        str | None,
        typer.Option("--framework", help="Print how this RL framework's logged keys map to the catalog instead."),
    ] = None,
) -> None:
    """Print the RL signal catalog.

    Metrics, kinds, units, golden signals, attributes, spans and the series name on each pipeline; with
    --framework, the framework's key for each catalog metric (mapped, derived or not available).
    """
    from rlobs import commands, output

    with _errors():
        report = commands.signals() if framework is None else commands.framework_signals(framework)
    if fmt is SignalsFmt.json:
        output.as_json(report.data)
    elif fmt is SignalsFmt.markdown:
        output.markdown_tables(
            [(list(t.headers), [list(r) for r in t.rows], set(t.code_columns)) for t in report.tables],
            list(report.notes),
        )
    else:
        for t in report.tables:
            output.table([list(r) for r in t.rows], [h.upper() for h in t.headers], frozenset(t.code_columns))
            print()
        for note in report.notes:
            output.paragraph(note)


def run() -> None:
    """The Typer app (the console script is rlobs.entry.run, which answers an up-to-date render first)."""
    app()
