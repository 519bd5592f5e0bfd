"""Reads of ``api_keys_v1``: a tenant's keys with their status, never a secret."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from domain.timestamps import iso


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
            "created_at": iso(row["created_at"]),
            "expires_at": iso(row["expires_at"]),
            "revoked_at": iso(row["revoked_at"]),
            "rotated_to": row["rotated_to"],
            "rotated_from": row["rotated_from"],
            "last_used_during_grace_at": iso(row["last_used_during_grace_at"]),
        }
        for row in rows
    ]
