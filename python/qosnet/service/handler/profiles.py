"""The application profiles (document 001 §3.3) the translator reads: installed whole or
edited, each change a new profiles version in the database.
"""

from __future__ import annotations

import logging
from typing import Any

from qosnet.middleware.profile_io import to_json
from qosnet.middleware.profiles import Application, ProfileStore
from qosnet.service.db import ProfilesRow
from qosnet.service.handler.core import HandlerCore
from qosnet.service.profile_edits import (
    from_upload_csv,
    from_upload_json,
    with_application,
    without_application,
)

log = logging.getLogger("qosnet.service")


class Profiles(HandlerCore):
    """The profiles store: read, replaced whole, or edited one application at a time."""

    def profiles(self) -> ProfileStore:
        self._ensure_fresh()
        with self._lock:
            return self.store

    def _install_profiles(self, store: ProfileStore) -> ProfileStore:
        data = to_json(store)
        with self._write() as txn:
            row = txn.session.get(ProfilesRow, 1)
            assert row is not None
            row.data, row.updated_at = data, self.clock()
            txn.state.profiles_version += 1
            txn.dirty = True
            self._store = store
        log.info(
            "profiles installed: %d applications, %d curves",
            len(store.applications),
            len(store.curves),
        )
        return store

    def set_profiles_json(self, text: str) -> ProfileStore:
        """Replace the whole store."""
        return self._install_profiles(from_upload_json(text))

    def set_profiles_csv(self, text: str) -> ProfileStore:
        """Replace the curves of the applications named in the CSV; keep the others."""
        return self._install_profiles(from_upload_csv(self.profiles(), text))

    def put_application(self, name: str, data: Any) -> Application:
        """Add or replace an application (its declared parameters and pattern); its curves
        stay, and must still fit it."""
        store = self._install_profiles(with_application(self.profiles(), name, data))
        return store.application(name)

    def delete_application(self, name: str) -> None:
        self._install_profiles(without_application(self.profiles(), name))
