#!/usr/bin/env bash
# Checks scripts/k8s/*.yaml offline: every document parses (PyYAML
# safe_load_all) and has the kinds, names, verbs and values the master, the
# client and docs/kubernetes.md rely on. `kubectl create --dry-run=client` cannot be used
# here: even a client-side dry run asks a server for API discovery.
# Exit status: 0 pass, 1 fail, 77 skipped (python3 with PyYAML not available;
# a failure under CI=true, see tests/testing/skip.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
# shellcheck source=tests/testing/skip.sh
source "$ROOT/tests/testing/skip.sh"

# The python3 on PATH (which may be a pyenv or virtualenv one without
# PyYAML), else Debian's, which has it once python3-yaml is installed.
python=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import yaml' >/dev/null 2>&1; then
    python=$candidate
    break
  fi
done
[[ -n $python ]] || skip_or_fail "python3 with PyYAML is not available (Debian package python3-yaml)"

"$python" - "$ROOT/scripts/k8s" <<'EOF'
import sys, yaml

k8s = sys.argv[1]

def load(name):
    with open(f"{k8s}/{name}") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    for d in docs:
        for key in ("apiVersion", "kind", "metadata"):
            assert key in d, f"{name}: a document has no {key}: {d}"
        assert d["metadata"].get("name"), f"{name}: {d['kind']} without metadata.name"
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}

rbac = load("rbac.yaml")
assert set(rbac) == {("ServiceAccount", "edl-master"), ("Role", "edl-master"),
                     ("RoleBinding", "edl-master"), ("Role", "edl-user")}, \
    f"rbac.yaml holds {sorted(rbac)}"
namespaces = {d["metadata"].get("namespace") for d in rbac.values()}
assert namespaces == {"edl"}, f"rbac.yaml: objects in namespaces {namespaces}, want all in edl"
assert rbac[("ServiceAccount", "edl-master")]["apiVersion"] == "v1"

# Exactly what the master and the client use: the fake cluster's end-to-end
# tests derive these sets from its audit log (tests/fakekube/edl_on_kube_test.cc).
want = {
    "edl-master": {
        ("", "pods"): {"get", "list", "watch", "create", "delete"},
        ("", "services"): {"get", "create", "delete"},
        ("", "configmaps"): {"get", "create", "patch"},
    },
    "edl-user": {
        ("", "secrets"): {"create", "patch", "delete", "get"},
        ("", "configmaps"): {"create", "patch", "delete"},
        ("batch", "jobs"): {"create", "get", "list", "delete"},
        ("", "services"): {"create"},
        ("", "pods"): {"get", "list"},
        ("", "pods/log"): {"get"},
        ("", "services/proxy"): {"get", "create"},
    },
}
for name, wanted in want.items():
    role = rbac[("Role", name)]
    assert role["apiVersion"] == "rbac.authorization.k8s.io/v1", role["apiVersion"]
    granted = {}
    for rule in role["rules"]:
        assert "resourceNames" not in rule, f"{name}: unexpected resourceNames: {rule}"
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                assert "*" not in (group, resource) and "*" not in rule["verbs"], rule
                granted.setdefault((group, resource), set()).update(rule["verbs"])
    assert granted == wanted, f"Role {name} grants {granted}, want exactly {wanted}"

# A comment says which code path uses each rule.
with open(f"{k8s}/rbac.yaml") as f:
    lines = f.read().splitlines()
for i, line in enumerate(lines):
    if line.lstrip().startswith("- apiGroups:"):
        assert lines[i - 1].lstrip().startswith("#"), f"rbac.yaml:{i + 1}: a rule without a comment"

binding = rbac[("RoleBinding", "edl-master")]
assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                              "name": "edl-master"}, binding["roleRef"]
assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "edl-master",
                                "namespace": "edl"}], binding["subjects"]
# Role edl-user comes with an example RoleBinding, commented out (whom to
# bind is the cluster's business) after the last "# ---"; uncommented, it is
# valid.
start = max(i for i, l in enumerate(lines) if l == "# ---")
example = yaml.safe_load("\n".join(l[2:] for l in lines[start + 1:]))
assert example["kind"] == "RoleBinding", example
assert example["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                              "name": "edl-user"}, example["roleRef"]
assert all(s.get("apiGroup") == "rbac.authorization.k8s.io" for s in example["subjects"]
           if s["kind"] in ("User", "Group")), example["subjects"]
print("ok: rbac.yaml: ServiceAccount, Roles edl-master and edl-user (exactly the verbs used, "
      "one comment per rule), RoleBinding in namespace edl")

classes = load("priority-classes.yaml")
assert set(classes) == {("PriorityClass", "high"), ("PriorityClass", "low")}, sorted(classes)
for (kind, name), value in ((("PriorityClass", "high"), 100000),
                            (("PriorityClass", "low"), 1000)):
    c = classes[(kind, name)]
    assert c["apiVersion"] == "scheduling.k8s.io/v1", c["apiVersion"]
    assert "namespace" not in c["metadata"], f"{name}: PriorityClass is cluster-scoped"
    assert type(c["value"]) is int and c["value"] == value, f"{name}: value {c['value']!r}, want {value}"
    assert c["globalDefault"] is False, f"{name}: globalDefault {c['globalDefault']!r}"
    assert c["preemptionPolicy"] == "PreemptLowerPriority", c["preemptionPolicy"]
    assert isinstance(c.get("description"), str) and c["description"], f"{name}: no description"
print("ok: priority-classes.yaml: high 100000, low 1000, PreemptLowerPriority")
EOF
echo "PASS"
