"""What each role runs and the connections it may hold (entrypoints/bootstrap/roles.py)."""

from __future__ import annotations

import pytest

from entrypoints.bootstrap.roles import POOLS, ROLES, http_role, worker_role

POSTGRES_DEFAULT = 100 - 3  # max_connections less the superuser reserve


def test_compose_with_three_workers_fits_postgres_default_max_connections():
    compose = [ROLES[name].pools() for name in ("api", "worker", "worker", "worker", "projector", "relay")]
    assert sum(sum(pools.values()) for pools in compose) == 74 <= POSTGRES_DEFAULT


def test_two_of_every_scaled_role_fit_too():
    pairs = [ROLES[name].pools() for name in ("api", "worker", "projector", "relay") for _ in range(2)]
    assert sum(sum(pools.values()) for pools in pairs) == 96 <= POSTGRES_DEFAULT


def test_a_budget_scales_every_pool_and_keeps_the_fixed_ones():
    pools = ROLES["api"].pools(10)
    assert sum(pools.values()) == 10
    assert pools["readiness"] == 2 and all(size >= 1 for size in pools.values())
    assert set(pools) == set(POOLS["api"])
    assert sum(ROLES["worker"].pools(40).values()) == 40


def test_a_budget_below_one_connection_per_pool_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="too few for the worker role"):
        ROLES["worker"].pools(3)


def test_the_command_options_choose_the_role():
    assert worker_role(projections=False, reactors=True, kafka=True).name == "worker"
    assert worker_role(projections=False, reactors=True, kafka=True).reactors == "kafka"
    assert worker_role(projections=False, reactors=True, kafka=False).reactors == "log"
    assert worker_role(projections=True, reactors=False, kafka=True).name == "projector"
    assert not worker_role(projections=True, reactors=False, kafka=True).jobs  # the projector: views only
    assert http_role(followers=False, kafka=True).views == "watch"
    assert http_role(followers=True, kafka=False).jobs
    assert not http_role(followers=True, kafka=True).jobs
    assert "views" in worker_role(projections=False, reactors=True, kafka=False).pools()  # log-fed tracking
