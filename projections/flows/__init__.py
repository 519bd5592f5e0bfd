"""``flows_v1``: a tenant's flows in every state, for listing."""
