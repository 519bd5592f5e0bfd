"""Kafka adapter: the event envelope and a publisher over aiokafka (ARCHITECTURE.md §6)."""
