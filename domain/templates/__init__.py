"""Templates: reusable call configurations (SPEC.md Template)."""
