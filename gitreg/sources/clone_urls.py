"""Which clone URLs a forge may name: places on the forge itself, or hosts its source lists.

That is the forge's host (for http(s) its port too) or a host its source lists under
`clone_hosts`; never a path or a `file://` URL on this machine, a remote helper (`ext::`), a
password, or another server. A forge's JSON is the forge's word, not registry.yaml's: a
compromised forge, or anyone on the path of an `http://` one, writes it. Only registry.yaml says
where gitreg may fetch from. See docs/sources.md."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from gitreg.catalog.specs import SourceSpec
from gitreg.git.location import redact

SCHEMES = ("https", "http", "ssh", "git")
DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}
# `<transport>::<address>`: git runs the program git-remote-<transport> (`ext::sh -c …`).
_HELPER = re.compile(r"[A-Za-z0-9+.-]+::")
# git's short ssh form, `[user@]host:path`; a host in brackets is an IPv6 literal.
_SCP_LIKE = re.compile(r"(?:(?P<user>[^@/:\[\]]+)@)?(?P<host>\[[^\]/]+\]|[^@/:\[\]]+):(?P<path>.*)")
# A plain user name: what a forge writes before the host (`git@`, Bitbucket's `admin@`). Never
# an option (`-oProxyCommand=…`), which an ssh that took it would run.
_USER = re.compile(r"[A-Za-z0-9._~%+][A-Za-z0-9._~%+-]*")


@dataclass(frozen=True)
class ClonePlaces:
    """Where a source's forge keeps its clones: its own host names (GitHub's API host
    `api.github.com` is the forge `github.com`), its scheme and port, and the hosts registry.yaml
    lists beside (a port None: the clone URL's scheme's own)."""

    hosts: tuple[str, ...]
    scheme: str
    port: int
    listed: tuple[tuple[str, int | None], ...] = ()

    @classmethod
    def of(cls, spec: SourceSpec) -> ClonePlaces:
        parts = urlsplit(spec.where)
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        hosts: tuple[str, ...] = (host,)
        if spec.kind == "github" and host.startswith("api."):
            hosts += (host.removeprefix("api."),)  # github.com, a data-residency SUBDOMAIN.ghe.com
        return cls(hosts, scheme, parts.port or DEFAULT_PORTS.get(scheme, 443), spec.clone_hosts)

    def refusal(self, url: str) -> str:
        """Why the forge may not name `url` as a repository's clone URL, or "" when it may."""
        why = self._why(url)
        return f"clone URL {redact(url)!r} refused: {why}" if why else ""

    def _why(self, url: str) -> str:
        if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
            return "it holds whitespace or control characters"
        if _HELPER.match(url):
            return f"{url.split('::', 1)[0]}:: runs a program of this machine, not a clone"
        if "://" in url:
            try:
                parts = urlsplit(url)
            except ValueError:  # brackets that hold no IPv6 address
                return "it names no host"
            scheme = parts.scheme.lower()
            if scheme == "file":
                return "file:// is a place on this machine, not on the forge"
            if scheme not in SCHEMES:
                return f"scheme {scheme!r} is none of {', '.join(SCHEMES)}"
            try:
                port = parts.port
            except ValueError:
                return "its port is not a number"
            if parts.password is not None:
                return "it carries a password (credentials: in registry.yaml give those)"
            return self._place(scheme, parts.hostname or "", port, parts.username)
        scp = _SCP_LIKE.fullmatch(url)
        if scp is None or scp["path"].startswith(":"):
            return "a path on this machine, not a place on the forge"
        host = scp["host"].lower()
        if host.startswith("["):
            host = host[1:-1]
            if not _is_ipv6(host):
                return f"[{host}] is not an IPv6 address"
        return self._place("ssh", host, None, scp["user"])

    def _place(self, scheme: str, host: str, port: int | None, user: str | None) -> str:
        if not host:
            return "it names no host"
        if user is not None:
            if scheme == "git":
                return "git:// takes no user name"
            if not _USER.fullmatch(user):
                return f"{user!r} is not a plain user name"
        at = DEFAULT_PORTS[scheme] if port is None else port
        if any(h == host and at == (p or DEFAULT_PORTS[scheme]) for h, p in self.listed):
            return ""
        shown = f"[{host}]" if ":" in host else host
        if host not in self.hosts:
            return f"host {shown} is neither the forge's ({self.hosts[0]}) nor in clone_hosts"
        if scheme not in ("http", "https"):
            return ""  # the forge's own ssh or git daemon: on a port of its own
        if at != self.port:
            return (
                f"port {at} is not the forge's ({self.port}): list '{shown}:{at}' in"
                " clone_hosts if the forge serves its clones there"
            )
        if scheme == "http" and self.scheme == "https":
            return "http:// where the forge is reached over https://"
        return ""


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True
