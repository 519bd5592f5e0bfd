"""Read models: one folder per view (SQL tables + tracking), its projection and its queries.

Lists, filters and exports read only these tables.
"""
