"""Templates: defining, reading, deleting, and filling a call request from one."""
