"""Which hosts and addresses a webhook may reach (ARCHITECTURE.md §9, SSRF): host names by name,
addresses by the private, reserved and metadata tables. Pure: stdlib only, no sockets."""

from __future__ import annotations

import ipaddress

from domain.webhooks.targets import (
    INVALID,
    METADATA,
    PRIVATE_ADDRESS,
    RESERVED_ADDRESS,
    IPAddress,
    UnsafeTargetError,
)


def check_host(host: str, *, allow_private: bool = False) -> None:
    """Refuse a normalized host by name, or by address when it is an IP literal."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        check_address(host, allow_private=allow_private)
        return
    if host in METADATA_NAMES:
        raise UnsafeTargetError(METADATA, f"{host} is a cloud metadata service")
    # Names whose answer depends on local configuration (search domains, /etc/hosts, mDNS).
    local = "." not in host or host == "localhost" or host.endswith(PRIVATE_NAME_SUFFIXES)
    if local and not allow_private:
        raise UnsafeTargetError(PRIVATE_ADDRESS, f"{host} is a local or internal host name")


METADATA_NAMES = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal",
})
PRIVATE_NAME_SUFFIXES = (".localhost", ".internal", ".local", ".localdomain", ".home.arpa")


def check_address(ip: str, *, allow_private: bool = False) -> None:
    """Raise unless ``ip`` is globally routable. ``allow_private`` (development only) lets the
    private tier through, never reserved or metadata addresses."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        raise UnsafeTargetError(INVALID, f"{ip!r} is not an IP address", address=ip) from None
    if isinstance(address, ipaddress.IPv6Address):
        _judge_v6(ipaddress.IPv6Address(int(address)), allow_private, ip)  # zone id dropped
    else:
        _judge_v4(address, allow_private, ip, ip)


def _net(spec: str, what: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str]:
    return ipaddress.ip_network(spec), what


METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
    "169.254.170.2",  # AWS ECS task credentials
    "169.254.170.23",  # AWS EKS pod identity
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",  # Oracle Cloud
    "fd00:ec2::254",  # AWS IMDS over IPv6
    "fd00:ec2::23",  # AWS EKS pod identity over IPv6
))
_PRIVATE_V4 = (
    _net("127.0.0.0/8", "a loopback address"),
    _net("10.0.0.0/8", "a private (RFC 1918) address"),
    _net("172.16.0.0/12", "a private (RFC 1918) address"),
    _net("192.168.0.0/16", "a private (RFC 1918) address"),
    _net("169.254.0.0/16", "a link-local address"),
    _net("100.64.0.0/10", "a shared (CGNAT) address"),
)
_RESERVED_V4 = (
    _net("0.0.0.0/8", "in 0.0.0.0/8 ('this network', reaches the local host)"),
    _net("255.255.255.255/32", "the broadcast address"),
    _net("224.0.0.0/4", "a multicast address"),
    _net("240.0.0.0/4", "a reserved address"),
    _net("192.0.0.0/24", "an IETF protocol assignment"),
    _net("192.0.2.0/24", "a documentation address"),
    _net("198.51.100.0/24", "a documentation address"),
    _net("203.0.113.0/24", "a documentation address"),
    _net("198.18.0.0/15", "a benchmarking address"),
    _net("192.88.99.0/24", "a 6to4 relay anycast address"),
)
_PRIVATE_V6 = (
    _net("::1/128", "a loopback address"),
    _net("fe80::/10", "a link-local address"),
    _net("fc00::/7", "a unique-local address"),
    _net("fec0::/10", "a site-local address"),
)
_RESERVED_V6 = (
    _net("::/128", "the unspecified address"),
    _net("ff00::/8", "a multicast address"),
    _net("2001::/32", "a Teredo tunnel address (its IPv4 end cannot be checked)"),
    _net("64:ff9b:1::/48", "a local-use NAT64 address"),
    _net("100::/64", "a discard-only address"),
    _net("2001:db8::/32", "a documentation address"),
    _net("3fff::/20", "a documentation address"),
    _net("2001:2::/48", "a benchmarking address"),
    _net("2001::/23", "an IETF protocol assignment"),
)
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_COMPATIBLE = ipaddress.ip_network("::/96")


def _judge_v4(address: ipaddress.IPv4Address, allow_private: bool, ip: str, shown: str) -> None:
    if address in METADATA_ADDRESSES:
        raise UnsafeTargetError(METADATA, f"{shown} is a cloud metadata address", address=ip)
    _judge_tables(address, _PRIVATE_V4, _RESERVED_V4, allow_private, ip, shown)


def _judge_v6(address: ipaddress.IPv6Address, allow_private: bool, ip: str) -> None:
    if address in METADATA_ADDRESSES:
        raise UnsafeTargetError(METADATA, f"{ip} is a cloud metadata address", address=ip)
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        # Packets for these forms end at the embedded IPv4 address, so that address is judged.
        ipv4, form = embedded
        _judge_v4(ipv4, allow_private, ip, f"{ip} ({form} of {ipv4})")
        if form == "IPv4-compatible form":
            raise UnsafeTargetError(RESERVED_ADDRESS, f"{ip} is a deprecated IPv4-compatible address", address=ip)
        return
    if _judge_tables(address, _PRIVATE_V6, _RESERVED_V6, allow_private, ip, ip):
        return
    if address not in _GLOBAL_UNICAST:
        raise UnsafeTargetError(RESERVED_ADDRESS, f"{ip} is outside global unicast space", address=ip)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, "IPv4-mapped form"
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), "NAT64 form"
    if address.sixtofour is not None:
        return address.sixtofour, "6to4 form"
    if address in _COMPATIBLE and int(address) > 1:  # :: and ::1 are not IPv4-compatible
        return ipaddress.IPv4Address(int(address)), "IPv4-compatible form"
    return None


def _judge_tables(address: IPAddress, private: tuple, reserved: tuple, allow_private: bool, ip: str,
                  shown: str) -> bool:
    """True when the address is in the private tier and development lets it through."""
    for network, what in private:
        if address in network:
            if allow_private:
                return True
            raise UnsafeTargetError(PRIVATE_ADDRESS, f"{shown} is {what}", address=ip)
    for network, what in reserved:
        if address in network:
            raise UnsafeTargetError(RESERVED_ADDRESS, f"{shown} is {what}", address=ip)
    if not address.is_global:  # the standard library's registry, as a second net
        raise UnsafeTargetError(RESERVED_ADDRESS, f"{shown} is not globally routable", address=ip)
    return False
