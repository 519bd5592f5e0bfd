"""``Accounts``: the event-sourced Application of the accounts boundary and its lookups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from application.accounts.changes import AccountChanges
from application.head_cache import HeadCache
from application.boundary import BoundaryApplication
from application.commit_path import CommitPathFactory, direct
from application.ports import Clock, EmailSender, PasswordHasher, SessionTokens
from domain.accounts.user import EmailIndex, User


@dataclass(frozen=True, kw_only=True)
class AccountPorts:
    clock: Clock
    hasher: PasswordHasher
    sessions: SessionTokens
    email: EmailSender
    public_base_url: str


class Accounts(BoundaryApplication):
    name = "Accounts"

    def __init__(self, env: Mapping[str, str] | None = None, *, ports: AccountPorts,
                 commits: CommitPathFactory = direct) -> None:
        super().__init__(env, commits=commits)
        self.ports = ports
        self.lookups = HeadCache()
        self.changes = AccountChanges()  # fed by the HTTP server's watcher of this log
        self.on_saved(lambda position, _topics: self.changes.saved(position))

    def user_by_email(self, email: str) -> User | None:
        index = self.find(EmailIndex, EmailIndex.create_id(email))
        if index is None:
            return None
        return self.find(User, User.create_id(index.user_id))
