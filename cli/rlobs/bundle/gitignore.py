"""The bundle folder's .gitignore: what must never be committed with it, one (pattern, why) row each."""

from __future__ import annotations

from rlobs.bundle.manifest import JOURNAL, STAGING, UNFINISHED
from rlobs.bundle.spec import Rendered, TemplateFile

FILE = ".gitignore"

# Rows, in file order; consecutive rows with the same reason share its comment. .terraform.lock.hcl is not here: it
# pins the providers' versions and checksums and belongs in the commit.
IGNORED: tuple[tuple[str, str], ...] = (
    (".terraform/", "Terraform's provider and module cache: terraform init makes it again."),
    ("*.tfstate", "Terraform state holds secrets; keep it in a backend (README), never in git."),
    ("*.tfstate.*", "Terraform state holds secrets; keep it in a backend (README), never in git."),
    (f"/{JOURNAL}", UNFINISHED),
    (f"/{STAGING}/", UNFINISHED),
)

# What the writer adds to a bundle whose plan renders no .gitignore (a fleet's): an unfinished write never reaches git.
MINIMAL = Rendered(FILE, f"# {UNFINISHED}\n/{JOURNAL}\n/{STAGING}/\n", "text")


def gitignore() -> TemplateFile:
    what = "Keeps Terraform state and caches, and an unfinished write, out of git (.terraform.lock.hcl is committed)."
    return TemplateFile(FILE, "text", "common/gitignore.j2", what, {"rows": IGNORED})
