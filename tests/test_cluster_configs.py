"""cluster/: the image definition and both cluster configs, checked as their tools check them."""

import copy
import gzip
import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "cluster"
CRD_SCHEMA = ROOT / "tests" / "fixtures" / "kuberay" / "rayclusters.ray.io-v1-kuberay-v1.5.1.schema.json.gz"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _ray_up_check(config: dict) -> None:
    """What `ray up` does with a config before it touches a machine (ray.autoscaler's prepare + validate)."""
    from ray.autoscaler._private.util import prepare_config, validate_config
    validate_config(prepare_config(copy.deepcopy(config)))


def _strict(schema):
    """The schema with unknown fields rejected wherever it lists properties and does not keep unknown
    fields (what `kubectl apply --validate=strict` does; a CRD schema alone only prunes them)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out \
                and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _kuberay_check(doc: dict) -> None:
    schema = _strict(json.loads(gzip.decompress(CRD_SCHEMA.read_bytes())))
    jsonschema.validate(doc, schema)


def test_the_image_installs_the_makefiles_dependency_set():
    docker = (CLUSTER / "Dockerfile").read_text()
    make = (ROOT / "Makefile").read_text()
    installs = re.findall(r"pip install -q (?:-e )?(\S+)", make)
    assert installs == ["--upgrade", "torch==2.13.0", '".[rllib,dev]"'], installs
    for spec in installs[1:]:
        assert f"pip install -q {'-e ' if 'rllib' in spec else ''}{spec}" in docker, spec
    assert "paddock-ma warm" in docker  # numba's cache compiled in the image
    ray = re.search(r'"ray\[default\]==([\d.]+)\.\*"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert re.search(rf"^FROM rayproject/ray:{re.escape(ray)}\.0-py311", docker, re.M)


def test_the_cluster_launcher_config_passes_ray_ups_validation_and_runs_the_image():
    config = yaml.safe_load((CLUSTER / "ray-cluster.yaml").read_text())
    _ray_up_check(config)
    assert config["docker"]["image"].endswith(f"/paddock-ma:{VERSION}") and config["docker"]["pull_before_run"]
    text = (CLUSTER / "ray-cluster.yaml").read_text()
    assert "git clone" not in text and "setup_commands" not in text      # nothing installed by hand on a node
    for key in ("head_start_ray_commands", "worker_start_ray_commands"):
        assert "RAY_AUTH_MODE=token" in " ".join(config[key]), key
    assert "--dashboard-host=127.0.0.1" in " ".join(config["head_start_ray_commands"])
    broken = copy.deepcopy(config)
    broken["docker"]["pull_before_runn"] = broken["docker"].pop("pull_before_run")   # the check notices a typo
    with pytest.raises(jsonschema.ValidationError, match="pull_before_runn"):
        _ray_up_check(broken)


def test_the_kuberay_config_passes_the_raycluster_schema_runs_the_image_and_declares_the_dashboard():
    doc = yaml.safe_load((CLUSTER / "kuberay-raycluster.yaml").read_text())
    _kuberay_check(doc)
    spec = doc["spec"]
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    workers = [c for g in spec["workerGroupSpecs"] for c in g["template"]["spec"]["containers"]]
    for c in [head] + workers:
        assert c["image"].endswith(f"/paddock-ma:{VERSION}"), c["image"]
    assert {p["containerPort"]: p["name"] for p in head["ports"]}[8265] == "dashboard"
    assert spec["headGroupSpec"]["rayStartParams"]["dashboard-host"] == "127.0.0.1"
    assert spec["authOptions"] == {"mode": "token"}
    broken = copy.deepcopy(doc)
    broken["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["port"] = head["ports"]
    with pytest.raises(jsonschema.ValidationError, match="'port' was unexpected"):
        _kuberay_check(broken)
    broken = copy.deepcopy(doc)
    broken["spec"]["authOptions"]["mode"] = "password"
    with pytest.raises(jsonschema.ValidationError, match="password"):
        _kuberay_check(broken)
