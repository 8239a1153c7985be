"""The toy target's profile: what every profile has, and a `toy:` section of its own."""

from typing import Literal, Self

from pydantic import Field, model_validator

from rlobs.profile.fields import DnsLabel, Duration, Model
from rlobs.profile.model import ProfileBase
from rlobs.profile.problems import ProblemAt

SCRAPE_INTERVALS = ("15s", "30s", "1m")


class ToySpec(Model):
    cluster: DnsLabel = Field(description="The toy cluster.")
    owner: DnsLabel = Field(description="Who is paged: the team named on every alert.")
    scrape_interval: Duration = Field("30s", description="How often the toy Prometheus scrapes the workload.")
    rack: DnsLabel | None = Field(None, description="The rack the cluster stands in (a fleet sets it).")

    @model_validator(mode="after")
    def _scrape_interval(self) -> Self:
        # The toy Prometheus scrapes at one of three intervals (schema_rules says the same as JSON Schema).
        if self.scrape_interval not in SCRAPE_INTERVALS:
            raise ProblemAt(("scrapeInterval",), f"expected one of {', '.join(SCRAPE_INTERVALS)}")
        return self


class ToyProfile(ProfileBase):
    target: Literal["toy"] = Field(description="Which bundle to render.")
    toy: ToySpec = Field(description="The toy cluster.")
