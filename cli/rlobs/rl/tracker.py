"""Links to the run in the experiment tracker (W&B or MLflow), and the env that gives it the catalog's run id."""

from __future__ import annotations

from dataclasses import dataclass

from rlobs.profile.model import ProfileBase, Tracker
from rlobs.rl.identity import run_id_ref

WANDB_APP = "https://wandb.ai"
# Cloud Monitoring: at most 3 documentation links, each URL at most 2083 characters after expansion, each display
# name at most 63 (monitoring v3 discovery, Documentation.links and Link).
MAX_POLICY_LINKS = 3
MAX_URL = 2083
MAX_LINK_NAME = 63


@dataclass(frozen=True, slots=True)
class Links:
    home: tuple[str, str]  # (title, URL) of the project (W&B) or experiment (MLflow)
    run_base: str | None  # W&B: the run URL without its id; MLflow: None (a run id cannot be chosen in advance)

    def run(self, run_id: str) -> tuple[str, str]:
        """(title, URL) of one run; for MLflow, the experiment that holds it."""
        if self.run_base is None:
            return self.home
        return f"W&B run {run_id}", self.run_base + run_id


def links(tracker: Tracker | None) -> Links | None:
    if tracker is None:
        return None
    if tracker.kind == "wandb":
        # {app_url}/{entity}/{project}/runs/{run_id} (wandb SDK run URL; docs.wandb.ai run identifiers).
        project = f"{(tracker.url or WANDB_APP).rstrip('/')}/{tracker.entity}/{tracker.project}"
        return Links((f"W&B project {tracker.project}", project), f"{project}/runs/")
    # MLflow UI: {tracking_uri}/#/experiments/{experiment_id} (the "View experiment at" URL MLflow prints).
    assert tracker.url is not None and tracker.experiment is not None  # the profile model requires both for mlflow
    experiment = f"{tracker.url.rstrip('/')}/#/experiments/{tracker.experiment}"
    return Links((f"MLflow experiment {tracker.experiment}", experiment), None)


def tracker_env(profile: ProfileBase) -> list[dict[str, str]]:
    """W&B: the catalog's run id, resumed across restarts; MLflow: the tracking URI and experiment (it picks ids)."""
    tracker = profile.workload.tracker
    if tracker is None:
        return []
    if tracker.kind == "wandb":
        # Without a run id the profile or the workload's owner gives, W&B picks its own and the app reads it.
        ref = run_id_ref(profile)
        resume = [{"name": "WANDB_RUN_ID", "value": ref}, {"name": "WANDB_RESUME", "value": "allow"}] if ref else []
        env = [
            *resume,
            {"name": "WANDB_ENTITY", "value": str(tracker.entity)},
            {"name": "WANDB_PROJECT", "value": str(tracker.project)},
        ]
        if tracker.url:
            # The SDK talks to the API host; the app URL's `//app.` host is `//api.` (wandb SDK _get_run_url).
            env.append({"name": "WANDB_BASE_URL", "value": tracker.url.replace("//app.", "//api.", 1)})
        return env
    return [
        {"name": "MLFLOW_TRACKING_URI", "value": str(tracker.url)},
        {"name": "MLFLOW_EXPERIMENT_ID", "value": str(tracker.experiment)},
    ]


def go_template_literal(text: str) -> str:
    """`text` as a Go template (a Prometheus annotation) that prints it as is: `{{` would start an action."""
    return text.replace("{{", '{{ "{{" }}')


def policy_links(profile: ProfileBase) -> list[dict[str, str]]:
    found = links(profile.workload.tracker)
    if found is None:
        return []
    # Cloud Monitoring cannot template a dotted PromQL label: a run id picked at run time cannot be linked.
    run_id = profile.workload.run.id
    pairs = dict([*([found.run(run_id)] if run_id else []), found.home])
    out = [{"displayName": title[:MAX_LINK_NAME], "url": url} for title, url in pairs.items()]
    assert len(out) <= MAX_POLICY_LINKS and all(len(link["url"]) <= MAX_URL for link in out)
    return out
