"""Endpoints created at once for one tenant: every one is stored and listed (a commit that lost the
race on the tenant's index is retried with a freshly built endpoint, never an emptied one)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from application.principal import API_KEY, Principal
from application.webhooks import endpoints
from domain.webhooks.endpoint import WebhookEndpoint

WHO = Principal(kind=API_KEY, tenant_id="ten_" + "7" * 32, user_id="usr_" + "7" * 32, verification_status="approved",
                tier="standard", key_id="key_race")


def test_concurrent_creates_all_reach_the_list(container):
    def create(n: int) -> str:
        endpoint, _ = endpoints.create(container.calling, WHO, container.secret_box, url=f"https://hooks.example/{n}",
                                       description=None, events=["call.completed"])
        return endpoint.endpoint_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        created = set(pool.map(create, range(24)))
    listed = {endpoint.endpoint_id for endpoint in endpoints.listing(container.calling, WHO.tenant_id)}
    assert listed == created and len(created) == 24
    for endpoint_id in created:
        assert container.calling.find(WebhookEndpoint, WebhookEndpoint.id_of(endpoint_id)) is not None
