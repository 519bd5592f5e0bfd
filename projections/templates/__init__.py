"""``templates_v1``: a tenant's templates for listing."""
