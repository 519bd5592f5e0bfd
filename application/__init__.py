"""Use cases over the event-sourced Applications, the ports they need, and their errors.

Imports domain only; never a web framework, a database driver or a vendor SDK.
"""
