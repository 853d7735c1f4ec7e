"""The API as a contract (issue 20): the OpenAPI 3.1 document served at /api/openapi.json validates
(openapi-spec-validator) and matches what a real ``serve --store`` answers - every route, every declared
status code, the request and response shapes, the error body and the limits - and the CLI's
``--format json`` output is documented by the same schemas."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec

from meter_dashboard.cli import main
from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.openapi import CLI_SCHEMAS, LIMITS, document
from meter_dashboard.testsets.store import Store
from tests.testsets.attacks import Raw
from tests.testsets.conftest import Data
from tests.testsets.postgres import _free_port
from tests.testsets.serving import Server

EPS = [0.05, 0.1]


class Recorder:
    """Sends requests to a server and keeps (method, path, status, content type, body, request) of each."""

    def __init__(self, base: str):
        self.base, self.seen = base, []

    def __call__(self, method, path, body=None, token=None, content_type="application/json", raw: bytes | None = None,
                 key: str | None = None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        if key:
            request.add_header("Idempotency-Key", key)
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                status, headers, text = response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, headers, text = exc.code, exc.headers, exc.read().decode()
        kind = headers.get("Content-Type", "").split(";")[0]
        self.seen.append({"method": method.lower(), "path": path.split("?")[0], "status": status, "type": kind,
                          "text": text, "request": body, "request_type": content_type if data is not None else None})
        return status, (json.loads(text) if kind == "application/json" else text)

    def raw(self, method, path, body: bytes, length: int, token=None):
        """A body whose declared size is over the limit: sent with a client that reads while it sends."""
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
        answer = Raw(self.base).request(method, path, headers, body, length=length)
        kind = answer.headers.get("content-type", "").split(";")[0]
        self.seen.append({"method": method.lower(), "path": path, "status": answer.status, "type": kind,
                          "text": answer.body.decode(), "request": None, "request_type": None})
        return answer.status, answer.json()


def check(doc: dict, schema: dict, instance) -> None:
    OAS31Validator({**schema, "components": doc["components"]}).validate(instance)


def template_of(doc: dict, path: str) -> str:
    for template in doc["paths"]:
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")),
                        path):
            return template
    raise AssertionError(f"no documented route for {path}")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("openapi")
    url = f"sqlite:///{root / 'store.sqlite'}"
    store, data = Store(url), Data(n=2000)
    server = Server(url, root, pages="planner")
    yield {"url": url, "store": store, "data": data, "server": server, "root": root}
    server.stop()
    store.dispose()


def exercise(served, call) -> None:
    """Every route, and every status code the document declares for it."""
    store, data = served["store"], served["data"]
    meter = G.meter_settings(epsilon=EPS, delta=0.1, steps=6, reverts=[1], submissions_per_hour=3)
    admin = S.create(store, "m", data.labels_csv(), meter, allow_smaller=True)["admin_token"]
    ci = G.ci_settings(condition="n > 0.8 +/- 0.05", reliability=0.99, adaptivity="full", steps=3)
    ci_admin = S.create(store, "c", data.labels_csv(), ci, allow_smaller=True)["admin_token"]
    call("GET", "/api/testsets"), call("GET", "/api/health"), call("GET", "/api/openapi.json")
    assert call("POST", "/api/testsets/m/tokens", {"tenant": "ann"}, admin)[0] == 200
    ann = store_token(call, "m", admin, "bob")
    good = {"predictions": data.mapping(data.predictions(100)), "val_accuracy": 0.96}
    assert call("POST", "/api/testsets/m/submissions", good, ann, key="k1")[0] == 200
    assert call("POST", "/api/testsets/m/submissions", good, ann, key="k1")[0] == 200  # a retry: nothing spent
    other = {**good, "val_accuracy": 0.9}
    assert call("POST", "/api/testsets/m/submissions", other, ann, key="k1")[0] == 422  # the key, other data
    assert call("POST", "/api/testsets/m/submissions", {"predictions": [1]}, ann)[0] == 400
    assert call("POST", "/api/testsets/m/revert", None, admin, raw=b"null")[0] == 400  # not an empty body
    assert call("POST", "/api/testsets/m/revert", {}, admin)[0] == 200
    csv = data.csv(data.predictions(120))
    assert call("POST", "/api/testsets/m/submissions?val_accuracy=0.95", None, ann, "text/csv", raw=csv)[0] == 200
    assert call("POST", "/api/testsets/m/submissions", good, ann)[0] == 200
    assert call("POST", "/api/testsets/m/submissions", good, ann)[0] == 429  # 3 per hour
    for path in ("/api/testsets/m", "/api/testsets/m/submissions", "/api/testsets/m/tokens", "/api/testsets/m/revert",
                 "/api/testsets/m/retire", "/api/testsets/m/export", "/api/testsets/m/labels"):
        method = "GET" if path.endswith(("m", "export", "labels")) else "POST"
        assert call(method, path, None if method == "GET" else {}, None)[0] == 401
    call("GET", "/api/testsets/m", None, ann)
    assert call("POST", "/api/testsets/m/submissions", good, admin)[0] == 403
    assert call.raw("POST", "/api/testsets/m/submissions", b" " * 1024, LIMITS["max_submission_bytes"] + 1, ann)[0] == 413
    assert call("POST", "/api/testsets/m/tokens", {"tenant": "no spaces"}, admin)[0] == 400
    assert call("POST", "/api/testsets/m/tokens", {"tenant": "eve"}, ann)[0] == 403
    assert call("POST", "/api/testsets/m/tokens", None, admin, raw=b" " * 70_000)[0] == 413
    assert call("POST", "/api/testsets/m/revert", {}, ann)[0] == 403
    assert call("POST", "/api/testsets/m/revert", {}, admin)[0] == 409  # the one planned revert is used
    assert call("GET", "/api/testsets/m/export", None, ann)[0] == 409  # active
    assert call("GET", "/api/testsets/m/labels", None, ann)[0] == 409
    assert call("POST", "/api/testsets/m/retire", {}, ann)[0] == 403
    assert call("POST", "/api/testsets/m/retire", None, admin, raw=b"null")[0] == 400
    assert call("POST", "/api/testsets/m/retire", {}, admin)[0] == 200
    assert call("POST", "/api/testsets/m/retire", {}, admin)[0] == 409
    assert call("POST", "/api/testsets/m/submissions", good, ann)[0] == 409  # retired
    for fmt in ("json", "csv"):
        assert call("GET", f"/api/testsets/m/export?format={fmt}", None, ann)[0] == 200
    assert call("GET", "/api/testsets/m/export?format=xml", None, ann)[0] == 400
    assert call("GET", "/api/testsets/m/labels", None, ann)[0] == 200
    gate = store_token(call, "c", ci_admin, "bot")
    assert call("POST", "/api/testsets/c/submissions", {"predictions": data.mapping(data.labels)}, gate)[0] == 200
    call("GET", "/api/testsets/c", None, ci_admin)


def store_token(call, name, admin, tenant) -> str:
    status, out = call("POST", f"/api/testsets/{name}/tokens", {"tenant": tenant}, admin)
    assert status == 200
    return out["token"]


def test_the_document_validates_and_is_what_the_server_serves(served):
    doc = document()
    validate_spec(doc)  # raises on any error
    with urllib.request.urlopen(served["server"].base + "/api/openapi.json", timeout=60) as response:
        assert json.loads(response.read()) == doc
    assert doc["x-limits"]["max_submission_bytes"] == 100 * 1024 * 1024 and doc["x-limits"]["max_body_bytes"] == 65536
    assert set(doc["x-cli-schemas"].values()) <= set(doc["components"]["schemas"])


def test_every_route_and_status_matches_the_document(served):
    doc = document()
    call = Recorder(served["server"].base)
    exercise(served, call)
    observed = {}
    for seen in call.seen:
        template = template_of(doc, seen["path"])
        operation = doc["paths"][template][seen["method"]]
        declared = operation["responses"].get(str(seen["status"]))
        assert declared is not None, (seen["method"], template, seen["status"], seen["text"][:200])
        content = declared["content"]
        assert seen["type"] in content, (template, seen["status"], seen["type"])
        body = json.loads(seen["text"]) if seen["type"] == "application/json" else seen["text"]
        check(doc, content[seen["type"]]["schema"], body)
        if seen["status"] == 200 and seen["request"] is not None:  # an accepted request has the documented shape
            check(doc, operation["requestBody"]["content"][seen["request_type"]]["schema"], seen["request"])
        observed.setdefault((template, seen["method"]), set()).add(str(seen["status"]))
    for template, methods in doc["paths"].items():
        for method, operation in methods.items():
            declared = {code for code in operation["responses"] if code != "default"}
            if template == "/api/health":
                declared.discard("503")  # below, on a server whose store does not answer
            assert declared <= observed.get((template, method), set()), (template, method, declared)


def test_errors_are_one_line_and_name_the_limits(served):
    doc, call = document(), Recorder(served["server"].base)
    status, out = call.raw("POST", "/api/testsets/x/submissions", b" " * 1024, 100 * 1024 * 1024 + 1)
    assert status == 413 and out == {"error": "the body must be at most 100 MiB (104,857,600 bytes); got 100 MiB"}
    status, out = call.raw("POST", "/api/testsets/x/tokens", b" " * 1024, 65 * 1024)
    assert status == 413 and out == {"error": "the body must be at most 64 KiB (65,536 bytes); got 65 KiB"}
    status, out = call("GET", "/api/" + "p" * 3000)
    assert status == 414 and out == {"error": "the URL path must be at most 2,048 characters; got 3,005"}
    status, out = call("GET", "/api/nothing-here")
    assert status == 404 and out["error"].startswith("no such API route: GET /api/nothing-here")
    for seen in call.seen:
        check(doc, {"$ref": "#/components/schemas/Error"}, json.loads(seen["text"]))


def test_health_says_when_the_store_does_not_answer(tmp_path):
    url = f"postgresql+psycopg://nobody@127.0.0.1:{_free_port()}/none"  # nothing listens there
    server = Server(url, tmp_path, pages="planner", ready_path="/api/openapi.json")
    try:
        call = Recorder(server.base)
        status, out = call("GET", "/api/health")
        assert status == 503 and out == {"ready": False, "version": document()["info"]["version"],
                                         "store": {"backend": "postgresql", "reachable": False, "writable": False,
                                                   "problem": "it does not answer"}}
        check(document(), document()["paths"]["/api/health"]["get"]["responses"]["503"]["content"]["application/json"]
              ["schema"], out)
    finally:
        server.stop()


def test_the_cli_json_is_documented_by_the_same_schemas(served, tmp_path, capsys):
    doc, data = document(), served["data"]
    url = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    (tmp_path / "labels.csv").write_bytes(data.labels_csv())
    (tmp_path / "p.csv").write_bytes(data.csv(data.predictions(100)))
    store = ["--store", url, "--format", "json"]

    def run(verb, *args, expect=0):
        code = main(["testset", verb, *args])
        assert code == expect
        out = json.loads(capsys.readouterr().out)
        check(doc, {"$ref": f"#/components/schemas/{CLI_SCHEMAS['refused' if expect == 1 else verb]}"}, out)
        return out

    created = run("create", "e", "--labels", str(tmp_path / "labels.csv"), "--epsilon", "0.05,0.1", "--delta", "0.1",
                  "--steps", "2", "--reverts", "1", "--allow-smaller", *store)
    token = run("token", "e", "--tenant", "ann", *store)["token"]
    run("submit", "e", "--predictions", str(tmp_path / "p.csv"), "--val-accuracy", "0.96", "--tenant", "ann", *store)
    run("status", "e", *store)
    run("revert", "e", *store)
    run("list", *store)
    run("retire", "e", *store)
    run("submit", "e", "--predictions", str(tmp_path / "p.csv"), "--val-accuracy", "0.96", "--tenant", "ann", *store,
        expect=1)
    run("export", "e", "--out", str(tmp_path / "t.json"), "--labels-out", str(tmp_path / "l.csv"), *store)
    assert created["admin_token"].startswith("mdt_") and token.startswith("mdt_")
    S.create(served["store"], "remote", data.labels_csv(), G.meter_settings(epsilon=EPS, delta=0.1, steps=3),
             allow_smaller=True)
    remote_token = S.issue_token(served["store"], "remote", "ann")["token"]
    remote = ["--server", served["server"].base, "--token", remote_token, "--format", "json"]
    run("submit", "remote", "--predictions", str(tmp_path / "p.csv"), "--val-accuracy", "0.96", *remote)
    run("status", "remote", *remote)
