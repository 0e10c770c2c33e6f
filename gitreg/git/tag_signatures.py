"""Release tags' signatures checked by `git verify-tag`, against SSH signers or OpenPGP keys.

git picks its verifier from the signature's armor, so both are pinned at every call: SSH to the
configured allowed-signers file (or none), OpenPGP to a private keyring holding only the configured
keys (or an empty one), and no git config file is read. The exit code decides (an SSH key that no
principal lists prints "Good" and exits 1); git's words only say who signed, or why not. See
docs/new-tags.md."""

from __future__ import annotations

import atexit
import base64
import hashlib
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Literal, NamedTuple

from gitreg.git.git_command import GitFailed, run_git_unchecked

SignatureKind = Literal["ssh", "openpgp"]
_TIMEOUT = 30.0
_NO_SSH_SIGNERS = "/nonexistent/gitreg-takes-no-ssh-signatures"
_SSH_GOOD = re.compile(r'Good "git" signature for (\S+) with (\S+) key (SHA256:\S+)')
_SSH_KEY = re.compile(r"with \S+ key (SHA256:\S+)")
_SSH_TYPES = re.compile(r"(ssh-(ed25519|rsa|dss)|ecdsa-sha2-\S+|sk-\S+@openssh\.com)")
_TOKENS = re.compile(r'(?:[^\s"]|"[^"]*")+')


class Verdict(NamedTuple):
    """A tag's signature checked: who signed it, or why it is refused (one of the two is "")."""

    signer: str
    refusal: str


def verify_tag(git_dir: Path, tag_object: str, kind: SignatureKind, signers: Path) -> Verdict:
    """Whether the tag object `tag_object` of the clone at `git_dir` carries a signature of `kind`
    that `signers` (an allowed-signers file, or an OpenPGP key file) accepts."""
    ssh_signers = str(signers) if kind == "ssh" else _NO_SSH_SIGNERS
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GNUPGHOME": str(_keyring(signers if kind == "openpgp" else None)),
    }
    pinned = [
        *("-c", f"gpg.ssh.allowedSignersFile={ssh_signers}", "-c", "gpg.ssh.program=ssh-keygen"),
        *("-c", "gpg.program=gpg", "-c", "gpg.x509.program=false"),
    ]
    args = [f"--git-dir={git_dir}", *pinned, "verify-tag", "--raw", tag_object]
    try:  # run as other git is: its CPU charged to the background budget
        done = run_git_unchecked(args, env, _TIMEOUT)
    except GitFailed as exc:
        return Verdict("", f"the signature could not be checked: {exc}")
    said = (done.out + done.err).decode("utf-8", "replace")
    return _verdict(done.returncode, said, kind, signers)


def _verdict(returncode: int, said: str, kind: SignatureKind, signers: Path) -> Verdict:
    if returncode == 0 and kind == "ssh" and (good := _SSH_GOOD.search(said)):
        return Verdict(f"{good[1]} ({good[2]} key {good[3]})", "")
    if returncode == 0 and kind == "openpgp" and (signer := _openpgp_signer(said)):
        return Verdict(signer, "")
    wanted = "an SSH signature" if kind == "ssh" else "an OpenPGP signature"
    if "no signature found" in said or "cannot verify a non-tag object" in said:
        return Verdict("", f"missing signature (require_signed_tags wants {wanted})")
    if "[GNUPG:]" in said and kind == "ssh":
        return Verdict("", f"signed with OpenPGP (require_signed_tags wants {wanted})")
    if kind == "openpgp" and ("gpg.ssh.allowedSignersFile" in said or _SSH_KEY.search(said)):
        return Verdict("", f"signed with SSH (require_signed_tags wants {wanted})")
    if "No principal matched" in said and (key := _SSH_KEY.search(said)):
        return Verdict("", f"signed by SSH key {key[1]}, which {signers.name} does not list")
    if match := re.search(r"\[GNUPG:\] NO_PUBKEY (\S+)", said):
        return Verdict("", f"signed by OpenPGP key {match[1]}, which {signers.name} does not hold")
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    last = next((line for line in reversed(lines) if not line.startswith("[GNUPG:]")), "")
    return Verdict("", f"the signature does not verify: {last or f'git exited with {returncode}'}")


def _openpgp_signer(said: str) -> str:
    """`Name <mail> (OpenPGP key FINGERPRINT)` from GOODSIG and VALIDSIG; "" without both."""
    good = re.search(r"^\[GNUPG:\] GOODSIG \S+ (.*)$", said, re.MULTILINE)
    valid = re.search(r"^\[GNUPG:\] VALIDSIG (.*)$", said, re.MULTILINE)
    if not good or not valid:
        return ""
    return f"{good[1].strip()} (OpenPGP key {valid[1].split()[-1]})"


_keyrings: dict[tuple[str, str], Path] = {}
_keyrings_lock = threading.Lock()


def _keyring(keys: Path | None) -> Path:
    """A private GNUPGHOME holding only the keys of the file `keys` (none: empty), made once per
    file content and removed at exit."""
    content = keys.read_bytes() if keys else b""
    key = (str(keys), hashlib.sha256(content).hexdigest())
    with _keyrings_lock:
        home = _keyrings.get(key)
        if home is None or not home.is_dir():
            home = Path(tempfile.mkdtemp(prefix="gitreg-keyring-"))  # mode 0700
            atexit.register(shutil.rmtree, home, True)
            # Public keys need no gpg-agent; one started would outlive gitreg.
            (home / "gpg.conf").write_text("no-autostart\n")
            if keys:
                _gpg(home, "--import", str(keys))
            _keyrings[key] = home
        return home


def _gpg(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["gpg", "--batch", "--no-tty", "--quiet", "--no-autostart", "--homedir", str(home), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=_TIMEOUT,
        check=False,
    )


def signers_problem(kind: SignatureKind, file: Path) -> tuple[int | None, str] | None:
    """Why `file` is no usable allowed-signers file (`ssh`) or OpenPGP key file: the line
    at fault when there is one, and the reason; None when it is usable."""
    try:
        content = file.read_bytes()
    except OSError as exc:
        return None, f"cannot read {file}: {exc.strerror or exc}"
    if kind == "ssh":
        return _allowed_signers_problem(content.decode("utf-8", "replace"))
    with tempfile.TemporaryDirectory(prefix="gitreg-keys-") as home:
        try:
            shown = _gpg(Path(home), "--with-colons", "--show-keys", str(file))
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"cannot read it with gpg: {exc}"
    keys = [line for line in shown.stdout.splitlines() if line.startswith(b"pub:")]
    if shown.returncode != 0 or not keys:
        said = shown.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"holds no OpenPGP public key ({said[-1] if said else 'gpg read none'})"
    return None


def _allowed_signers_problem(text: str) -> tuple[int | None, str] | None:
    """Each line `PRINCIPALS [OPTIONS] KEYTYPE BASE64`, as ssh-keygen(1) ALLOWED SIGNERS says."""
    listed = 0
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = _TOKENS.findall(line.strip())
        if not tokens or tokens[0].startswith("#"):
            continue
        at = next((i for i, t in enumerate(tokens) if i and _SSH_TYPES.fullmatch(t)), None)
        if at is None or at > 2 or at + 1 >= len(tokens):
            return number, "is not `PRINCIPALS [OPTIONS] KEYTYPE KEY`, as ssh-keygen reads it"
        try:
            blob = base64.b64decode(tokens[at + 1], validate=True)
        except ValueError:
            return number, f"its {tokens[at]} key is not base64"
        if blob[4 : 4 + len(tokens[at])] != tokens[at].encode():
            return number, f"its key is not an {tokens[at]} key"
        listed += 1
    return None if listed else (None, "lists no signer")
