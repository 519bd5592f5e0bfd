"""The OpenAPI document as a contract, after the framework wrote it and docs.py described access and
errors: operation ids naming the client's methods, every error answer, typed outcome schemas and
an example on every body (each step in its own module)."""

from __future__ import annotations

from litestar.openapi.spec import OpenAPI

from entrypoints.http.docs_answers import describe_answers
from entrypoints.http.docs_examples import describe_examples
from entrypoints.http.docs_operations import name_operations
from entrypoints.http.docs_outcome import describe_outcome_schemas


def describe_contract(openapi: OpenAPI) -> None:
    name_operations(openapi)
    describe_answers(openapi)
    describe_outcome_schemas(openapi)
    describe_examples(openapi)  # last: from the schemas as they now stand
