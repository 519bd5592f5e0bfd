"""Which webhook URLs may be called (ARCHITECTURE.md §9, SSRF): URL normalization, host-name and
address policy. Pure: stdlib only, no sockets, no resolution (the sender adapter resolves)."""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

MAX_URL_LENGTH = 2048

INVALID = "webhook_url_invalid"
NOT_HTTPS = "webhook_url_not_https"
CREDENTIALS = "webhook_url_credentials"
PRIVATE_ADDRESS = "webhook_url_private_address"  # lifted by allow_private (development)
RESERVED_ADDRESS = "webhook_url_reserved_address"  # never lifted
METADATA = "webhook_url_metadata"  # never lifted
UNRESOLVABLE = "webhook_url_unresolvable"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeTarget(Exception):
    """A webhook URL that must not be called; ``code`` is stable, ``message`` fits a 422 ``msg``."""

    def __init__(self, code: str, message: str, *, address: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.address = address


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # IDNA ASCII, lowercase, no trailing dot; an IP literal in canonical form, unbracketed
    port: int
    path_and_query: str

    @property
    def literal_address(self) -> str | None:
        """The host when the URL names an IP address: nothing to resolve, the address is checked."""
        try:
            return str(ipaddress.ip_address(self.host))
        except ValueError:
            return None

    @property
    def host_header(self) -> str:
        """The ``Host`` value: the authority without an IPv6 zone id (local to this machine)."""
        return _authority(self.scheme, self.host.split("%")[0], self.port)


_DEFAULT_PORTS = {"https": 443, "http": 80}
# NFKC leaves these as ideographic full stops; resolvers and browsers treat them as dots.
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def parse_target(url: str, *, allow_http: bool = False) -> Target:
    """Normalize a webhook URL so that every later check sees the host the socket would reach."""
    url = url.strip()
    if not url or len(url) > MAX_URL_LENGTH:
        raise UnsafeTarget(INVALID, f"URL must be 1 to {MAX_URL_LENGTH} characters")
    # urlsplit silently drops tabs and newlines; a URL carrying them is refused, not repaired.
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in url):
        raise UnsafeTarget(INVALID, "URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UnsafeTarget(INVALID, f"URL cannot be parsed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme != "https" and not (scheme == "http" and allow_http):
        raise UnsafeTarget(NOT_HTTPS, "URL must use https")
    if "@" in parts.netloc:
        raise UnsafeTarget(CREDENTIALS, "URL must not contain credentials")
    raw_host, port = _split_authority(parts.netloc, _DEFAULT_PORTS[scheme])
    host = _normalize_host(raw_host)
    path_and_query = _quote(parts.path or "/") + (f"?{_quote(parts.query)}" if parts.query else "")
    url = f"{scheme}://{_authority(scheme, host.replace('%', '%25'), port)}{path_and_query}"
    return Target(url=url, scheme=scheme, host=host, port=port, path_and_query=path_and_query)


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
        raise UnsafeTarget(METADATA, f"{host} is a cloud metadata service")
    # Names whose answer depends on local configuration (search domains, /etc/hosts, mDNS).
    local = "." not in host or host == "localhost" or host.endswith(PRIVATE_NAME_SUFFIXES)
    if local and not allow_private:
        raise UnsafeTarget(PRIVATE_ADDRESS, f"{host} is a local or internal host name")


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
        raise UnsafeTarget(INVALID, f"{ip!r} is not an IP address", address=ip) from None
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
        raise UnsafeTarget(METADATA, f"{shown} is a cloud metadata address", address=ip)
    _judge_tables(address, _PRIVATE_V4, _RESERVED_V4, allow_private, ip, shown)


def _judge_v6(address: ipaddress.IPv6Address, allow_private: bool, ip: str) -> None:
    if address in METADATA_ADDRESSES:
        raise UnsafeTarget(METADATA, f"{ip} is a cloud metadata address", address=ip)
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        # Packets for these forms end at the embedded IPv4 address, so that address is judged.
        ipv4, form = embedded
        _judge_v4(ipv4, allow_private, ip, f"{ip} ({form} of {ipv4})")
        if form == "IPv4-compatible form":
            raise UnsafeTarget(RESERVED_ADDRESS, f"{ip} is a deprecated IPv4-compatible address", address=ip)
        return
    if _judge_tables(address, _PRIVATE_V6, _RESERVED_V6, allow_private, ip, ip):
        return
    if address not in _GLOBAL_UNICAST:
        raise UnsafeTarget(RESERVED_ADDRESS, f"{ip} is outside global unicast space", address=ip)


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
            raise UnsafeTarget(PRIVATE_ADDRESS, f"{shown} is {what}", address=ip)
    for network, what in reserved:
        if address in network:
            raise UnsafeTarget(RESERVED_ADDRESS, f"{shown} is {what}", address=ip)
    if not address.is_global:  # the standard library's registry, as a second net
        raise UnsafeTarget(RESERVED_ADDRESS, f"{shown} is not globally routable", address=ip)
    return False


def _split_authority(netloc: str, default_port: int) -> tuple[str, int]:
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            raise UnsafeTarget(INVALID, "URL has an unterminated IPv6 literal")
        host, after = netloc[: end + 1], netloc[end + 1:]
        if after and not after.startswith(":"):
            raise UnsafeTarget(INVALID, "URL has text after its IPv6 literal")
        port_text = after[1:]
    else:
        host, _, port_text = netloc.partition(":")
    if not port_text:
        return host, default_port
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise UnsafeTarget(INVALID, "URL port must be a number from 1 to 65535")
    return host, int(port_text)


def _normalize_host(raw: str) -> str:
    if raw.startswith("["):
        return _ipv6_literal(raw[1:-1])
    try:
        host = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise UnsafeTarget(INVALID, "URL host has invalid percent-escapes") from None
    host = unicodedata.normalize("NFKC", host).translate(_DOTS).rstrip(".")
    if not host:
        raise UnsafeTarget(INVALID, "URL must have a host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise UnsafeTarget(INVALID, "URL host is not a valid internationalized name") from None
    host = host.lower()
    ipv4 = _ipv4_literal(host)
    if ipv4 is not None:
        return ipv4
    labels = host.split(".")
    if len(host) > 253 or any(not 0 < len(label) < 64 or not _LABEL_CHARS.issuperset(label) for label in labels):
        raise UnsafeTarget(INVALID, "URL host is not a valid host name")
    return host


def _ipv6_literal(text: str) -> str:
    try:
        address = ipaddress.IPv6Address(text.replace("%25", "%"))  # RFC 6874 zone: [fe80::1%25eth0]
    except ValueError:
        raise UnsafeTarget(INVALID, "URL host is not a valid IPv6 address") from None
    return str(address)


def _ipv4_literal(host: str) -> str | None:
    """The address a resolver's inet_aton would read from ``host`` (``2130706433``, ``0177.0.0.1``,
    ``0x7f.1``, ``127.1``...), or None for a name. A name ending in a number that is no valid
    address is refused, as the WHATWG URL standard does, rather than left to the resolver."""
    parts = host.split(".")
    if _number(parts[-1]) is None and not parts[-1].isdigit():
        return None
    numbers = [_number(part) for part in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise UnsafeTarget(INVALID, "URL host looks like an IPv4 address but is not one")
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        raise UnsafeTarget(INVALID, "URL host looks like an IPv4 address but is out of range")
    value = last + sum(n << 8 * (3 - i) for i, n in enumerate(leading))
    return str(ipaddress.IPv4Address(value))


def _number(part: str) -> int | None:
    if part.startswith("0x"):
        digits, radix = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, radix = part[1:], 8
    else:
        digits, radix = part, 10
    if not digits:
        return 0 if radix == 16 else None
    allowed = "0123456789abcdef"[:radix]
    return int(digits, radix) if all(ch in allowed for ch in digits) else None


def _authority(scheme: str, host: str, port: int) -> str:
    host = f"[{host}]" if ":" in host else host
    return host if port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"


def _quote(text: str) -> str:
    return quote(text, safe="/%:@!$&'()*+,;=-._~?")
