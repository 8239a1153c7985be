"""The command line: thin Typer commands over rlobs.commands; their docstrings are the --help text."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from rlobs import __version__
from rlobs.errors import EXIT_DRIFT, EXIT_OK, RlobsError

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


Choice = TypeVar("Choice", bound=StrEnum)


class Fmt(StrEnum):
    text = "text"
    json = "json"


class SignalsFmt(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


def _one_of(choices: type[Choice]) -> Callable[[str], Choice]:
    """One error text on every typer version: 0.29 puts pydantic's `Value error, ` in front of its own."""

    def parse(value: str) -> Choice:
        try:
            return choices(value)
        except ValueError:
            expected = ", ".join(repr(c.value) for c in choices)
            raise typer.BadParameter(f"{value!r} is not one of {expected}.") from None

    return parse


def _completer(names: Callable[[], Iterable[str]]) -> Callable[[str], list[str]]:
    def complete(incomplete: str) -> list[str]:
        return sorted(n for n in names() if n.startswith(incomplete))

    return complete


def _target_names() -> Iterable[str]:
    from rlobs.targets import TARGETS

    return TARGETS


def _blueprint_names() -> Iterable[str]:
    from rlobs.blueprints import load_blueprints

    return load_blueprints()


def _framework_names() -> Iterable[str]:
    from rlobs.rl.catalog import load_catalog

    return (f.name for f in load_catalog().frameworks)


@contextmanager
def _errors(fmt: Fmt = Fmt.text) -> Iterator[None]:
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
    blueprint: Annotated[
        str | None,
        typer.Option(
            "--blueprint",
            "-b",
            metavar="NAME",
            help="Start from this blueprint.",
            autocompletion=_completer(_blueprint_names),
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            "-t",
            metavar="TARGET",
            help="Start from this target's blueprint (`rlobs blueprints` lists them).",
            autocompletion=_completer(_target_names),
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="Profile file to write.")] = Path(
        "rlobs.yaml"
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing profile.")] = False,
    fleet: Annotated[bool, typer.Option("--fleet", help="Write a starter fleet file (EKS and GKE clusters).")] = False,
) -> None:
    """Write a starter profile from a blueprint.

    Without --blueprint or --target, asks on a terminal: target, cluster, region or project, namespace, workload
    and (eks) GitOps repository and the bundle's folder in it, each checked as `validate` checks it. Also writes
    rlobs.schema.json beside it.
    """
    from rlobs import commands, files, output
    from rlobs.profile.worktree import hook_args

    with _errors():
        if fleet:
            out = out if out != Path("rlobs.yaml") else Path("fleet.yaml")
            written = commands.init_fleet(out, force=force)
        else:
            text = None
            if blueprint is None and target is None:
                files.ensure_new(out, force=force)  # before asking anything
                from rlobs.prompting import ask_profile

                target, text = ask_profile(interactive=_interactive(), prompt=typer.prompt)
            written = commands.init(blueprint, target, out, force=force, text=text)
        for path in written:
            output.say(f"wrote {path}", style="green")
        folder = commands.render_folder(out)
        output.say(f"next: edit {out}, then run `rlobs render {out} -o {folder}`")
        if not fleet and (args := hook_args(out, folder)) is not None:
            output.say(f"pre-commit hook rlobs-check for this layout: args: {args}")


def _interactive() -> bool:
    return sys.stdin.isatty()


ProfilesArg = Annotated[list[Path], typer.Argument(help="Profile YAML files.", show_default=False, metavar="PROFILE")]
FormatOpt = Annotated[
    Fmt, typer.Option("--format", metavar="FORMAT", parser=_one_of(Fmt), help="text for people, json for machines.")
]


@app.command()
def render(
    profiles: ProfilesArg,
    out: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Bundle directory: one profile renders into it, several into DIR/<name>/ each.",
        ),
    ] = Path("out"),
    check: Annotated[
        bool,
        typer.Option("--check", help="Write nothing; exit 1 if the bundle on disk differs, 2 if render would refuse."),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff of what would change; write nothing.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what render would do, refusals included; write nothing.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Overwrite files rlobs did not generate or that were edited; take over a folder "
            "another profile or fleet owns.",
        ),
    ] = False,
    preview: Annotated[
        bool,
        typer.Option("--preview", help="Fleet: print the Applications every ApplicationSet creates; write nothing."),
    ] = False,
    fmt: FormatOpt = Fmt.text,
) -> None:
    """Render profiles (or one fleet file) into bundle directories.

    One profile (or a fleet) renders into DIR itself; several render into DIR/<metadata.name>/ each. A bundle
    folder has one owner (its manifest names the profile and target, or the fleet): another profile is refused
    unless --force takes the folder over. A folder holding several bundles is never written into as one bundle
    (render a single profile into DIR/<name> instead), and several profiles never render into a bundle folder.

    Exit codes. render: 0 written or unchanged, 2 refused (bad input, a file rlobs did not write or a hand edit in
    the way, another owner, the layout; nothing written). --check: 0 clean, 1 drift (render would write), 2 render
    would refuse. --dry-run and --diff: 0 render would succeed, 2 it would refuse. The previews plan exactly as
    render does, refusals included; --format json gives each bundle and file a status (changed, unchanged,
    would_refuse, drift) and, with --check, a drift field.
    """
    with _errors(fmt):
        from rlobs import commands

        if preview:
            from rlobs.fleet import commands as fleets

            fleet = commands.fleet_file(profiles)
            if fleet is None:
                raise RlobsError("--preview expands a fleet's ApplicationSets: expected a fleet file (kind: Fleet)")
            sys.stdout.write(fleets.preview_text(fleet))
            return

        from rlobs import progress
        from rlobs.bundle.request import Mode, RenderRequest

        mode = Mode.of(check=check, diff=diff, dry_run=dry_run)
        shown = progress.bundles if fmt is Fmt.text else None  # JSON: one document on stdout, nothing else
        request = RenderRequest(out, mode, force=force, progress=shown, as_json=fmt is Fmt.json)
        results = commands.render(profiles, request)
    from rlobs import output

    try:
        code = output.report_render(results, request)
    except KeyboardInterrupt:  # while the report prints: what the render wrote is written (run() says so)
        from rlobs.bundle.interrupt import AFTER, BEFORE

        wrote = request.writes and any(r.changes.changed for r in results)
        raise KeyboardInterrupt(AFTER if wrote else BEFORE) from None
    raise typer.Exit(code)


@app.command()
def validate(
    profiles: ProfilesArg,
    fmt: FormatOpt = Fmt.text,
    cluster_secrets: Annotated[
        Path | None,
        typer.Option(
            "--cluster-secrets",
            metavar="FILE",
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

        results = commands.validate(profiles, cluster_secrets)
        warned = commands.warnings([v.profile for v in results])
    raise typer.Exit(output.report_validate(results, warned, as_json=fmt is Fmt.json))


@app.command()
def plan(
    source: Annotated[
        Path, typer.Argument(help="A profile or a fleet file.", show_default=False, metavar="PROFILE|FLEET")
    ],
    fmt: FormatOpt = Fmt.text,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when the plan is above a budget (plan.budget) or a quota.")
    ] = False,
) -> None:
    """Series, samples per second and money per month per backend, before anything is deployed.

    Counted from the signal catalog, the profile's counts (plan.runs, nodes, gpusPerNode, engines) and the export or
    scrape interval its bundle configures; third-party exporters are estimates, prices are list prices.
    """
    with _errors(fmt):
        from rlobs import commands

        data, text, over = commands.plan(source)
    if fmt is Fmt.json:
        from rlobs import output

        output.as_json(data)
    else:
        sys.stdout.write(text)
    raise typer.Exit(EXIT_DRIFT if check and over else EXIT_OK)


@app.command()
def schema(
    out: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file instead of stdout.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    fleet: Annotated[bool, typer.Option("--fleet", help="The fleet file's schema instead.")] = False,
) -> None:
    """Print the profile's (or the fleet file's) JSON Schema.

    For editors: profiles from `rlobs init` point yaml-language-server at it.
    """
    from rlobs import commands, files

    with _errors():
        if fleet:
            from rlobs.fleet import commands as fleets

            text = fleets.schema_text()
        else:
            text = commands.schema_text()
        if out is None:
            sys.stdout.write(text)
        else:
            files.write_file(out, text, force=force)


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
    fmt: Annotated[
        SignalsFmt,
        typer.Option("--format", metavar="FORMAT", parser=_one_of(SignalsFmt), help="table, markdown or json."),
    ] = SignalsFmt.table,
    framework: Annotated[
        str | None,
        typer.Option(
            "--framework",
            metavar="NAME",
            help="Print how this RL framework's logged keys map to the catalog instead.",
            autocompletion=_completer(_framework_names),
        ),
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
        output.markdown_tables(report.tables, report.notes)
    else:
        for t in report.tables:
            output.table([list(r) for r in t.rows], [h.upper() for h in t.headers], frozenset(t.code_columns))
            print()
        for note in report.notes:
            output.paragraph(note)


@app.command("check-workload")
def check_workload(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="BUNDLE_OR_PROFILE", help="A rendered bundle folder, or its profile.", show_default=False
        ),
    ],
    workload: Annotated[
        str,
        typer.Option(
            "--workload",
            "-w",
            metavar="PATH",
            help="Your manifests: a folder of YAML, a kustomization, or a file of `helm template` output (- reads "
            "stdin).",
        ),
    ],
) -> None:
    """Check that the bundle's workload patch reaches your real manifests.

    One line per patch target: the object (kind, namespace/name), then the RL container of each of its pod groups,
    found or missing. Exit codes: 0 every target found, 1 one is missing (the env would not reach the trainer),
    2 bad input.
    """
    from rlobs import output

    with _errors():
        from rlobs import workloadcheck

        findings = workloadcheck.check(workloadcheck.targets(source), workloadcheck.manifests(workload))
    for f in findings:
        output.say(f"{f.status:8} {f.line}", style="red" if f.status == workloadcheck.MISSING else None)
    missing = sum(f.status == workloadcheck.MISSING for f in findings)
    if missing:
        output.error(f"{missing} of {len(findings)} targets missing: the env would not reach the trainer")
    raise typer.Exit(EXIT_DRIFT if missing else EXIT_OK)


def run() -> None:
    try:
        app()
    except SystemExit as exc:
        # Typer ends a Ctrl-C it catches itself (one while it parses the command line, before a command's boundary
        # runs) with a silent exit 130, raised from the KeyboardInterrupt; the boundary's own exit 130 is from None.
        cause = exc.__context__.__cause__ if isinstance(exc.__context__, typer.Exit) else None
        if exc.code == 130 and isinstance(cause, KeyboardInterrupt):
            from rlobs import output
            from rlobs.bundle.interrupt import message

            output.error(message(cause))
        raise
