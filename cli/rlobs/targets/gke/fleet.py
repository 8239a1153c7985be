"""What the gke target adds to a fleet bundle: per GCP project a set-up script and a Terraform root; a README part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlobs.bundle.fleetpart import FleetPart, ReadmeSection
from rlobs.bundle.spec import FileSpec, TemplateFile
from rlobs.targets.gke.fleetspec import dashboards, projects
from rlobs.targets.gke.fleettf import GKE_DIR, project_files
from rlobs.targets.gke.profile import GkeProfile

if TYPE_CHECKING:
    from rlobs.profile.fleet import Fleet
    from rlobs.rl.catalog import Catalog


def fleet_part(fleet: Fleet, catalog: Catalog) -> FleetPart:
    gke = [(m, m.profile) for m in fleet.members if isinstance(m.profile, GkeProfile)]
    files = [*_project_scripts(fleet), *project_files(fleet, catalog)]
    context = {
        "members": [m for m, _ in gke],
        "gke_projects": gke_projects(fleet),
        "terraform_projects": dict(sorted(projects(fleet.members, "terraform").items())),
        "dashboards": dashboards(fleet.spec),
    }
    return FleetPart(
        files=tuple(files),
        # A gke.manage: terraform cluster's project set-up is its project's Terraform root (gke/<project>/terraform/).
        replaced={m.name: ("terraform/",) for m, p in gke if p.gke.manage == "terraform"},
        details={m.name: p.gke.project for m, p in gke},
        folders={f.path: _folder(f.path) for f in files},
        readme=ReadmeSection("gke/fleet-readme.md.j2", context),
    )


def gke_projects(fleet: Fleet) -> dict[str, list[str]]:
    """project -> its GKE clusters whose project set-up the numbered scripts own (gke.manage: scripts)."""
    return {p: [m.name for m, _ in found] for p, found in projects(fleet.members, "scripts").items()}


def _project_scripts(fleet: Fleet) -> list[FileSpec]:
    return [
        TemplateFile(
            f"{GKE_DIR}/{project}/setup.sh",
            "sh",
            "gke/fleet-setup.sh.j2",
            "Per GCP project: runs each of its GKE clusters' scripts/setup.sh in turn (each step safe to rerun).",
            {"fleet": fleet.name, "project": project, "clusters": clusters},
            executable=True,
        )
        for project, clusters in sorted(gke_projects(fleet).items())
    ]


def _folder(path: str) -> str:
    """The README's name for where a file lies under gke/: its path in any project."""
    _, _, rest = path.partition("/")
    project, _, inner = rest.partition("/")
    return f"{GKE_DIR}/<project>/{inner.replace(project, '<project>')}"
