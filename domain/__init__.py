"""Pure model of callwright: aggregates, events, value objects and policies.

Imports nothing from application, adapters, projections or entrypoints.
"""
