"""The OpenAPI document and a real ``serve --store`` agree both ways (issue 31), checked by schemathesis, bounded
(a fixed number of generated requests per route, derandomized): every request the document calls valid is
accepted or refused only for a documented reason of state (401/403/409/429), every answer has a documented
status, content type, headers and shape, and no request is a 5xx.

One exception, by design: a submission's predictions must hold every id of the hidden test set, which no
public document can list (the ids come with the labels), so a generated submission is refused with 400
naming the ids; its answer is still checked against the document."""
from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from schemathesis.checks import positive_data_acceptance  # noqa: E402

from meter_dashboard.testsets import service as S  # noqa: E402
from meter_dashboard.testsets import signals as G  # noqa: E402
from meter_dashboard.testsets.openapi import document  # noqa: E402
from meter_dashboard.testsets.store import Store  # noqa: E402
from tests.testsets.conftest import Data  # noqa: E402
from tests.testsets.serving import Server  # noqa: E402

schema = schemathesis.openapi.from_dict(document())
ADMIN_ROUTES = ("/tokens", "/revert", "/retire")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("schemathesis")
    url = f"sqlite:///{root / 'store.sqlite'}"
    store, data = Store(url), Data(n=300)
    admin = S.create(store, "m", data.labels_csv(), G.meter_settings(epsilon=[0.05, 0.1], delta=0.1, steps=10_000),
                     allow_smaller=True)["admin_token"]
    tenant = S.issue_token(store, "m", "ann")["token"]
    store.dispose()
    server = Server(url, root / "logs", pages="planner")
    yield {"base": server.base, "admin": admin, "tenant": tenant}
    server.stop()
    assert "Traceback" not in server.log_text()


@schema.parametrize()
@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
def test_the_server_and_the_document_agree(case, world):
    invalid = {str(getattr(where, "value", where)) for where, info in (case.meta.components if case.meta else {}).items()
               if str(getattr(info.mode, "value", info.mode)) == "negative"}  # the parts made invalid on purpose
    if "name" in (case.path_parameters or {}) and "path" not in invalid:
        case.path_parameters["name"] = "m"  # the routes of one real test set, with its real tokens
    headers = {}
    if "header" not in invalid:
        headers["Authorization"] = "Bearer " + (world["admin"] if case.operation.path.endswith(ADMIN_ROUTES)
                                                else world["tenant"])
    response = case.call(base_url=world["base"], headers=headers, timeout=60)
    assert response.status_code < 500, response.text[:300]
    secret_ids = case.operation.path.endswith("/submissions") and response.status_code == 400
    case.validate_response(response, excluded_checks=[positive_data_acceptance] if secret_ids else [])
