"""Schema-driven fuzzing of the HTTP API (schemathesis over the OpenAPI document): every
operation, with generated valid and invalid parameters and bodies, as an admin, on SQLite
and on PostgreSQL. No answer may be a 5xx, and every error is a problem document.

Bounded for CI: `FUZZ_EXAMPLES` cases per operation, about 200 requests per database in a
few seconds, the same cases every run; `QOSNET_FUZZ_EXAMPLES=500 pytest
tests/test_service_fuzz.py` runs longer on demand, with new cases each time. Some
generated cases drop the token on purpose (schemathesis' negative security cases): those
must answer 401, not fail.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from qosnet.service.app import create_app
from qosnet.service.handler import RequestHandler
from qosnet.service.settings import Settings
from qosnet.service.testing import FakeClock

FUZZ_EXAMPLES = int(os.environ.get("QOSNET_FUZZ_EXAMPLES", "10"))
#: CI's run is the same every time; a longer run on demand draws new cases.
DERANDOMIZE = "QOSNET_FUZZ_EXAMPLES" not in os.environ
#: A run that made fewer requests than this fuzzed nothing worth the name.
LEAST_CASES = 150


class Fuzzed:
    """The app under fuzzing, an admin token kept valid (a generated request may revoke
    it), and the statuses answered."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.handler: RequestHandler = app.state.handler
        self.token = self.handler.create_token("root", "admin")[1]
        self.statuses: Counter[int] = Counter()

    def headers(self) -> dict[str, str]:
        if self.handler.authenticate(self.token) is None:
            self.token = self.handler.create_token(f"root{uuid.uuid4().hex[:8]}", "admin")[1]
        return {"Authorization": f"Bearer {self.token}"}

    def check(self, case: Any) -> None:
        response = case.call(headers=self.headers())
        self.statuses[response.status_code] += 1
        where = (case.method, case.formatted_path, response.text[:500])
        assert response.status_code < 500, where
        if response.status_code >= 400:
            assert response.headers["content-type"] == ["application/problem+json"], where
            problem = response.json()
            assert problem["type"].startswith("/problems/") and problem["detail"], where


@pytest.fixture(params=["sqlite", "postgresql"])
def fuzzed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Fuzzed]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/qosnet.db"
    else:
        url = request.getfixturevalue("postgres").create_database(f"f_{uuid.uuid4().hex[:12]}")
    # a small body cap, so that generated bodies meet it too
    settings = Settings(db_url=url, clock=FakeClock(), sweep_seconds=0, max_body_bytes=65536)
    app = create_app(settings)
    state = Fuzzed(app)
    yield state
    state.handler.close()


def test_no_server_errors(fuzzed: Fuzzed) -> None:
    """Every operation, `FUZZ_EXAMPLES` cases each of data that fits the schema and of
    data that does not. (schemathesis' own pytest integration, `schema.parametrize`,
    needs the schema at import time, or pytest internals that pytest 9 removed.)"""
    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzzed.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:
        cases = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE),
            operation.as_strategy(GenerationMode.NEGATIVE),
        )

        @given(case=cases)
        @settings(
            max_examples=FUZZ_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=DERANDOMIZE,
            database=None,
        )
        def call(case: Any) -> None:
            fuzzed.check(case)

        call()
    total = sum(fuzzed.statuses.values())
    print(f"\n{total} requests: {dict(sorted(fuzzed.statuses.items()))}")
    assert total >= LEAST_CASES, fuzzed.statuses
