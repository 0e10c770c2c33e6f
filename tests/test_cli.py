"""The `gitreg` command as a user runs it: a real process, its output and exit status."""

from __future__ import annotations

import contextlib
import hashlib
import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg import __version__
from gitreg.catalog.load import load_catalog
from gitreg.commands.cli import main
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.origin_server import ScriptedOrigin
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import answers, free_port, git_daemon, start_gitreg, wait_until
from tests.support.servers import run_gitreg as gitreg


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    mono = GitRepo(tmp_path / "mono")
    mono.release("vpc/v1.0.0", module_files("1.0.0", "modules/vpc"))
    mono.release("vpc/v1.1.0", module_files("1.1.0", "modules/vpc"), annotated=True)
    mono.tag("vpc/v1.2")
    mono.tag("vpc/v2.0.0", target="HEAD^{tree}")
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.com\ncache_dir: cache\nmodules:\n"
        "  - {namespace: infra, name: vpc, system: aws, repo: mono, path: modules/vpc, tags: 'vpc/v{version}'}\n"
    )
    return tmp_path / "registry.yaml"


def test_version() -> None:
    done = gitreg("--version")
    assert done.returncode == 0 and done.stdout.startswith("gitreg ")


HEAVY = ("pgpy", "hypercorn", "httpx", "git", "dulwich", "starlette", "jinja2", "hcl2")


def test_the_command_line_and_a_catalog_are_read_without_the_heavy_libraries(
    catalog: Path,
) -> None:
    # Each subcommand's module is imported when it runs, PGPy when a key is read: a short
    # command, and every test that runs gitreg, starts without seconds of imports.
    probe = (
        "import contextlib, sys\n"
        "from pathlib import Path\n"
        "from gitreg.catalog.load import load_catalog\n"
        "from gitreg.commands.cli import main\n"
        "with contextlib.suppress(SystemExit):\n"
        "    main(['--version'])\n"
        "load_catalog(Path(sys.argv[1]))\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(catalog)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"gitreg {__version__}\n\n"  # and none of the heavy ones


def test_list(catalog: Path) -> None:
    done = gitreg("list", "--config", str(catalog))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "registry.example.com/infra/vpc/aws"
    assert lines[2].split()[:4] == ["1.1.0", "tag", "vpc/v1.1.0", "commit"]
    assert lines[3].split()[:3] == ["1.0.0", "tag", "vpc/v1.0.0"]
    assert "ignored tag vpc/v1.2: '1.2' is not a Semantic Version" in done.stdout
    assert "ignored tag vpc/v2.0.0: points at a tree or blob" in done.stdout
    offline = gitreg("list", "--offline", "--config", str(catalog))
    assert offline.stdout == done.stdout


def test_check_passes(catalog: Path) -> None:
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 modules, 0 providers, 0 problems" in done.stdout


def test_check_reports_problems_with_key_paths(catalog: Path, tmp_path: Path) -> None:
    with catalog.open("a") as f:
        f.write(
            f"  - {{namespace: infra, name: gone, system: aws, repo: 'http://127.0.0.1:{free_port()}/gone.git'}}\n"
        )
        f.write(
            "  - {namespace: infra, name: notags, system: aws, repo: mono, tags: 'release-{version}'}\n"
        )
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 1
    assert "modules[1].repo: cannot reach" in done.stdout
    assert (
        "modules[2]: infra/notags/aws has no version: no tag fits release-{version} (4 other"
        " tags fit none of release-{version}: vpc/v1.0.0, vpc/v1.1.0, vpc/v1.2 and 1 more)"
    ) in done.stdout
    assert "3 modules, 0 providers, 2 problems" in done.stdout


@pytest.mark.parametrize("command", ["serve", "check", "list"])
def test_broken_catalog_is_refused_with_key_and_line(tmp_path: Path, command: str) -> None:
    (tmp_path / "registry.yaml").write_text(
        "modules:\n  - namespace: infra\n    name: vpc\n    system: aws\n    repo: x\n    tags: 'v1'\n    colour: red\n"
    )
    done = gitreg(command, "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 2
    assert (
        "modules[0].tags (line 6): template 'v1' must contain {version} exactly once" in done.stderr
    )
    assert "modules[0].colour (line 7): unknown key" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_plain_http_and_stop_on_signal(catalog: Path, sig: signal.Signals) -> None:
    port = free_port()
    process = start_gitreg("serve", "--config", str(catalog), "--listen", f"127.0.0.1:{port}")
    try:
        url = f"http://127.0.0.1:{port}/v1/modules/infra/vpc/aws/versions"
        wait_until(lambda: answers(url), 60, "gitreg serving")
        response = httpx.get(url)
        assert response.json()["modules"][0]["versions"][0] == {"version": "1.1.0"}
    finally:
        process.send_signal(sig)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert output.count("Terraform only talks HTTPS") == 1
    assert "Traceback" not in output


def test_mismatched_tls_flags(catalog: Path) -> None:
    done = gitreg("serve", "--config", str(catalog), "--certfile", "x.pem")
    assert done.returncode == 2
    assert done.stderr == "gitreg: --certfile: needs --keyfile too (give both, or neither)\n"


def test_unwritable_cache_dir_is_refused(catalog: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    catalog.write_text(catalog.read_text().replace("cache_dir: cache", "cache_dir: afile/cache"))
    done = gitreg("serve", "--config", str(catalog))
    assert done.returncode == 2
    assert "cache_dir: " in done.stderr and "is not a writable folder" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--listen", "nonsense"], "gitreg: --listen nonsense: 'nonsense' must be HOST:PORT"),
        (["--certfile", "absent.pem", "--keyfile", "absent.key"], "absent.pem: no such file"),
    ],
)
def test_bad_serve_flags(catalog: Path, args: list[str], message: str) -> None:
    done = gitreg("serve", "--config", str(catalog), *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_list_shows_repository_state_and_moved_tags(catalog: Path, tmp_path: Path) -> None:
    first = gitreg("list", "--config", str(catalog))  # no mirror yet: list fetches it
    assert "repositories" in first.stdout and "by cli" in first.stdout
    mono = GitRepo.existing(tmp_path / "mono")
    mono.write(module_files("moved", "modules/vpc"))
    mono.commit("moved")
    mono.tag("vpc/v1.0.0", force=True)
    stale = gitreg("list", "--config", str(catalog))  # reads the mirror as it is: no change yet
    assert "! tag vpc/v1.0.0 moved" not in stale.stdout
    done = gitreg("list", "--fetch", "--config", str(catalog))
    assert done.returncode == 0, done.stderr
    assert "! tag vpc/v1.0.0 moved from" in done.stdout and "pinned" in done.stdout
    section = done.stdout.split("\nrepositories\n", 1)[1]
    assert f"  {tmp_path / 'mono'}" in section
    assert "last successful sync: 20" in section
    assert "infra/vpc/aws: moved tag vpc/v1.0.0, pinned" in section


def test_check_reports_broken_provider_releases(tmp_path: Path) -> None:
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    write_release(tmp_path / "releases" / "1.0.0", "widget", "1.0.0", signer=key)
    broken = write_release(tmp_path / "releases" / "1.1.0", "widget", "1.1.0", signer=key)
    broken.unlink()
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [gitreg.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    done = gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 1
    assert (
        "providers[0].artifacts: acme/widget 1.1.0: terraform-provider-widget_1.1.0_SHA256SUMS is missing"
        in done.stdout
    )
    assert "0 modules, 1 providers, 1 problems" in done.stdout


def test_check_asks_each_mapped_origin_for_its_providers_service(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    with ScriptedOrigin(tls) as origin:
        origin.json("/.well-known/terraform.json", {"providers.v1": "/v1/providers/"})
        (tmp_path / "registry.yaml").write_text(
            "cache_dir: cache\nmodules: []\n"
            "mirror:\n  read_through: true\n"
            f"  origins: {{good.example.test: '{origin.url}', gone.example.test: 'https://127.0.0.1:9/'}}\n"
            f"  ca_file: {tls.ca_cert}\n"
        )
        done = gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == ["mirror.origins.gone.example.test"]
    assert "127.0.0.1:9" in lines[0]
    assert lines[-1].endswith("0 modules, 0 providers, 1 problems, 0 warnings")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`gitreg ARGS` in this process: its exit status, stdout and stderr."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("system: null", 'modules[0].system (line 7): is null; write "null" in quotes'),
        ("system: ~", "modules[0].system (line 7): is ~, which YAML reads as no value"),
        ("system:", "modules[0].system (line 7): has no value (it is required)"),
        ("name: ''", "modules[0].name (line 6): is an empty string (it is required)"),
        ("repo: ~", "modules[0].repo (line 8): is ~, which YAML reads as no value"),
    ],
)
@pytest.mark.parametrize("command", ["check", "list", "serve"])
def test_a_required_key_without_a_value_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, value: str, message: str
) -> None:
    module = {"namespace": "infra", "name": "vpc", "system": "aws", "repo": "mono"}
    key = value.split(":")[0]
    lines = "".join(f"    {k}: {v}\n" if k != key else f"    {value}\n" for k, v in module.items())
    (tmp_path / "mono").mkdir()
    (tmp_path / "registry.yaml").write_text(
        f"hostname: registry.example.com\ncache_dir: cache\nmodules:\n  -\n{lines}"
    )
    status, out, err = run(capsys, command, "--config", str(tmp_path / "registry.yaml"))
    assert status == 2 and out == ""
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cache_dir: cache\n", "modules (line 1): there is nothing to serve"),
        ("cache_dir: cache\nmodules: []\nproviders:\n", "modules (line 2): there is nothing"),
        (
            "hostname:\ncache_dir: cache\nmodules: [{namespace: a, name: b, system: c, repo: mono}]\n",
            "hostname (line 1): has no value; give one, or leave the key out",
        ),
    ],
)
def test_check_refuses_an_empty_catalog_or_hostname(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "mono").mkdir()
    (tmp_path / "registry.yaml").write_text(text)
    status, out, err = run(capsys, "check", "--config", str(tmp_path / "registry.yaml"))
    assert status == 2 and message in err and out == ""


def test_check_passes_a_registry_of_the_network_mirror_alone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "registry.yaml").write_text("cache_dir: cache\nmirror: {read_through: false}\n")
    status, out, _ = run(capsys, "check", "--config", str(tmp_path / "registry.yaml"))
    assert status == 0 and out.endswith("0 modules, 0 providers, 0 problems, 0 warnings\n")


@pytest.mark.parametrize(
    ("secret", "commands_that_refuse"),
    [
        ("webhooks: {secret_env: GITREG_TEST_UNSET}", {"check", "serve", "demo"}),
        ("webhooks: {secret_file: absent}", {"check", "serve", "demo"}),
        (
            "credentials: [{url: 'https://git.example.com/', token_env: GITREG_TEST_UNSET}]",
            {"check", "serve", "demo", "list"},
        ),
        (
            "mirror: {origins: {a.example.test: {token_env: GITREG_TEST_UNSET}}}",
            {"check", "serve", "demo", "mirror"},
        ),
    ],
)
def test_only_the_commands_that_use_a_secret_need_it(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    catalog: Path,
    secret: str,
    commands_that_refuse: set[str],
) -> None:
    monkeypatch.delenv("GITREG_TEST_UNSET", raising=False)
    catalog.write_text(f"{secret}\n{catalog.read_text()}")
    config = ["--config", str(catalog)]
    mirror_sync = ["mirror", "sync", "a.example.test/acme/widget", "--platform", "x_y"]
    for name in commands_that_refuse:
        status, _, err = run(capsys, *(mirror_sync if name == "mirror" else [name]), *config)
        assert status == 2 and "(line 1):" in err, (name, err)
        assert "is not set" in err or "is not a readable file" in err
    # The commands that do not use the secret run as they would without it.
    status, out, err = run(capsys, "list", "--offline", *config)
    assert out.startswith("registry.example.com/infra/vpc/aws\n"), err
    # (nothing fetched yet, and --offline fetches nothing: no version to list)
    assert status == 1 and "could not read any of the 1 repositories" in err
    if "list" not in commands_that_refuse:
        status, out, err = run(capsys, "list", *config)
        assert status == 0 and "1.1.0" in out, err
    status, _, err = run(capsys, "accept", "infra/vpc/aws", "1.0.0", *config)
    assert status == 1 and "no moved tag to accept" in err


def test_list_shows_hosted_providers_and_the_network_mirror(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    catalog: Path,
    tmp_path: Path,
) -> None:
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    write_release(tmp_path / "widget" / "1.0.0", "widget", "1.0.0", signer=key)
    write_release(tmp_path / "widget" / "1.1.0", "widget", "1.1.0", ("linux_arm64",), signer=key)
    (tmp_path / "widget" / "1.2.0").mkdir()
    broken = write_release(tmp_path / "widget" / "1.2.0", "widget", "1.2.0", signer=key)
    broken.unlink()
    (tmp_path / "gadget").mkdir()
    (tmp_path / "terraform-mirror").mkdir()
    monkeypatch.setenv("GITREG_TEST_TOKEN", "s3cret-token")
    catalog.write_text(
        catalog.read_text()
        + "signing: {keys: [gitreg.asc]}\n"
        + "providers:\n"
        + "  - {namespace: acme, type: widget, artifacts: widget}\n"
        + "  - {namespace: acme, type: gadget, artifacts: gadget}\n"
        + "mirror:\n  folders: [terraform-mirror]\n  read_through: true\n  origins:\n"
        + "    registry.terraform.io: https://proxy.example.test/terraform/\n"
        + "    private.example.test: {token_env: GITREG_TEST_TOKEN}\n"
    )
    status, out, err = run(capsys, "list", "--config", str(catalog))
    assert status == 0, err
    assert out.startswith("registry.example.com/infra/vpc/aws\n")
    providers = out.split("\nproviders\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert providers == [
        "  registry.example.com/acme/widget",
        f"    artifacts {tmp_path / 'widget'}",
        "    1.1.0                    linux_arm64",
        "    1.0.0                    darwin_arm64, linux_amd64",
        "    refused 1.2.0: terraform-provider-widget_1.2.0_SHA256SUMS is missing",
        "  registry.example.com/acme/gadget",
        f"    artifacts {tmp_path / 'gadget'}",
        f"    warning: has no release in {tmp_path / 'gadget'}"
        " (no terraform-provider-gadget_VERSION_OS_ARCH.zip)",
    ]
    mirror = out.split("\nnetwork mirror\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert mirror == [
        "  hosted providers, under registry.example.com",
        f"  folder {tmp_path / 'terraform-mirror'}",
        "  read-through: on, to registry.terraform.io, registry.opentofu.org and:",
        "    registry.terraform.io: https://proxy.example.test/terraform/",
        "    private.example.test: https://private.example.test/, token from $GITREG_TEST_TOKEN",
    ]
    assert "s3cret-token" not in out + err
    assert "\nrepositories\n" in out


def test_check_warns_of_a_provider_with_no_release(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "README.md").write_text("releases land here\n")
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nproviders:\n"
        "  - {namespace: acme, type: widget, artifacts: empty}\n"
        "  - {namespace: acme, type: gadget, artifacts: other}\n"
    )
    status, out, _ = run(capsys, "check", "--config", str(tmp_path / "registry.yaml"))
    assert status == 0
    assert out.splitlines() == [
        f"warning: providers[0].artifacts: acme/widget has no release in {tmp_path / 'empty'}"
        " (no terraform-provider-widget_VERSION_OS_ARCH.zip)",
        f"warning: providers[1].artifacts: acme/gadget has no release in {tmp_path / 'other'}"
        " (no terraform-provider-gadget_VERSION_OS_ARCH.zip)",
        f"{tmp_path / 'registry.yaml'}: 0 modules, 2 providers, 0 problems, 2 warnings",
    ]


def test_token_new_prints_a_token_and_the_lines_that_hold_only_its_digest(
    catalog: Path,
) -> None:
    done = gitreg("token", "new", "ci-infra", "--read", "infra")
    assert done.returncode == 0, done.stderr
    token = done.stdout.splitlines()[0].removeprefix("token: ")
    entry = done.stdout.split("registry.yaml\n", 1)[1].split("\n", 1)[1]
    assert token not in entry
    with catalog.open("a") as f:
        f.write(f"auth:\n  tokens:\n{entry}\n")
    checked = gitreg("check", "--config", str(catalog))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 warnings" in checked.stdout
    loaded = load_catalog(catalog)
    assert loaded.auth is not None
    assert loaded.auth.tokens[0].sha256 == hashlib.sha256(token.encode()).hexdigest()
    assert loaded.auth.tokens[0].read == ("infra",)


def test_token_new_refuses_a_bad_name() -> None:
    done = gitreg("token", "new", "no spaces")
    assert done.returncode == 2 and "1 to 64 letters" in done.stderr


def test_check_warns_of_namespaces_no_token_opens(catalog: Path) -> None:
    with catalog.open("a") as f:
        f.write("auth:\n  tokens: [{name: idle, token_sha256: '" + "0" * 64 + "'}]\n")
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "token 'idle' opens nothing" in done.stdout
    assert "nothing opens namespace 'infra'" in done.stdout
    assert "2 warnings" in done.stdout


def test_check_refuses_a_bad_auth_section_with_its_line(catalog: Path) -> None:
    with catalog.open("a") as f:
        f.write("auth:\n  tokens: [{name: x, token_sha256: nope}]\n")
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 2
    assert "auth.tokens[0].token_sha256 (line 6): must be 64 hex digits" in done.stderr


@pytest.mark.parametrize(
    ("in_catalog", "flag", "json_lines"),
    [
        ("", [], False),
        ("log_format: json\n", [], True),
        ("log_format: json\n", ["--log-format", "text"], False),
        ("", ["--log-format", "json"], True),
    ],
)
def test_log_format_from_the_catalog_and_the_flag_that_wins(
    catalog: Path, in_catalog: str, flag: list[str], json_lines: bool
) -> None:
    catalog.write_text(in_catalog + catalog.read_text())
    port = free_port()
    process = start_gitreg(
        "serve", "--config", str(catalog), "--listen", f"127.0.0.1:{port}", *flag
    )
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/readyz"), 60, "gitreg serving")
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    lines = output.splitlines()
    assert lines and all(line.startswith("{") == json_lines for line in lines), output
    if json_lines:
        assert [json.loads(line)["message"] for line in lines][-1] == "stopped"


@pytest.fixture
def stopped_daemon() -> Iterator[str]:
    """A repository's git:// URL on 127.0.0.1 whose server is gone: its port is bound and not
    listened on, so connections are refused and no other program takes it meanwhile (a port
    freed by a stopped daemon could be taken by another before being held)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield f"git://127.0.0.1:{holder.getsockname()[1]}/net.git"


@contextlib.contextmanager
def held(base: str) -> Iterator[None]:
    """The port of `base` (a stopped server's URL) bound and not listened on: connections to
    it are refused, and no other program can take it meanwhile."""
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        yield


def _listed_with(catalog: Path, *repos: str, keep_mono: bool = True) -> Path:
    text = catalog.read_text()
    if not keep_mono:
        text = text.split("modules:\n")[0] + "modules:\n"
    for i, repo in enumerate(repos):
        text += f"  - {{namespace: infra, name: m{i}, system: aws, repo: '{repo}'}}\n"
    catalog.write_text(text)
    return catalog


def test_list_says_which_repositories_could_not_be_read(
    catalog: Path, tmp_path: Path, stopped_daemon: str
) -> None:
    (tmp_path / "no-repository").mkdir()  # a folder, and no Git repository in it
    token_as_user = stopped_daemon.replace("git://", "http://glpat-s3cr3t@")
    _listed_with(catalog, stopped_daemon, "no-repository", token_as_user)
    done = gitreg("list", "--config", str(catalog))
    assert done.returncode == 0, done.stderr  # infra/vpc/aws is read: a server serves it
    assert done.stderr == ""
    assert "glpat-s3cr3t" not in done.stdout
    section = done.stdout.split("\ncould not read ", 1)[1].splitlines()
    assert section[0] == "3 of 4 repositories:"
    http_url = stopped_daemon.replace("git://", "http://")
    assert [line.split(": ", 1)[0] for line in section[1:]] == [
        f"  {stopped_daemon}",
        f"  {tmp_path / 'no-repository'}",
        f"  {http_url}",
    ]
    assert all(": fetch failed: " in line for line in section[1:])
    assert "serving the versions known before" not in done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "registry.example.com/infra/vpc/aws"


def test_list_fails_when_no_repository_could_be_read(
    catalog: Path, tmp_path: Path, stopped_daemon: str
) -> None:
    (tmp_path / "no-repository").mkdir()
    _listed_with(catalog, stopped_daemon, "no-repository", keep_mono=False)
    done = gitreg("list", "--config", str(catalog))
    assert done.returncode == 1
    assert done.stderr == (
        "gitreg: could not read any of the 2 repositories: no module has a version to list\n"
    )
    assert "could not read 2 of 2 repositories:" in done.stdout


def test_list_says_which_repositories_could_not_be_fetched(catalog: Path, tmp_path: Path) -> None:
    served = tmp_path / "served"
    GitRepo(served / "net.git").release("v1.0.0", module_files("1.0.0"))
    with git_daemon(served) as base:
        _listed_with(catalog, f"{base}/net.git", keep_mono=False)
        first = gitreg("list", "--config", str(catalog))
    assert first.returncode == 0 and "could not" not in first.stdout, first.stdout
    with held(base):
        done = gitreg("list", "--fetch", "--config", str(catalog))
    assert done.returncode == 0, done.stderr  # its clone is read: what a server would serve
    assert "  1.0.0 " in done.stdout
    section = done.stdout.split("\ncould not fetch ", 1)[1].splitlines()
    assert section[0] == "1 of 1 repositories (listed as their clones hold them):"
    assert section[1].startswith(f"  {base}/net.git: fetch failed: ")


BROKEN = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: x, colour: red}\n"


@pytest.mark.parametrize(
    ("args", "first"),
    [
        ([], "gitreg: the following arguments are required: COMMAND (see gitreg --help)"),
        (["serf"], "gitreg: COMMAND: invalid choice: 'serf'"),
        (["list", "--bogus"], "gitreg: unrecognized arguments: --bogus (see gitreg --help)"),
        (["serve", "--workers", "x"], "gitreg: --workers: invalid int value: 'x'"),
        (["serve", "--workers", "0"], "gitreg: --workers 0: must be from 1 to 64"),
        (
            ["serve", "--listen", "127.0.0.1:99999"],
            "gitreg: --listen 127.0.0.1:99999: the port 99999 is out of range:"
            " a port is from 1 to 65535",
        ),
        (
            ["demo", "--listen", "127.0.0.1:port"],
            "gitreg: --listen 127.0.0.1:port: the port 'port' is not a number",
        ),
        (["serve", "--keyfile", "k.pem"], "gitreg: --keyfile: needs --certfile too"),
        (["check", "--listen", "nowhere"], "gitreg: --listen nowhere: 'nowhere' must be HOST:PORT"),
        (["serve", "--config", "{absent}"], "gitreg: --config {absent}: no such file"),
        (["list", "--config", "{absent}"], "gitreg: --config {absent}: no such file"),
        (["check", "--config", "{broken}"], "gitreg: {broken}: modules[0].colour (line 2):"),
        (["docs"], "gitreg: docs: the following arguments are required: module"),
        (["docs", "infra/vpc"], "gitreg: infra/vpc: give the module as NAMESPACE/NAME/SYSTEM"),
        (["docs", "infra/nope/aws"], "gitreg: infra/nope/aws: no such module in {catalog}"),
        (["accept", "infra/vpc", "1.0.0"], "gitreg: infra/vpc: give the module as"),
        (["mirror", "pull", "x"], "gitreg: action: invalid choice: 'pull'"),
        (["mirror", "sync", "acme/widget"], "gitreg: 'acme/widget': name the origin too"),
        (
            ["mirror", "sync", "registry.terraform.io/hashicorp/null@one"],
            "gitreg: registry.terraform.io/hashicorp/null@one: 'one' is not a Semantic Version",
        ),
        (["cert"], "gitreg: cert: the following arguments are required: --host"),
        (["cert", "--host", "https://x"], "gitreg: --host: 'https://x' must be a host name"),
        (["token", "new", "a b"], "gitreg: token name 'a b': must be 1 to 64 letters"),
        (["token", "old", "ci"], "gitreg: action: invalid choice: 'old'"),
    ],
)
def test_every_usage_or_config_error_is_said_in_one_form(
    capsys: pytest.CaptureFixture[str],
    catalog: Path,
    tmp_path: Path,
    args: list[str],
    first: str,
) -> None:
    """`gitreg: <what>: <why>` on every line of stderr, exit status 2, nothing on stdout."""
    (tmp_path / "broken.yaml").write_text(BROKEN)
    names = {"absent": tmp_path / "absent.yaml", "broken": tmp_path / "broken.yaml"}
    names["catalog"] = catalog
    args = [a.format(**names) for a in args]
    commands_with_catalog = ("serve", "check", "list", "docs", "accept", "demo", "mirror")
    needs_catalog = bool(args) and args[0] in commands_with_catalog
    if needs_catalog and "--config" not in args:
        args += ["--config", str(catalog)]
    status: object
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's errors end the process
        status = exc.code
    out, err = capsys.readouterr()
    assert status == 2, err
    assert out == ""
    lines = err.splitlines()
    assert lines and all(line.startswith("gitreg: ") for line in lines), err
    assert lines[0].startswith(first.format(**names)), err
    assert "Traceback" not in err and "error:" not in err and "usage:" not in err
