"""Calls list read model."""
