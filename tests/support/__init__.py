"""Helpers shared by the test suites: aggregate scenarios, domain builders, application set-up."""
