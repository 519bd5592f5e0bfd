"""Webhook URLs normalized so that every check sees the host a socket would reach (ARCHITECTURE.md
§9, SSRF); ``address_policy`` judges the host and its addresses. Pure: stdlib only, no sockets,
no resolution (the sender adapter resolves)."""

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


class UnsafeTargetError(Exception):
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
        raise UnsafeTargetError(INVALID, f"URL must be 1 to {MAX_URL_LENGTH} characters")
    # urlsplit silently drops tabs and newlines; a URL carrying them is refused, not repaired.
    if any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in url):
        raise UnsafeTargetError(INVALID, "URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise UnsafeTargetError(INVALID, f"URL cannot be parsed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme != "https" and not (scheme == "http" and allow_http):
        raise UnsafeTargetError(NOT_HTTPS, "URL must use https")
    if "@" in parts.netloc:
        raise UnsafeTargetError(CREDENTIALS, "URL must not contain credentials")
    raw_host, port = _split_authority(parts.netloc, _DEFAULT_PORTS[scheme])
    host = _normalize_host(raw_host)
    path_and_query = _quote(parts.path or "/") + (f"?{_quote(parts.query)}" if parts.query else "")
    url = f"{scheme}://{_authority(scheme, host.replace('%', '%25'), port)}{path_and_query}"
    return Target(url=url, scheme=scheme, host=host, port=port, path_and_query=path_and_query)


def _split_authority(netloc: str, default_port: int) -> tuple[str, int]:
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            raise UnsafeTargetError(INVALID, "URL has an unterminated IPv6 literal")
        host, after = netloc[: end + 1], netloc[end + 1:]
        if after and not after.startswith(":"):
            raise UnsafeTargetError(INVALID, "URL has text after its IPv6 literal")
        port_text = after[1:]
    else:
        host, _, port_text = netloc.partition(":")
    if not port_text:
        return host, default_port
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise UnsafeTargetError(INVALID, "URL port must be a number from 1 to 65535")
    return host, int(port_text)


def _normalize_host(raw: str) -> str:
    if raw.startswith("["):
        return _ipv6_literal(raw[1:-1])
    try:
        host = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise UnsafeTargetError(INVALID, "URL host has invalid percent-escapes") from None
    host = unicodedata.normalize("NFKC", host).translate(_DOTS).rstrip(".")
    if not host:
        raise UnsafeTargetError(INVALID, "URL must have a host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise UnsafeTargetError(INVALID, "URL host is not a valid internationalized name") from None
    host = host.lower()
    ipv4 = _ipv4_literal(host)
    if ipv4 is not None:
        return ipv4
    labels = host.split(".")
    if len(host) > 253 or any(not 0 < len(label) < 64 or not _LABEL_CHARS.issuperset(label) for label in labels):
        raise UnsafeTargetError(INVALID, "URL host is not a valid host name")
    return host


def _ipv6_literal(text: str) -> str:
    try:
        address = ipaddress.IPv6Address(text.replace("%25", "%"))  # RFC 6874 zone: [fe80::1%25eth0]
    except ValueError:
        raise UnsafeTargetError(INVALID, "URL host is not a valid IPv6 address") from None
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
        raise UnsafeTargetError(INVALID, "URL host looks like an IPv4 address but is not one")
    *leading, last = numbers
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(numbers)):
        raise UnsafeTargetError(INVALID, "URL host looks like an IPv4 address but is out of range")
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
