"""deploy/kubernetes: the base, the PostgreSQL overlay and the sign-in overlay render (`kubectl kustomize`, else
tests/support/kustomize.py), every manifest is valid against the Kubernetes schemas offline,
the pieces select and reference one another, and the catalog in the ConfigMap loads and
serves the probes and /metrics the manifests rely on."""

from __future__ import annotations

import copy
import functools
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import kubernetes_validate
import pytest
import yaml

from gitreg.catalog.load import load_catalog
from gitreg.errors import ConfigError
from gitreg.process.tlscert import TlsMaterial
from tests.support import kustomize
from tests.support.gitrepo import GitRepo, module_files
from tests.support.oidc_provider import oidc_provider
from tests.support.servers import RegistryServer

Resource = dict[str, Any]

KUBERNETES = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
FOLDERS = ["base", "overlays/login", "overlays/postgres"]
REPLICAS = {"base": 1, "overlays/login": 2, "overlays/postgres": 2}
# The oldest Kubernetes the manifests are for (a preStop `sleep` wants 1.30), and the newest
# whose schemas kubernetes-validate bundles.
OLDEST = "1.30"
NEWEST = kubernetes_validate.latest_version()


@functools.cache
def rendered(folder: str) -> tuple[Resource, ...]:
    """The folder's manifests as `kubectl kustomize` prints them, or as our renderer does
    where kubectl is absent (test_our_renderer_agrees_with_kubectl keeps the two the same)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return tuple(kustomize.render(KUBERNETES / folder))
    return tuple(_kubectl_kustomize(kubectl, folder))


def _kubectl_kustomize(kubectl: str, folder: str) -> list[Resource]:
    done = subprocess.run(
        [kubectl, "kustomize", str(KUBERNETES / folder)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def manifests(folder: str) -> list[Resource]:
    return copy.deepcopy(list(rendered(folder)))


def one(resources: list[Resource], kind: str, name: str | None = None) -> Resource:
    found = [
        r
        for r in resources
        if r["kind"] == kind and (name is None or r["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"{len(found)} {kind} {name or ''}"
    return found[0]


def container(resources: list[Resource]) -> Resource:
    containers = one(resources, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    result: Resource = containers[0]
    return result


def catalog_text(resources: list[Resource]) -> str:
    text: str = one(resources, "ConfigMap")["data"]["registry.yaml"]
    return text


def secret_values(resources: list[Resource]) -> dict[str, str]:
    """Every key of every Secret, as the Deployment's env would get it."""
    values: dict[str, str] = {}
    for secret in (r for r in resources if r["kind"] == "Secret"):
        values.update(secret["stringData"])
    return values


def secret_env(resources: list[Resource]) -> dict[str, tuple[str, str]]:
    """Each variable the container gets from a Secret: name → (Secret, key). A Secret taken
    whole (`envFrom`) gives every key of it."""
    secrets = {r["metadata"]["name"]: r for r in resources if r["kind"] == "Secret"}
    c = container(resources)
    found: dict[str, tuple[str, str]] = {}
    for source in c.get("envFrom", []):
        name = source["secretRef"]["name"]
        assert "prefix" not in source, name  # the keys are the catalog's *_env names as they are
        found |= {key: (name, key) for key in secrets[name]["stringData"]}
    for env in c.get("env", []):
        ref = env.get("valueFrom", {}).get("secretKeyRef")
        if ref is not None:
            assert ref["key"] in secrets[ref["name"]]["stringData"], env["name"]
            found[env["name"]] = (ref["name"], ref["key"])
    return found


def env_names(document: Any) -> set[str]:
    """The environment variables a catalog names: every value of a key ending in _env."""
    if isinstance(document, dict):
        found = {v for k, v in document.items() if k.endswith("_env") and isinstance(v, str)}
        for value in document.values():
            found |= env_names(value)
        return found
    if isinstance(document, list):
        return set().union(*(env_names(item) for item in document)) if document else set()
    return set()


def is_subset(labels: dict[str, str], of: dict[str, str]) -> bool:
    return all(of.get(k) == v for k, v in labels.items())


@pytest.mark.parametrize("folder", FOLDERS)
def test_our_renderer_agrees_with_kubectl(folder: str) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on PATH: nothing to compare tests/support/kustomize.py with")

    def key(resource: Resource) -> tuple[str, str]:
        return resource["kind"], resource["metadata"]["name"]

    ours = sorted(kustomize.render(KUBERNETES / folder), key=key)
    assert ours == sorted(_kubectl_kustomize(kubectl, folder), key=key)


def test_the_schemas_are_current() -> None:
    major, minor = (int(part) for part in NEWEST.split(".")[:2])
    assert (major, minor) >= (1, 37)


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
@pytest.mark.parametrize("folder", FOLDERS)
def test_every_manifest_is_valid_kubernetes(folder: str, version: str) -> None:
    resources = manifests(folder)
    kinds = sorted(r["kind"] for r in resources)
    expected = ["ConfigMap", "Deployment", "Ingress", "Namespace", "Secret", "Service"]
    if folder != "base":  # the database's Secret, and a budget for its two replicas
        expected += ["PodDisruptionBudget", "Secret"]
    assert kinds == sorted(expected)
    for resource in resources:
        # strict: a field the schema does not know (a typo) is an error, not ignored
        kubernetes_validate.validate(resource, version, strict=True)


def test_a_misspelt_field_is_refused() -> None:
    """The validation above would catch a typo: the schemas are strict."""
    deployment = one(manifests("base"), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContext"][
        "readOnlyRootFileSystem"
    ] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, NEWEST, strict=True)


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_deployment_runs_replicas_locked_down(folder: str) -> None:
    resources = manifests(folder)
    deployment = one(resources, "Deployment")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["replicas"] == REPLICAS[folder]
    assert is_subset(spec["selector"]["matchLabels"], labels)
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0

    c = container(resources)
    assert c["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert set(c["resources"]["requests"]) >= {"cpu", "memory"}
    assert "memory" in c["resources"]["limits"]

    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] >= 1000
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert pod["automountServiceAccountToken"] is False

    # The preStop sleep lets endpoints drop the pod before SIGTERM; the grace covers both.
    assert pod["terminationGracePeriodSeconds"] > c["lifecycle"]["preStop"]["sleep"]["seconds"]
    spread = pod["topologySpreadConstraints"]
    assert "kubernetes.io/hostname" in [s["topologyKey"] for s in spread]
    assert all(is_subset(s["labelSelector"]["matchLabels"], labels) for s in spread)


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_volumes_are_the_only_writable_places(folder: str) -> None:
    resources = manifests(folder)
    pod = one(resources, "Deployment")["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in container(resources)["volumeMounts"]}
    assert set(mounts) == {"/etc/gitreg", "/var/lib/gitreg", "/tmp"}
    assert mounts["/etc/gitreg"]["readOnly"] is True
    config = volumes[mounts["/etc/gitreg"]["name"]]
    assert config["configMap"]["name"] == one(resources, "ConfigMap")["metadata"]["name"]
    assert "registry.yaml" in one(resources, "ConfigMap")["data"]
    for path in ("/var/lib/gitreg", "/tmp"):
        assert "emptyDir" in volumes[mounts[path]["name"]]
    args = container(resources)["args"]
    assert args[:1] == ["serve"]
    assert args[args.index("--config") + 1] == "/etc/gitreg/registry.yaml"


@pytest.mark.parametrize("folder", FOLDERS)
def test_service_budget_and_ingress_reach_the_pods(folder: str) -> None:
    resources = manifests(folder)
    deployment = one(resources, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    port_names = {p["name"] for p in container(resources)["ports"]}

    service = one(resources, "Service")
    assert is_subset(service["spec"]["selector"], labels)
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= port_names

    budgets = [r["spec"] for r in resources if r["kind"] == "PodDisruptionBudget"]
    # With replicas, at least one serves during a drain; with one, no budget: it would block
    # every drain (a budget of minAvailable: 1 on one pod lets nothing be evicted).
    assert len(budgets) == (1 if deployment["spec"]["replicas"] > 1 else 0)
    for budget in budgets:
        assert is_subset(budget["selector"]["matchLabels"], labels)
        assert 1 <= budget["minAvailable"] < deployment["spec"]["replicas"]

    ingress = one(resources, "Ingress")["spec"]
    hosts = [rule["host"] for rule in ingress["rules"]]
    assert {h for tls in ingress["tls"] for h in tls["hosts"]} >= set(hosts)
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    for rule in ingress["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] == service["metadata"]["name"]
            assert backend["port"]["name"] in service_ports
    # every path, the webhooks' (/v1/webhooks/<forge>) among them, reaches gitreg
    assert [p["path"] for r in ingress["rules"] for p in r["http"]["paths"]] == ["/"]
    assert hosts == [yaml.safe_load(catalog_text(resources))["hostname"]]

    namespace = one(resources, "Namespace")["metadata"]["name"]
    for resource in resources:
        if resource["kind"] != "Namespace":
            assert resource["metadata"]["namespace"] == namespace


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_secret_the_catalog_names_comes_from_a_secret(folder: str) -> None:
    resources = manifests(folder)
    from_secrets = secret_env(resources)
    named = env_names(yaml.safe_load(catalog_text(resources)))
    assert "GITREG_URL_KEY" in named
    assert named == set(from_secrets)
    if folder != "base":
        assert from_secrets["GITREG_DATABASE_URL"] == ("gitreg-database", "GITREG_DATABASE_URL")
    if folder == "overlays/login":
        assert from_secrets["GITREG_OIDC_SECRET"] == ("gitreg-secrets", "GITREG_OIDC_SECRET")
    # the examples say what they are: nothing in them could pass for a real secret
    assert all("REPLACE-ME" in value for value in secret_values(resources).values())


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_key_added_to_the_secret_needs_no_patch(folder: str) -> None:
    """The Deployment takes gitreg-secrets whole: a secret the catalog comes to name (the
    client secret of auth.login) is one more key of it, and no variable is named one by one."""
    resources = manifests(folder)
    c = container(resources)
    assert c["envFrom"] == [{"secretRef": {"name": "gitreg-secrets"}}]
    by_name = [e for e in c["env"] if "secretKeyRef" in e.get("valueFrom", {})]
    assert all(e["valueFrom"]["secretKeyRef"]["name"] != "gitreg-secrets" for e in by_name)


def test_signing_in_changes_the_catalog_and_the_secret_alone() -> None:
    """overlays/login is overlays/postgres with auth.login in the catalog and the client secret
    in gitreg-secrets: the Deployment is the same but for the catalog's ConfigMap (its name
    holds a hash of the catalog, which rolls the pods onto it)."""
    login, postgres = manifests("overlays/login"), manifests("overlays/postgres")

    def without_catalog(resources: list[Resource]) -> Resource:
        deployment = one(resources, "Deployment")
        volumes = deployment["spec"]["template"]["spec"]["volumes"]
        for volume in volumes:
            if "configMap" in volume:
                volume["configMap"]["name"] = "gitreg-config"
        return deployment

    assert without_catalog(login) == without_catalog(postgres)
    secrets = one(login, "Secret", "gitreg-secrets")["stringData"]
    assert secrets.pop("GITREG_OIDC_SECRET")
    assert secrets == one(postgres, "Secret", "gitreg-secrets")["stringData"]
    kinds = sorted((r["kind"], r["metadata"]["name"]) for r in login if r["kind"] != "ConfigMap")
    assert kinds == sorted(
        (r["kind"], r["metadata"]["name"]) for r in postgres if r["kind"] != "ConfigMap"
    )


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_configmap_catalog_loads(
    folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the loader only: the catalog names remote repositories, fetched by no test."""
    resources = manifests(folder)
    for name, value in secret_values(resources).items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "registry.yaml"
    path.write_text(catalog_text(resources))
    try:
        catalog = load_catalog(path)
    except ConfigError as exc:
        if [p.path for p in exc.problems] == ["state"] and "unknown key" in exc.problems[0].reason:
            pytest.skip(
                "this gitreg's loader does not know `state:` yet (issue 10, part 5, is built"
                " on another branch): the overlay's catalog waits for it"
            )
        raise
    assert folder == "base" or "state" in yaml.safe_load(catalog_text(resources))
    assert (catalog.server.listen.host, catalog.server.listen.port) == ("0.0.0.0", 8080)
    assert str(catalog.cache_dir) == "/var/lib/gitreg"
    assert catalog.freshness.watch_catalog is False
    assert catalog.auth is not None
    assert [ref.env for ref in catalog.auth.url_keys] == ["GITREG_URL_KEY"]
    assert {t.name: t.ops for t in catalog.auth.tokens} == {"ci": False, "prometheus": True}
    login = catalog.auth.login
    assert (login is not None) == (folder == "overlays/login")
    if login is not None:
        assert login.client_secret is not None
        assert login.client_secret.env == "GITREG_OIDC_SECRET"
        assert login.client_secret.value() == "REPLACE-ME-client-secret-from-the-provider"
        assert "openid" in login.scopes and login.grants


def test_the_folders_tested_are_every_base_and_overlay() -> None:
    overlays = sorted(f"overlays/{p.name}" for p in (KUBERNETES / "overlays").iterdir())
    assert ["base", *overlays] == FOLDERS


@pytest.mark.parametrize("folder", FOLDERS)
def test_replicas_share_their_state_in_postgresql(folder: str) -> None:
    """Two replicas with a ledger each can serve two commits under one version once a tag
    moves: more than one runs only where the catalog keeps the state in PostgreSQL."""
    resources = manifests(folder)
    replicas = one(resources, "Deployment")["spec"]["replicas"]
    state = yaml.safe_load(catalog_text(resources)).get("state") or {}
    assert replicas == 1 or "postgres" in state, f"{folder}: {replicas} replicas, state {state}"


def test_the_overlays_catalog_is_the_bases_with_state() -> None:
    base = yaml.safe_load(catalog_text(manifests("base")))
    overlay = yaml.safe_load(catalog_text(manifests("overlays/postgres")))
    assert overlay.pop("state") == {"postgres": {"dsn_env": "GITREG_DATABASE_URL"}}
    assert overlay == base


def test_the_login_catalog_is_the_postgres_one_with_auth_login() -> None:
    """The tokens a sign-in issues are kept with the state: in PostgreSQL, every replica honours
    them, and a rollout (new pods, new emptyDirs) forgets none."""
    postgres = yaml.safe_load(catalog_text(manifests("overlays/postgres")))
    login = yaml.safe_load(catalog_text(manifests("overlays/login")))
    assert set(login["auth"].pop("login")) >= {"issuer", "client_id", "client_secret_env", "claims"}
    assert login == postgres
    assert "postgres" in login["state"]


def test_the_provider_sends_people_back_through_the_ingress() -> None:
    """The redirect URI to register at the provider, as the catalog's comment and the README
    give it, is the Ingress's host over HTTPS, and every path of it reaches gitreg."""
    resources = manifests("overlays/login")
    hostname = yaml.safe_load(catalog_text(resources))["hostname"]
    redirect = f"https://{hostname}/oauth/callback"
    assert redirect in catalog_text(resources)
    assert redirect in (KUBERNETES / "README.md").read_text()
    ingress = one(resources, "Ingress")["spec"]
    assert [r["host"] for r in ingress["rules"]] == [hostname]
    assert hostname in ingress["tls"][0]["hosts"]  # the session cookie is Secure: HTTPS only
    assert [p["path"] for r in ingress["rules"] for p in r["http"]["paths"]] == ["/"]


def local_catalog(folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Resource:
    """The folder's catalog with the example Secrets' values in the environment, its cache in
    tmp_path and its repositories swapped for local ones (a test fetches nothing remote)."""
    resources = manifests(folder)
    for name, value in secret_values(resources).items():
        monkeypatch.setenv(name, value)
    document: Resource = yaml.safe_load(catalog_text(resources))
    document["cache_dir"] = str(tmp_path / "cache")
    for module in document["modules"]:
        repo = GitRepo(tmp_path / module["name"])
        template = module.get("tags", "v{version}")
        repo.release(
            template.format(version="1.0.0"), module_files("1.0.0", module.get("path", ""))
        )
        module["repo"] = str(repo.path)
    return document


def write_catalog(document: Resource, tmp_path: Path) -> Path:
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture
def served_as_deployed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The base's catalog, auth and all, served by the real app."""
    document = local_catalog("base", tmp_path, monkeypatch)
    with RegistryServer(load_catalog(write_catalog(document, tmp_path))) as server:
        yield server.url


def test_a_sign_in_sends_the_provider_the_redirect_uri_to_register(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tls: TlsMaterial
) -> None:
    """The login overlay's catalog, served with a real OpenID provider as its issuer: `terraform
    login`'s request sends the person to the provider with the client id and the redirect URI
    the README says to register, whatever address the pod answers at."""
    document = local_catalog("overlays/login", tmp_path, monkeypatch)
    del document["state"]  # the tokens' keeping is not what this checks: no PostgreSQL
    with oidc_provider(tls) as provider:
        document["auth"]["login"] |= {"issuer": provider.url, "ca_file": str(tls.ca_cert)}
        catalog = load_catalog(write_catalog(document, tmp_path))
        with RegistryServer(catalog) as server:
            query = {
                "client_id": "terraform-cli",
                "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                "code_challenge_method": "S256",
                "redirect_uri": "http://localhost:10000/login",
                "response_type": "code",
                "state": "terraform-state",
            }
            answer = httpx.get(f"{server.url}/oauth/authorize", params=query, timeout=15)
    assert answer.status_code in (302, 303), answer.text
    sent = urlsplit(answer.headers["location"])
    assert f"{sent.scheme}://{sent.netloc}".startswith(provider.url)
    asked = parse_qs(sent.query)
    assert asked["redirect_uri"] == [f"https://{document['hostname']}/oauth/callback"]
    assert asked["client_id"] == [document["auth"]["login"]["client_id"]]
    assert set(asked["scope"][0].split()) == set(document["auth"]["login"]["scopes"])


def test_the_probes_and_the_scrape_work_as_the_manifests_say(served_as_deployed: str) -> None:
    resources = manifests("base")
    c = container(resources)
    annotations = one(resources, "Deployment")["spec"]["template"]["metadata"]["annotations"]
    token = secret_values(resources)["GITREG_METRICS_TOKEN"]
    with httpx.Client(base_url=served_as_deployed, timeout=10) as client:
        # probes carry no token: they must be open with auth on
        for probe in ("livenessProbe", "readinessProbe"):
            assert client.get(c[probe]["httpGet"]["path"]).status_code == 200, probe
        metrics = annotations["prometheus.io/path"]
        assert client.get(metrics).status_code == 401
        scraped = client.get(metrics, headers={"Authorization": f"Bearer {token}"})
        assert scraped.status_code == 200
        assert "gitreg_" in scraped.text
        assert token not in scraped.text
        versions = "/v1/modules/platform/vpc/aws/versions"
        ci = secret_values(resources)["GITREG_CI_TOKEN"]
        answer = client.get(versions, headers={"Authorization": f"Bearer {ci}"})
        assert answer.json()["modules"][0]["versions"] == [{"version": "1.0.0"}]
