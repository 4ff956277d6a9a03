"""Structural check of a generated Knative Service, for apizr-cli/tests/generate_deploy.rs.

kubernetes-validate bundles the Kubernetes schemas only, not Knative's CRDs, so a Knative
Service is checked in two steps: the Knative rules the generated file relies on are checked
here (kind, the scale-to-zero annotations, Knative's default pod-spec subset: one container, one
port named http1 or h2c, no pod-level securityContext, probe ports omitted or equal to the
container port), then the revision template's pod spec is written out as a core/v1 Pod, with
the probe ports Knative would default filled in, for `kubernetes-validate --strict`.

usage: python knative_as_pod.py SERVICE.yaml POD_OUT.yaml   (exit 1 and one line per problem)
"""

import sys

import yaml

# Knative Serving's default PodSpec subset (features off), plus its own revision fields.
POD_FIELDS = {
    "automountServiceAccountToken", "containers", "enableServiceLinks", "imagePullSecrets",
    "serviceAccountName", "volumes",
}
REVISION_FIELDS = {"containerConcurrency", "timeoutSeconds", "responseStartTimeoutSeconds",
                   "idleTimeoutSeconds"}
problems = []


def need(ok, what):
    if not ok:
        problems.append(what)


with open(sys.argv[1], encoding="utf-8") as f:
    doc = yaml.safe_load(f)
need(doc.get("apiVersion") == "serving.knative.dev/v1", "apiVersion is not serving.knative.dev/v1")
need(doc.get("kind") == "Service", "kind is not Service")
need(set(doc) <= {"apiVersion", "kind", "metadata", "spec"}, f"unexpected top-level keys {sorted(doc)}")
spec = doc.get("spec") or {}
need(set(spec) <= {"template", "traffic"}, f"unexpected spec keys {sorted(spec)}")
template = spec.get("template") or {}
need(set(template) <= {"metadata", "spec"}, f"unexpected template keys {sorted(template)}")
meta = template.get("metadata") or {}
annotations = meta.get("annotations") or {}
need(all(isinstance(v, str) for v in annotations.values()), "annotation values must be strings")
need(annotations.get("autoscaling.knative.dev/min-scale") == "0", "min-scale is not \"0\"")
need("autoscaling.knative.dev/max-scale" in annotations, "no max-scale")
pod = template.get("spec") or {}
need(set(pod) <= POD_FIELDS | REVISION_FIELDS, f"fields outside Knative's pod subset: {sorted(set(pod) - POD_FIELDS - REVISION_FIELDS)}")
containers = pod.get("containers") or []
need(len(containers) == 1, "exactly one container")
for c in containers:
    ports = c.get("ports") or []
    need(len(ports) == 1 and ports[0].get("name") in ("http1", "h2c"), "one port named http1 or h2c")
    port = ports[0].get("containerPort") if ports else None
    for probe_name in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe = c.get(probe_name)
        if not probe:
            continue
        for kind in ("httpGet", "tcpSocket"):
            action = probe.get(kind)
            if action is None:
                continue
            need(action.get("port", port) == port, f"{probe_name}.{kind}.port is not the container port")
            action["port"] = port  # what Knative defaults it to
need(doc.get("metadata", {}).get("name"), "no metadata.name")
if problems:
    for p in problems:
        print(f"{sys.argv[1]}: {p}")
    sys.exit(1)
as_pod = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": doc["metadata"]["name"], "labels": meta.get("labels") or {}},
    "spec": {k: v for k, v in pod.items() if k in POD_FIELDS},
}
with open(sys.argv[2], "w", encoding="utf-8") as f:
    yaml.safe_dump(as_pod, f, sort_keys=True)
