"""Composition root: the only package that chooses concrete adapters, and it only wires.

One ``bootstrap_*`` function per run mode builds its container once, frozen: a ``ServerContainer``
(PostgreSQL, a role, its pools) or, for unit tests, a ``Container`` (the applications and ports):

- ``bootstrap``: PostgreSQL (external or embedded), group commit, read models and reactors; what
  the tests build, and the base of the others;
- ``bootstrap_http`` (``callwright serve``), ``http_services`` (the HTTP edge's services over a
  container) and ``serving``, the HTTP app's lifespan;
- ``bootstrap_worker`` / ``bootstrap_relay`` (``callwright worker`` / ``relay``, Kafka);
- ``bootstrap_cli`` (operator commands); ``bootstrap_memory`` (popo, unit tests).
"""

from entrypoints.bootstrap.containers import Container, ServerContainer
from entrypoints.bootstrap.core import bootstrap, bootstrap_cli, bootstrap_memory, resolve_database, utc_now
from entrypoints.bootstrap.followers import SCRIPTED_SIMULATIONS, ReactorFactory, reactor_factories
from entrypoints.bootstrap.http import Served, bootstrap_http, http_services, serving
from entrypoints.bootstrap.kafka import bootstrap_relay, bootstrap_worker, kafka_reactors, relays

__all__ = [
    "SCRIPTED_SIMULATIONS",
    "Container",
    "ServerContainer",
    "ReactorFactory",
    "Served",
    "bootstrap",
    "bootstrap_cli",
    "bootstrap_http",
    "bootstrap_memory",
    "bootstrap_relay",
    "bootstrap_worker",
    "http_services",
    "kafka_reactors",
    "reactor_factories",
    "relays",
    "resolve_database",
    "serving",
    "utc_now",
]
