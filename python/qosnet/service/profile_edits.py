"""Edits of the profile store, as pure functions: the store that an upload or a
declaration makes of the current one, or `Invalid` naming what is wrong. The handler
persists the result (`RequestHandler._install_profiles`).

Application names entering over the API are checked whole against `APPLICATION_NAME`:
the profiles' own pattern is matched unanchored, so `"a b"` or `"9a"` passed it.
"""

from __future__ import annotations

import re
from typing import Any

from qosnet.middleware.errors import InvalidData, parse
from qosnet.middleware.profile_io import from_csv, from_json
from qosnet.middleware.profiles import Application, ProfileStore
from qosnet.service.errors import Invalid, NotFound
from qosnet.service.schemas import APPLICATION_NAME, APPLICATION_NAME_MAX

__all__ = [
    "check_application_name",
    "from_upload_csv",
    "from_upload_json",
    "with_application",
    "without_application",
]


def check_application_name(name: str, field_name: str) -> None:
    if len(name) > APPLICATION_NAME_MAX or not re.fullmatch(APPLICATION_NAME, name):
        raise Invalid.field(
            field_name,
            "must be a letter, then letters, digits or underscores "
            f"(at most {APPLICATION_NAME_MAX}), got {name!r}",
        )


def _parsed(kind: Any, data: Any) -> Any:
    try:
        return parse(kind, data)
    except InvalidData as e:
        raise Invalid.from_data(e) from None


def from_upload_json(text: str) -> ProfileStore:
    """A whole store from its JSON."""
    try:
        store = from_json(text)
    except InvalidData as e:
        raise Invalid.from_data(e) from None
    for i, app in enumerate(store.applications):
        check_application_name(app.name, f"applications[{i}].name")
    return store


def from_upload_csv(current: ProfileStore, text: str) -> ProfileStore:
    """`current` with the curves of the applications the CSV names replaced by its own."""
    try:
        uploaded = from_csv(text, current.applications, source="upload")
    except InvalidData as e:
        raise Invalid.from_data(e) from None
    names = {c.application for c in uploaded.curves}
    kept = tuple(c for c in current.curves if c.application not in names)
    return _parsed(
        ProfileStore, {"applications": current.applications, "curves": kept + uploaded.curves}
    )


def with_application(current: ProfileStore, name: str, data: Any) -> ProfileStore:
    """`current` with the application `name` declared (or redeclared) as `data`; its
    curves stay, and must still fit it."""
    check_application_name(name, "name")
    app: Application = _parsed(Application, data)
    if app.name != name:
        raise Invalid.field(
            "name", f"must be {name!r} (the application in the URL), got {app.name!r}"
        )
    apps = [a for a in current.applications if a.name != name] + [app]
    return _parsed(ProfileStore, {"applications": apps, "curves": current.curves})


def without_application(current: ProfileStore, name: str) -> ProfileStore:
    """`current` without the application `name` and its curves."""
    if not any(a.name == name for a in current.applications):
        raise NotFound(f"application {name!r} does not exist")
    return ProfileStore(
        applications=tuple(a for a in current.applications if a.name != name),
        curves=tuple(c for c in current.curves if c.application != name),
    )
