"""Reads of ``api_keys_v1``: a tenant's keys with their status, never a secret."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool


def _iso(value: datetime | None) -> str | None:
    # The session time zone decides how timestamptz comes back; the wire is always UTC.
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z") if value is not None else None


def _status(row: dict[str, Any], now: datetime) -> str:
    if row["revoked_at"] is not None:
        return "revoked"
    if row["expires_at"] is not None:
        return "expired" if now >= row["expires_at"] else "rotated"
    return "active"


async def list_api_keys(pool: AsyncConnectionPool, *, tenant_id: str, now: datetime) -> list[dict[str, Any]]:
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT * FROM api_keys_v1 WHERE tenant_id = %s ORDER BY created_at DESC, key_id", (tenant_id,), prepare=True
        )
        rows = await cur.fetchall()
    return [
        {
            "key_id": row["key_id"],
            "name": row["name"],
            "prefix": row["prefix"],
            "scopes": row["scopes"],
            "number_ids": row["number_ids"],
            "status": _status(row, now),
            "created_at": _iso(row["created_at"]),
            "expires_at": _iso(row["expires_at"]),
            "revoked_at": _iso(row["revoked_at"]),
            "rotated_to": row["rotated_to"],
            "rotated_from": row["rotated_from"],
            "last_used_during_grace_at": _iso(row["last_used_during_grace_at"]),
        }
        for row in rows
    ]
