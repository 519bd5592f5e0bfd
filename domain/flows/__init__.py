"""Flows (SPEC.md Flow): a customer's conversation graph, checked and compiled into the artifact a call runs."""
