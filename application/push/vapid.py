"""The VAPID key pair: made on first need by whichever process needs it first (the others read
it), the private key sealed before it is saved and opened only to sign."""

from __future__ import annotations

from application.calling.app import Calling
from application.errors import ConflictError
from application.push.ports import PushPorts, VapidKeyPair
from domain.push.vapid import VapidKeys


def _keys(calling: Calling, ports: PushPorts) -> VapidKeys:
    keys = calling.find(VapidKeys, VapidKeys.create_id())
    if keys is not None:
        return keys
    made = ports.new_vapid_keys()
    keys = VapidKeys(public_key=made.public_key, sealed_private_key=ports.box.seal(made.private_key),
                     at=calling.ports.clock())
    try:
        calling.commit(keys)
    except ConflictError:  # another process made them first: theirs are the keys
        found = calling.find(VapidKeys, VapidKeys.create_id())
        assert found is not None
        return found
    return keys


def public_key(calling: Calling, ports: PushPorts) -> str:
    return _keys(calling, ports).public_key


def key_pair(calling: Calling, ports: PushPorts) -> VapidKeyPair:
    keys = _keys(calling, ports)
    return VapidKeyPair(public_key=keys.public_key, private_key=ports.box.open(keys.sealed_private_key))
