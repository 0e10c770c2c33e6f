"""The site's "Your own registry" (docs/own-registry.md), run as a user runs it, with the blocks of
the other pages it leads to (a webhook from docs/new-tags.md, a search from
docs/pages-and-api.md): a real Git repository in tmp_path tagged by the page's command, the
page's catalog, `gitreg cert`, `check`, `serve` and `list` in bash, and the real terraform.

What the tests change in the page's blocks: the repository's URL becomes the path of the
repository they made, the registry's address (127.0.0.1:8443, or registry.example.com where a
command is sent to it) the port they serve on."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import answers, free_port, wait_until
from tests.support.site_snippets import claimed, on_port, run_sh, shell_env, start_sh
from tests.support.terraform_cli import needs_terraform, run_terraform, terraform_env
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

REPO_URL = "https://git.example.com/infra/terraform-aws-vpc.git"
MONOREPO_URL = "https://git.example.com/infra/modules.git"
GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def _work_tree_pushing_to(root: Path, name: str, files: dict[str, str]) -> tuple[GitRepo, Path]:
    """A work tree with one commit, and the bare repository its `git push` goes to."""
    bare = root / "git" / f"{name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    git(bare.parent, "init", "-q", "--bare", bare.name)
    work = GitRepo(root / "work" / name)
    work.write(files)
    work.commit("the module")
    git(work.path, "remote", "add", "origin", str(bare))
    return work, bare


def test_own_registry(tmp_path: Path) -> None:
    env = shell_env(tmp_path / "bin", GIT_ENV)
    work, bare = _work_tree_pushing_to(
        tmp_path, "terraform-aws-vpc", {**module_files("1.0.0"), "README.md": "# VPC\n\nA VPC.\n"}
    )
    registry = tmp_path / "registry"
    registry.mkdir()
    port = free_port()
    with (
        claimed("own-registry.md", "test_own_registry") as page,
        claimed("new-tags.md", "test_own_registry") as new_tags,
        claimed("pages-and-api.md", "test_own_registry") as pages,
    ):
        run_sh(page.take("sh", "git tag v1.0.0"), work.path, env)
        catalog = page.take("yaml", "modules:").replace(REPO_URL, str(bare))
        (registry / "registry.yaml").write_text(
            on_port(catalog, port) + new_tags.take("yaml", "webhooks:")
        )
        run_sh(page.take("sh", "gitreg cert"), registry, env)
        ca = registry / "tls" / "ca.pem"
        exports = page.take("sh", "export SSL_CERT_FILE=$PWD/tls/ca.pem")
        exported = run_sh(exports + 'printf %s "$SSL_CERT_FILE $CURL_CA_BUNDLE"', registry, env)
        assert exported.stdout == f"{ca} {ca}"
        secret = {"GITREG_WEBHOOK_SECRET": "a webhook secret for this test"}
        checked = run_sh(page.take("sh", "gitreg check"), registry, {**env, **secret})
        assert "1 modules, 0 providers, 0 problems" in checked.stdout

        log = tmp_path / "serve.log"
        served = start_sh(page.take("sh", "gitreg serve"), registry, {**env, **secret}, log)
        try:
            base = f"https://127.0.0.1:{port}"
            wait_until(
                lambda: served.poll() is not None or answers(f"{base}/readyz", trusting(ca)),
                60,
                "gitreg serving",
            )
            assert served.poll() is None, log.read_text()
            assert f"serving on {base}" in log.read_text()

            workdir = tmp_path / "tf"
            workdir.mkdir()
            (workdir / "cli.tfrc").write_text(on_port(page.take("hcl", "host "), port))
            (workdir / "main.tf").write_text(page.take("hcl", 'module "vpc"'))
            init = run_sh(page.take("sh", "terraform init"), workdir, terraform_env(workdir, ca))
            assert "Terraform has been successfully initialized" in init.stdout
            installed = workdir / ".terraform" / "modules" / "vpc" / "main.tf"
            assert '"1.0.0"' in installed.read_text()

            # Through a bundle of the system's CAs and this one.
            run_sh(page.take("sh", "bundle.pem"), registry, env)
            bundled = tmp_path / "tf-bundle"
            bundled.mkdir()
            shutil.copy(workdir / "cli.tfrc", bundled / "cli.tfrc")
            shutil.copy(workdir / "main.tf", bundled / "main.tf")
            done = run_terraform(bundled, registry / "bundle.pem", "init", "-input=false")
            assert done.returncode == 0, done.stdout + done.stderr

            listed = run_sh(page.take("sh", "gitreg list"), registry, env).stdout
            assert "infra/vpc/aws" in listed and "tag v1.0.0" in listed

            # In the user's shell, after the page's exports.
            shell = {**env, **secret}
            to_registry = {"https://registry.example.com": base, REPO_URL: str(bare)}
            search = _replaced(pages.take("sh", "search?q=vpc"), to_registry)
            found = run_sh(exports + search, registry, shell)
            assert [m["id"] for m in json.loads(found.stdout)["modules"]] == ["infra/vpc/aws/1.0.0"]

            hook = _replaced(new_tags.take("sh", "webhooks/generic"), to_registry)
            answered = run_sh(exports + hook, registry, shell).stdout
            assert json.loads(answered)["refreshing"] == [str(bare)], answered
        finally:
            served.send_signal(signal.SIGTERM)
            served.wait(timeout=60)
    assert served.returncode == 0, log.read_text()


def _replaced(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        text = text.replace(old, new)
    return text


def test_monorepo_tags(tmp_path: Path) -> None:
    env = shell_env(tmp_path / "bin", GIT_ENV)
    work, bare = _work_tree_pushing_to(
        tmp_path,
        "modules",
        {**module_files("1.4.0", "modules/vpc"), **module_files("1.0.0", "modules/dns")},
    )
    with claimed("own-registry.md", "test_monorepo_tags") as page:
        run_sh(page.take("sh", "git tag vpc/v1.4.0"), work.path, env)
        catalog = page.take("yaml", "modules:").replace(MONOREPO_URL, str(bare))
    (tmp_path / "registry.yaml").write_text(f"cache_dir: cache\n{catalog}")
    listed = _modules_listed(run_sh("gitreg list --config registry.yaml", tmp_path, env).stdout)
    assert "tag vpc/v1.4.0" in listed["infra/vpc/aws"], listed
    dns = listed["infra/dns/aws"]
    assert "tag vpc/v1.4.0" not in dns, listed  # no version of dns: vpc's tag fits none of its
    assert "1 other tag fits none of dns/v{version}: vpc/v1.4.0" in dns, listed


def _modules_listed(text: str) -> dict[str, str]:
    """`gitreg list`'s lines under each module's address (HOST/NS/NAME/SYSTEM), by NS/NAME/SYSTEM."""
    modules: dict[str, str] = {}
    current = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            current = line.partition("/")[2] if line.count("/") == 3 else ""
            if current:
                modules[current] = ""
        elif current:
            modules[current] += line + "\n"
    return modules


def test_accept_a_moved_tag(tmp_path: Path) -> None:
    env = shell_env(tmp_path / "bin", GIT_ENV)
    work, bare = _work_tree_pushing_to(tmp_path, "terraform-aws-vpc", module_files("1.2.0"))
    work.tag("v1.2.0")
    git(work.path, "push", "-q", "--tags")
    with claimed("new-tags.md", "test_accept_a_moved_tag") as page:
        catalog = page.take("yaml", "moved_tags: quarantine").replace(REPO_URL, str(bare))
        (tmp_path / "registry.yaml").write_text(f"cache_dir: cache\n{catalog}")
        list_and_fetch = page.take("sh", "gitreg list")
        first = run_sh(list_and_fetch, tmp_path, env).stdout
        assert "1.2.0" in first and "tag v1.2.0" in first

        moved = work.release("v1.2.0-moved", module_files("1.2.0, moved"))
        work.tag("v1.2.0", force=True)
        git(work.path, "push", "-q", "-f", "--tags")
        quarantined = run_sh(list_and_fetch, tmp_path, env).stdout
        assert "tag v1.2.0 moved" in quarantined and "quarantined" in quarantined, quarantined

        accepted = run_sh(page.take("sh", "gitreg accept"), tmp_path, env).stdout
        assert f"now publishes {moved[:12]}" in accepted, accepted
    after = run_sh("gitreg list --config registry.yaml", tmp_path, env).stdout
    assert f"commit {moved[:12]}" in after, after
