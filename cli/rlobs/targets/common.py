"""Files every bundle carries: the app's OpenTelemetry module, its requirements, an example, the runbook.

STUB: the signal-catalog work fills this in.
"""

from __future__ import annotations

from rlobs.catalog import Catalog
from rlobs.model import Profile
from rlobs.naming import Pipeline
from rlobs.plan import FileSpec


def app_files(profile: Profile, catalog: Catalog, pipeline: Pipeline) -> tuple[FileSpec, ...]:
    return ()
