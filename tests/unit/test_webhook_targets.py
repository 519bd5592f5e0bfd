"""The SSRF policy for webhook URLs (ARCHITECTURE.md §9; SPEC.md Events §9: HTTPS, publicly
routable; private, loopback, link-local and cloud-metadata targets refused)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.webhooks.address_policy import check_address, check_host
from domain.webhooks.targets import (
    CREDENTIALS,
    INVALID,
    METADATA,
    NOT_HTTPS,
    PRIVATE_ADDRESS,
    RESERVED_ADDRESS,
    UnsafeTargetError,
    parse_target,
)


def refusal(call, *args, **kwargs) -> UnsafeTargetError:
    with pytest.raises(UnsafeTargetError) as caught:
        call(*args, **kwargs)
    return caught.value


def host_refusal(url: str, *, allow_private: bool = False) -> UnsafeTargetError:
    return refusal(check_host, parse_target(url).host, allow_private=allow_private)


# --- URL shape ---------------------------------------------------------------------------------

def test_https_url_is_normalized_and_fragment_dropped() -> None:
    target = parse_target("  HTTPS://Hooks.Example.COM:443/in/bound?x=1&y=%20#secret  ")
    assert (target.scheme, target.host, target.port) == ("https", "hooks.example.com", 443)
    assert target.path_and_query == "/in/bound?x=1&y=%20"
    assert target.url == "https://hooks.example.com/in/bound?x=1&y=%20"
    assert target.host_header == "hooks.example.com"
    assert target.literal_address is None


def test_non_default_port_is_kept_in_url_and_host_header() -> None:
    target = parse_target("https://hooks.example.com:8443")
    assert target.url == "https://hooks.example.com:8443/"
    assert target.host_header == "hooks.example.com:8443"


@pytest.mark.parametrize("url", ["http://hooks.example.com/", "ftp://hooks.example.com/", "file:///etc/passwd",
                                 "gopher://hooks.example.com/", "hooks.example.com/path", "//hooks.example.com/"])
def test_only_https_is_accepted(url: str) -> None:
    assert refusal(parse_target, url).code == NOT_HTTPS


def test_http_is_accepted_only_with_the_development_flag() -> None:
    assert parse_target("http://hooks.example.com/", allow_http=True).port == 80
    assert refusal(parse_target, "http://hooks.example.com/").code == NOT_HTTPS


@pytest.mark.parametrize("url", ["https://user:pass@hooks.example.com/", "https://user@hooks.example.com/",
                                 "https://@hooks.example.com/", "https://hooks.example.com\\@127.0.0.1/",
                                 "https://token:@hooks.example.com:8443/"])
def test_credentials_in_the_url_are_refused(url: str) -> None:
    assert refusal(parse_target, url).code == CREDENTIALS


@pytest.mark.parametrize("url", [
    "https:///path", "https://:443/", "https://", "https://.", "https://a..b/", "https://-bad_" + "x" * 64 + ".com/",
    "https://hooks.example.com:0/", "https://hooks.example.com:65536/", "https://hooks.example.com:１/",
    "https://hooks.example.com:https/", "https://::1/", "https://[::1/", "https://[::1]x/", "https://[127.0.0.1]/",
    "https://hooks.exa mple.com/", "https://hooks.example.com/\npath", "https://hooks.example.com/\tx",
    "https://hooks\u200b.example.com/", "https://%ff.example.com/", "https://[v1.fe]/",
])
def test_malformed_urls_are_refused(url: str) -> None:
    assert refusal(parse_target, url).code == INVALID


def test_url_length_is_limited_to_2048() -> None:
    base = "https://hooks.example.com/"
    assert parse_target(base + "a" * (2048 - len(base))).url.endswith("a")
    assert refusal(parse_target, base + "a" * (2049 - len(base))).code == INVALID


def test_non_ascii_path_is_percent_encoded() -> None:
    assert parse_target("https://hooks.example.com/ü?q=ä").path_and_query == "/%C3%BC?q=%C3%A4"


# --- host normalization --------------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "https://hooks.example.com./", "https://hooks.example.com../", "https://ｈｏｏｋｓ．ｅｘａｍｐｌｅ．ｃｏｍ/",
    "https://hooks。example。com/", "https://hooks｡example｡com/", "https://HOOKS.example.com。/",
])
def test_trailing_fullwidth_and_ideographic_dots_normalize_to_one_host(url: str) -> None:
    assert parse_target(url).host == "hooks.example.com"


def test_internationalized_host_becomes_idna_ascii() -> None:
    assert parse_target("https://Bücher.example/").host == "xn--bcher-kva.example"


@pytest.mark.parametrize("host", [
    "2130706433", "0177.0.0.1", "0x7f.1", "0x7F.0.0.1", "127.1", "127.0.1", "0x7f000001", "017700000001",
    "127.0.0.1.", "１２７．０．０．１", "127。0。0。1", "%31%32%37.0.0.1", "0177.0x0.0.01",
])
def test_ipv4_literals_in_every_resolver_form_are_read_as_their_address(host: str) -> None:
    target = parse_target(f"https://{host}/")
    assert target.host == target.literal_address == "127.0.0.1"
    assert refusal(check_host, target.host).code == PRIVATE_ADDRESS


@pytest.mark.parametrize("host", ["1.2.3.4.5", "256.0.0.1", "1.2.3.256", "1.2.65536", "08.0.0.1", "0x1g.0.0.1",
                                  "hooks.example.123", "4294967296", "1..2.3"])
def test_hosts_ending_in_a_number_must_be_valid_ipv4(host: str) -> None:
    assert refusal(parse_target, f"https://{host}/").code == INVALID


def test_a_name_that_merely_starts_like_hex_is_a_name() -> None:
    assert parse_target("https://0x1g.example/").literal_address is None


@pytest.mark.parametrize(("url", "host"), [
    ("https://[::1]/", "::1"), ("https://[0:0:0:0:0:0:0:1]:8443/", "::1"),
    ("https://[fe80::1%25eth0]/", "fe80::1%eth0"), ("https://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
])
def test_bracketed_ipv6_literals_are_read_as_their_address(url: str, host: str) -> None:
    assert parse_target(url).host == host


def test_zone_id_stays_out_of_the_host_header() -> None:
    target = parse_target("https://[fe80::1%25eth0]:8443/")
    assert target.url == "https://[fe80::1%25eth0]:8443/"
    assert target.host_header == "[fe80::1]:8443"


# --- host names ----------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["https://metadata.google.internal/", "https://METADATA.google.internal./",
                                 "https://metadata/", "https://instance-data/", "https://metadata.goog/",
                                 "https://instance-data.ec2.internal/", "https://ｍｅｔａｄａｔａ。google。internal/"])
def test_metadata_names_are_refused_even_in_development(url: str) -> None:
    assert host_refusal(url).code == METADATA
    assert host_refusal(url, allow_private=True).code == METADATA


@pytest.mark.parametrize("url", ["https://localhost/", "https://localhost./", "https://api.localhost/",
                                 "https://db.internal/", "https://printer.local/", "https://box.localdomain/",
                                 "https://nas.home.arpa/", "https://intranet/"])
def test_local_names_are_refused_unless_in_development(url: str) -> None:
    assert host_refusal(url).code == PRIVATE_ADDRESS
    check_host(parse_target(url).host, allow_private=True)


def test_public_names_pass_the_name_check() -> None:
    check_host(parse_target("https://hooks.example.com/").host)


# --- addresses -----------------------------------------------------------------------------------

PUBLIC = ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:82a::200e",
          "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]
PRIVATE = [  # refused, but let through by allow_private (development)
    "127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.1.1",
    "100.64.0.1", "100.127.255.254", "::1", "fe80::1", "fe80::1%eth0", "fe80::1%1", "fc00::1", "fd12:3456::1",
    "fec0::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1", "64:ff9b::c0a8:101", "2002:7f00:1::1",
    "2002:a00:1::", "::ffff:100.64.0.1",
]
RESERVED = [  # refused always
    "0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1", "192.0.0.8",
    "192.0.2.1", "198.51.100.1", "203.0.113.1", "198.18.0.1", "198.19.255.255", "192.88.99.1", "::", "ff02::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::1", "64:ff9b:1::808:808", "100::1", "2001:db8::1", "3fff::1",
    "2001:2::1", "2001:10::1", "4000::1", "::8.8.8.8", "::ffff:0.0.0.0", "64:ff9b::e000:1",
    "2002:c000:201::",
]
METADATA_ADDRESSES = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254",
                      "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::ffff:100.100.100.200"]


@pytest.mark.parametrize("ip", PUBLIC)
def test_public_addresses_pass(ip: str) -> None:
    check_address(ip)


@pytest.mark.parametrize("ip", PRIVATE)
def test_private_loopback_link_local_cgnat_unique_local_and_embedded_forms_are_refused(ip: str) -> None:
    problem = refusal(check_address, ip)
    assert (problem.code, problem.address) == (PRIVATE_ADDRESS, ip)
    assert ip in problem.message
    check_address(ip, allow_private=True)


@pytest.mark.parametrize("ip", RESERVED)
def test_reserved_multicast_documentation_and_tunnel_addresses_are_refused_even_in_development(ip: str) -> None:
    assert refusal(check_address, ip).code == RESERVED_ADDRESS
    assert refusal(check_address, ip, allow_private=True).code == RESERVED_ADDRESS


@pytest.mark.parametrize("ip", METADATA_ADDRESSES)
def test_metadata_addresses_are_refused_even_in_development(ip: str) -> None:
    assert refusal(check_address, ip).code == METADATA
    assert refusal(check_address, ip, allow_private=True).code == METADATA


def test_ipv4_compatible_form_is_judged_by_its_address_then_refused_as_deprecated() -> None:
    assert refusal(check_address, "::127.0.0.1").code == PRIVATE_ADDRESS
    assert refusal(check_address, "::127.0.0.1", allow_private=True).code == RESERVED_ADDRESS


def test_embedded_address_is_named_in_the_message() -> None:
    assert "NAT64 form of 127.0.0.1" in refusal(check_address, "64:ff9b::7f00:1").message


@pytest.mark.parametrize("text", ["", "localhost", "0177.0.0.1", "127.1", "::ffff:127.0.0.1:80", "1.2.3.4/32"])
def test_non_canonical_addresses_are_refused_as_invalid(text: str) -> None:
    assert refusal(check_address, text).code == "webhook_url_invalid"


@pytest.mark.parametrize(("url", "code"), [
    ("https://[::ffff:169.254.169.254]/", METADATA), ("https://[fe80::1%25eth0]/", PRIVATE_ADDRESS),
    ("https://[64:ff9b::7f00:1]/", PRIVATE_ADDRESS), ("https://[2002:7f00:1::]/", PRIVATE_ADDRESS),
    ("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", RESERVED_ADDRESS), ("https://[fd00::1]/", PRIVATE_ADDRESS),
    ("https://2852039166/", METADATA), ("https://0xa9.0xfe.0xa9.0xfe/", METADATA), ("https://0/", RESERVED_ADDRESS),
])
def test_literal_hosts_are_judged_by_their_address(url: str, code: str) -> None:
    assert host_refusal(url).code == code


# --- properties ----------------------------------------------------------------------------------

addresses_v4 = st.integers(min_value=0, max_value=2**32 - 1)


@given(addresses_v4, st.sampled_from(["decimal", "hex", "octal-dotted", "short"]))
def test_every_inet_aton_spelling_reads_as_the_same_address(value: int, spelling: str) -> None:
    a, b, c, d = ipaddress.IPv4Address(value).packed
    host = {"decimal": str(value), "hex": hex(value), "octal-dotted": f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
            "short": f"{a}.{(b << 16) | (c << 8) | d}"}[spelling]
    assert parse_target(f"https://{host}/").host == str(ipaddress.IPv4Address(value))


NON_PUBLIC_V4 = [ipaddress.ip_network(n) for n in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                                                   "169.254.0.0/16", "100.64.0.0/10", "0.0.0.0/8", "224.0.0.0/4")]


@given(st.sampled_from(NON_PUBLIC_V4), st.integers(min_value=0, max_value=2**32 - 1),
       st.sampled_from(["plain", "mapped", "nat64", "6to4"]))
def test_no_embedding_smuggles_a_non_public_ipv4_address(network, offset: int, form: str) -> None:
    v4 = network.network_address + offset % network.num_addresses
    ip = {"plain": str(v4), "mapped": f"::ffff:{v4}", "nat64": f"64:ff9b::{v4}",
          "6to4": str(ipaddress.IPv6Address((0x2002 << 112) | (int(v4) << 80) | 1))}[form]
    with pytest.raises(UnsafeTargetError):
        check_address(ip)


@given(st.text(max_size=80))
def test_check_address_only_ever_raises_unsafe_target(text: str) -> None:
    try:
        check_address(text)
    except UnsafeTargetError:
        pass


@given(st.text(max_size=60), st.sampled_from(["https://", "https://[", "http://", ""]))
def test_parse_target_only_raises_unsafe_target_and_is_idempotent(text: str, prefix: str) -> None:
    try:
        target = parse_target(prefix + text)
    except UnsafeTargetError:
        return
    assert parse_target(target.url) == target
