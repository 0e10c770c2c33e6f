"""A client address as the per-address limits count it: the socket peer (gitreg trusts no
X-Forwarded-For), an IPv6 address by its /64, since one host commonly holds a whole /64."""

from __future__ import annotations

import functools
import ipaddress


# Every request with a token asks (the wrong-token table): parsing an address costs more than
# the rest of a gate's yes, and a client sends many requests from one address.
@functools.lru_cache(maxsize=4096)
def address_key(client: str) -> str:
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client  # not an IP address (a Unix socket, a test client): counted as it is
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
