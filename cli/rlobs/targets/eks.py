"""EKS with the JARK stack: plan the bundle (skeleton; see the EKS target issue)."""

from __future__ import annotations

from rlobs.catalog import Catalog
from rlobs.model import Profile
from rlobs.plan import FileSpec, Plan


def plan(profile: Profile, catalog: Catalog) -> Plan:
    files = (FileSpec("README.md", "md", template="eks/README.md.j2", context={"profile": profile}),)
    return Plan(profile.metadata.name, files)
