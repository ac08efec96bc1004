"""The deployment files (deploy/, docs/SCALE.md), checked offline: no cluster
and no systemd run here.

- Kubernetes: every object of deploy/kubernetes (the files kustomization.yaml
  lists) is checked field by field against the Kubernetes API's own models
  (Debian's python3-kubernetes, generated from the API's OpenAPI document):
  unknown fields, wrong types and missing required fields fail. Then the
  wiring: selectors match the pod labels, Services reach a declared container
  port, the StatefulSet's serviceName is its headless Service, every volume,
  Secret key and ConfigMap a pod names exists (the router's ConfigMap is made
  from deploy/nginx/mcpbox.conf as kustomization.yaml says), and the router
  config names exactly the StatefulSet's pods on its port. The node
  container's command is run as the pod would run it (HOSTNAME mcpbox-1, in a
  network and mount namespace of its own, against a throwaway PostgreSQL): it
  serves, and records node 1 with the pod's DNS name, capacity and public URL.
- systemd: `systemd-analyze verify` of deploy/systemd/mcpbox.service, with no
  warning.
"""
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import MCPBOX_BIN

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
K8S = os.path.join(ROOT, "deploy", "kubernetes")
NGINX_CONF = os.path.join(ROOT, "deploy", "nginx", "mcpbox.conf")
UNIT = os.path.join(ROOT, "deploy", "systemd", "mcpbox.service")

yaml = pytest.importorskip("yaml")


def kube_client():
    try:
        from kubernetes import client
    except ImportError:
        pytest.skip("python3-kubernetes is not installed (scripts/install-deps --test)")
    return client


def manifests():
    kust = yaml.safe_load(open(os.path.join(K8S, "kustomization.yaml")))
    docs = []
    for f in kust["resources"]:
        for d in yaml.safe_load_all(open(os.path.join(K8S, f))):
            if d:
                docs.append(d)
    return docs


# ---------------------------------------------------------------- schema

PRIMITIVE = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
             "datetime": (str,), "date": (str,)}


def schema_errors(value, typ, path, K):
    """Every place where `value` does not fit the model type `typ` (a name of
    kubernetes.client's openapi_types: V1Foo, list[...], dict(str, ...), a
    primitive, or object)."""
    if typ == "object":  # IntOrString, free-form
        return []
    if typ.startswith("list["):
        if not isinstance(value, list):
            return ["%s: a list is expected, not %r" % (path, value)]
        out = []
        for i, v in enumerate(value):
            out += schema_errors(v, typ[5:-1], "%s[%d]" % (path, i), K)
        return out
    if typ.startswith("dict("):
        if not isinstance(value, dict):
            return ["%s: a map is expected, not %r" % (path, value)]
        inner = typ[5:-1].split(",", 1)[1].strip()
        out = []
        for k, v in value.items():
            out += schema_errors(v, inner, "%s.%s" % (path, k), K)
        return out
    if typ in PRIMITIVE:
        ok = isinstance(value, PRIMITIVE[typ]) and not (typ != "bool" and isinstance(value, bool))
        return [] if ok else ["%s: %s is expected, not %r" % (path, typ, value)]
    cls = getattr(K, typ)
    if not isinstance(value, dict):
        return ["%s: a %s object is expected, not %r" % (path, typ, value)]
    by_json = {j: a for a, j in cls.attribute_map.items()}
    out = []
    for k, v in value.items():
        if k not in by_json:
            out.append("%s.%s: %s has no field %r" % (path, k, typ, k))
        else:
            out += schema_errors(v, cls.openapi_types[by_json[k]], "%s.%s" % (path, k), K)
    return out


def model_of(doc, K):
    group_version, kind = doc.get("apiVersion", ""), doc.get("kind", "")
    version = group_version.rsplit("/", 1)[-1]
    return "%s%s" % (version.capitalize(), kind)


def validate(doc, K):
    name = "%s/%s" % (doc.get("kind"), (doc.get("metadata") or {}).get("name"))
    typ = model_of(doc, K)
    if not hasattr(K, typ):
        return ["%s: no such Kubernetes API type %s (apiVersion %s)" %
                (name, typ, doc.get("apiVersion"))]
    errors = schema_errors(doc, typ, name, K)
    if not errors:
        # Required fields: the models refuse a missing one when built.
        try:
            K.ApiClient()._ApiClient__deserialize(doc, typ)
        except (ValueError, TypeError) as e:
            errors.append("%s: %s" % (name, e))
    return errors


def test_kubernetes_objects_fit_the_api():
    K = kube_client()
    docs = manifests()
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in docs)
    assert ("StatefulSet", "mcpbox") in kinds and ("Deployment", "mcpbox-router") in kinds, kinds
    errors = [e for d in docs for e in validate(d, K)]
    assert not errors, "\n".join(errors)


def test_the_schema_check_finds_mistakes():
    """The check above can fail: mistakes put into copies of the real objects."""
    K = kube_client()
    sts = next(d for d in manifests() if d["kind"] == "StatefulSet" and
               d["metadata"]["name"] == "mcpbox")
    import copy

    def mutated(fn):
        d = copy.deepcopy(sts)
        fn(d)
        return validate(d, K)

    c = lambda d: d["spec"]["template"]["spec"]["containers"][0]
    assert any("has no field 'resource'" in e for e in
               mutated(lambda d: c(d).__setitem__("resource", c(d).pop("resources"))))
    assert any("int is expected" in e for e in
               mutated(lambda d: d["spec"].__setitem__("replicas", "3")))
    assert any("list is expected" in e for e in
               mutated(lambda d: c(d).__setitem__("args", "serve")))
    assert any("containers" in e for e in
               mutated(lambda d: d["spec"]["template"]["spec"].pop("containers")))
    assert any("no such Kubernetes API type" in e for e in
               mutated(lambda d: d.__setitem__("kind", "StatefulSets")))


# ---------------------------------------------------------------- wiring

def pod_templates(docs):
    return {d["metadata"]["name"]: d for d in docs if d["kind"] in ("StatefulSet", "Deployment")}


def labels_match(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def test_kubernetes_wiring():
    docs = manifests()
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    workloads = pod_templates(docs)
    kust_text = open(os.path.join(K8S, "kustomization.yaml")).read()
    # ConfigMaps made by hand, as kustomization.yaml says: name -> {key: file}
    made = {}
    for m in re.finditer(r"kubectl create configmap (\S+) --from-file=(\S+?)=(\S+)", kust_text):
        made.setdefault(m.group(1), {})[m.group(2)] = os.path.join(ROOT, m.group(3))
    for name, w in workloads.items():
        spec, tmpl = w["spec"], w["spec"]["template"]
        labels = tmpl["metadata"]["labels"]
        assert labels_match(spec["selector"]["matchLabels"], labels), name
        pod = tmpl["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        claims = {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
        for c in pod["containers"]:
            for m in c.get("volumeMounts", []):
                assert m["name"] in volumes or m["name"] in claims, (name, m)
                v = volumes.get(m["name"], {})
                if "configMap" in v:
                    cm = v["configMap"]["name"]
                    assert cm in made or ("ConfigMap", cm) in by, (name, cm)
                    if cm in made and "subPath" in m:
                        assert m["subPath"] in made[cm], (name, m)
                        assert os.path.exists(made[cm][m["subPath"]])
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    s = by.get(("Secret", ref["name"]))
                    assert s, (name, ref)
                    assert ref["key"] in {**s.get("data", {}), **s.get("stringData", {})}, ref
            for e in c.get("envFrom", []):
                if "secretRef" in e:
                    assert ("Secret", e["secretRef"]["name"]) in by, (name, e)
        if w["kind"] == "StatefulSet":
            svc = by.get(("Service", spec["serviceName"]))
            assert svc and labels_match(svc["spec"]["selector"], labels), name
    # Every Service selects a workload and reaches one of its container ports.
    for d in docs:
        if d["kind"] != "Service":
            continue
        sel = d["spec"]["selector"]
        targets = [w for w in workloads.values()
                   if labels_match(sel, w["spec"]["template"]["metadata"]["labels"])]
        assert len(targets) == 1, (d["metadata"]["name"], sel)
        ports = [p for c in targets[0]["spec"]["template"]["spec"]["containers"]
                 for p in c.get("ports", [])]
        for p in d["spec"]["ports"]:
            t = p.get("targetPort", p["port"])
            assert any(t == cp["containerPort"] or t == cp.get("name") for cp in ports), (d, p)
    # The nodes' Service is headless (one DNS name per pod, also before ready).
    nodes = by[("StatefulSet", "mcpbox")]
    headless = by[("Service", nodes["spec"]["serviceName"])]["spec"]
    assert headless["clusterIP"] == "None" and headless["publishNotReadyAddresses"] is True


def test_router_config_names_the_statefulset_pods():
    docs = manifests()
    by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    sts = by[("StatefulSet", "mcpbox")]
    svc = sts["spec"]["serviceName"]
    port = by[("Service", svc)]["spec"]["ports"][0]["port"]
    conf = open(NGINX_CONF).read()
    hosts = set(re.findall(r"^\s*server\s+([^\s{;]+)", conf, re.M))
    want = {"%s-%d.%s:%d" % (sts["metadata"]["name"], i, svc, port)
            for i in range(sts["spec"]["replicas"])}
    assert hosts == want, (hosts, want)
    # one upstream per ordinal, reached from the owner map
    for i in range(sts["spec"]["replicas"]):
        assert re.search(r'"%02x"\s+mcpbox_node%d;' % (i, i), conf), i
        assert re.search(r"upstream mcpbox_node%d \{\s*server %s-%d\." % (
            i, sts["metadata"]["name"], i), conf), i
    # nginx listens on the port the router's container declares
    router = by[("Deployment", "mcpbox-router")]["spec"]["template"]["spec"]["containers"][0]
    listen = re.search(r"^\s*listen\s+(\d+);", conf, re.M)
    assert listen and int(listen.group(1)) in [p["containerPort"] for p in router["ports"]]


def run_as_root_ok():
    return os.geteuid() == 0 and shutil.which("unshare")


@pytest.mark.skipif(not run_as_root_ok(), reason="needs root and unshare (a pod's namespaces)")
def test_node_container_command_starts_a_node(tmp_path):
    """The StatefulSet's node container, as its pod runs it: the command and
    args under /bin/sh with the pod's HOSTNAME and env (the Secret's MCPBOX_DB
    pointed at a throwaway PostgreSQL), in a network namespace (its own
    0.0.0.0:8080) and a mount namespace (its own /var/lib/mcpbox)."""
    docs = manifests()
    sts = next(d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "mcpbox")
    c = sts["spec"]["template"]["spec"]["containers"][0]
    out = subprocess.run([os.path.join(ROOT, "tests", "pg", "pgctl"), "start"],
                         check=True, capture_output=True, text=True).stdout.split()
    pg_dir, db = out
    try:
        env = {"PATH": "%s:/usr/sbin:/usr/bin:/sbin:/bin" % tmp_path, "HOSTNAME": "mcpbox-1",
               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", ""),
               "MCPBOX_API_KEY": "test-key-0123456789abcdef"}
        for e in c["env"]:
            if "value" in e:
                env[e["name"]] = e["value"]
            elif e["valueFrom"].get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
                env[e["name"]] = "testns"
            elif e["valueFrom"].get("secretKeyRef", {}).get("key") == "MCPBOX_DB":
                env[e["name"]] = db
        os.symlink(os.path.abspath(MCPBOX_BIN), tmp_path / "mcpbox")
        pod_cmd = " ".join(shlex.quote(a) for a in c["command"] + c["args"])
        port = c["ports"][0]["containerPort"]
        # the pod: private /var/lib (the volume), loopback up; wait for the node
        # to serve, ask its /healthz, stop it as the kubelet would (SIGTERM)
        script = (
            "mount -t tmpfs tmpfs /var/lib && mkdir /var/lib/mcpbox && ip link set lo up && "
            "(%s) & pid=$!; for i in $(seq 300); do "
            "curl -sf http://127.0.0.1:%d/healthz >/dev/null && break; sleep 0.1; done; "
            "curl -sf http://127.0.0.1:%d/healthz; echo; "
            "psql -qAt %s -c 'SELECT ordinal, url, capacity FROM nodes'; "
            "kill -TERM $pid; wait $pid; echo exit=$?" % (pod_cmd, port, port, shlex.quote(db)))
        r = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "--fork",
                            "/bin/sh", "-c", script], env=env, capture_output=True, text=True,
                           timeout=120)
        assert "exit=0" in r.stdout, r.stdout + r.stderr[-4000:]
        assert "1|http://mcpbox-1.mcpbox.testns.svc:8080|200" in r.stdout, r.stdout + r.stderr
        assert '"status":"ok"' in r.stdout.replace(" ", ""), r.stdout
    finally:
        subprocess.run([os.path.join(ROOT, "tests", "pg", "pgctl"), "stop", pg_dir])


# ---------------------------------------------------------------- systemd

@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_systemd_unit_verifies(tmp_path):
    text = open(UNIT).read()
    assert "ExecStart=/usr/local/bin/mcpbox serve" in text
    unit = tmp_path / "mcpbox.service"
    unit.write_text(text.replace("/usr/local/bin/mcpbox", os.path.abspath(MCPBOX_BIN)))
    r = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    # ... and it would say so of a mistake
    bad = tmp_path / "bad.service"
    bad.write_text(text.replace("Delegate=yes", "Delegat=yes"))
    r = subprocess.run(["systemd-analyze", "verify", str(bad)], capture_output=True, text=True)
    assert "Unknown key" in r.stderr
    # the variables the comment tells operators to set are the daemon's
    for var in re.findall(r"^#\s+(MCPBOX_[A-Z_]+)=", text, re.M):
        assert var in open(os.path.join(ROOT, "src", "core", "config.c")).read(), var
