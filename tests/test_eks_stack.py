"""The stack's own custom resources (rlobs mode): OpenSearchCluster and the FluentBit ClusterOutput, against the
opensearch-operator 2.7.0 and fluent-operator 3.2.0 CRDs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from testing.crdschema import errors
from testing.eks import objects
from testing.eks import schema as crd
from testing.helpers import module, profile

OPENSEARCH_CRD = "opensearch-operator/crd-opensearchclusters.v2.7.0.yaml"
OUTPUT_CRD = "fluent-operator/fluentbit.fluent.io_clusteroutputs.yaml"


@pytest.fixture(autouse=True)
def _jsonschema() -> None:
    module("jsonschema", "validates the stack's CRs against their CRDs")


def _cluster() -> dict[str, Any]:
    return objects("eks-jark", "stack/")["stack/opensearch-cluster.yaml"]


def _output() -> dict[str, Any]:
    return objects("eks-jark", "stack/")["stack/fluentbit-output.yaml"]


def test_opensearch_cluster_matches_the_operator_crd() -> None:
    assert errors(crd(OPENSEARCH_CRD), _cluster()) == []


def test_opensearch_cluster_takes_credentials_from_secrets() -> None:
    eks = profile("eks-jark").eks
    assert eks is not None
    spec = _cluster()["spec"]
    assert spec["security"]["config"] == {
        "adminCredentialsSecret": {"name": eks.opensearch.credentials_secret},
        "securityConfigSecret": {"name": eks.opensearch.security_config_secret},
    }
    assert spec["dashboards"]["enable"] is True
    assert spec["dashboards"]["opensearchCredentialsSecret"] == {"name": eks.opensearch.credentials_secret}
    assert spec["nodePools"][0]["replicas"] == eks.opensearch.replicas


def test_log_output_matches_the_fluent_operator_crd() -> None:
    out = _output()
    assert errors(crd(OUTPUT_CRD), out) == []
    assert out["metadata"]["labels"]["fluentbit.fluent.io/enabled"] == "true"  # the chart's config selects it
    os = out["spec"]["opensearch"]
    assert "tls" in os and os["httpPassword"]["valueFrom"]["secretKeyRef"]["key"] == "password"


def test_the_crd_checks_reject_broken_objects() -> None:
    cluster = copy.deepcopy(_cluster())
    cluster["spec"]["dashboards"]["enabled"] = cluster["spec"]["dashboards"].pop("enable")
    assert any("enabled" in e for e in errors(crd(OPENSEARCH_CRD), cluster))
    out = copy.deepcopy(_output())
    out["spec"]["opensearch"]["httpPassword"] = "admin123"  # a literal where a secret reference belongs
    assert errors(crd(OUTPUT_CRD), out)
