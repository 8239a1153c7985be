"""The static type of a profile of any target: what the generic layers read of it is the base model's. The union of
the registered targets' profile classes is assembled when asked for (rlobs.targets.profile_union, for the schema),
and the loader validates against the one class a profile's `target` names (rlobs.targets.PROFILES)."""

from __future__ import annotations

from rlobs.profile.model import ProfileBase

Profile = ProfileBase
