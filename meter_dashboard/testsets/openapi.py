"""The guarded-test-set API as an OpenAPI 3.1 document (``GET /api/openapi.json``).

One contract for every client: the routes of :mod:`.api`, what each accepts and answers,
the status codes and the error body, and the limits (:data:`LIMITS`).  The schemas also
document the CLI's ``testset ... --format json`` output (:data:`CLI_SCHEMAS`: verb ->
schema name).  The suite validates this document with ``openapi-spec-validator`` and every
real answer of a running server (and of the CLI) against it (tests/testsets/test_openapi.py).
"""
from __future__ import annotations

from typing import Any

from .access import ADMIN_STATUS_FIELDS, ALARM_FIELDS, HISTORY_FIELDS, LIST_FIELDS, PUBLIC_FIELDS, STATUS_FIELDS
from ..core.serving import MAX_HEADER_BYTES
from .submission import MAX_JSON_DEPTH, MAX_PATH_CHARS, MAX_SMALL_BODY_BYTES, MAX_SUBMISSION_BYTES

__all__ = ["document", "version", "LIMITS", "CLI_SCHEMAS", "schema_ref"]

#: The bounds of every request (also in the document as ``x-limits``).
LIMITS = {
    "max_submission_bytes": MAX_SUBMISSION_BYTES,
    "max_body_bytes": MAX_SMALL_BODY_BYTES,
    "max_submission_lines": "the test set's labels + 1 (a header); blank lines count",
    "max_json_depth": MAX_JSON_DEPTH,
    "max_path_chars": MAX_PATH_CHARS,
    "max_header_bytes": MAX_HEADER_BYTES,
}

#: ``meter-dashboard testset VERB --format json`` prints one object of this schema.
CLI_SCHEMAS = {"create": "Created", "token": "Token", "submit": "Submission", "status": "Status",
               "revert": "Revert", "retire": "Retire", "export": "ExportFile", "list": "OwnerList",
               "refused": "Refused"}

def version() -> str:
    """The package's version (the document's ``info.version``, ``GET /api/health``)."""
    import meter_dashboard

    return meter_dashboard.__version__


_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_TIME = {"type": "string", "format": "date-time"}


def _nullable(schema: dict) -> dict:
    return {**schema, "type": [schema["type"], "null"]}


def schema_ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _object(properties: dict, required=None, description: str | None = None) -> dict:
    out = {"type": "object", "properties": properties, "required": list(properties if required is None else required),
           "additionalProperties": False}
    if description:
        out["description"] = description
    return out


def _settings_schemas() -> dict:
    rate = {"type": "integer", "minimum": 1, "description": "Each tenant's submissions per hour (all its tokens)."}
    meter = _object({
        "mode": {"const": "meter"}, "meter": {"enum": ["incremental", "regular"]},
        "ranges": {"type": "array", "items": _NUM}, "epsilon": {"type": "array", "items": _NUM}, "delta": _NUM,
        "steps": _INT, "tenant_steps": {"type": "array", "items": _INT}, "reverts": {"type": "array", "items": _INT},
        "alarm_signal": {"type": "integer", "minimum": 1, "description": "A released signal >= this is an alarm."},
        "submissions_per_hour": rate,
    }, required=["mode", "meter", "ranges", "epsilon", "delta", "steps", "tenant_steps", "reverts"],
        description="ease.ml/meter: the planner's plan.")
    ci = _object({
        "mode": {"const": "ci"}, "condition": _STR, "reliability": _NUM,
        "adaptivity": {"enum": ["full", "none", "firstChange"]}, "ci_mode": {"enum": ["fp-free", "fn-free"]},
        "steps": _INT, "baseline": _BOOL, "submissions_per_hour": rate,
    }, required=["mode", "condition", "reliability", "adaptivity", "ci_mode", "steps", "baseline"],
        description="ease.ml/ci: the condition and its reliability.")
    return {"MeterSettings": meter, "CiSettings": ci,
            "Settings": {"oneOf": [schema_ref("MeterSettings"), schema_ref("CiSettings")]}}


def _status_schemas() -> dict:
    history_types = {
        "time": _TIME, "tenant": _STR, "step": _INT, "val_accuracy": _nullable(_NUM), "signal": _INT,
        "incremental_signal": _INT, "epsilon": _NUM, "passed": _nullable(_BOOL), "reverted": _BOOL,
        "predictions_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "regular_signal": _INT,
        "test_accuracy": _NUM, "empirical_overfitting": _NUM, "n": _nullable(_NUM), "o": _nullable(_NUM),
        "d": _nullable(_NUM), "truth": _nullable(_STR),
    }
    history = _object({k: history_types[k] for k in HISTORY_FIELDS},
                      required=["time", "tenant", "step", "val_accuracy", "reverted", "predictions_sha256"],
                      description="One step. Meter: signal, incremental_signal, epsilon; ci: passed. Once the "
                                  "test set retired (released): regular_signal, test_accuracy, empirical_overfitting "
                                  "(meter) or n, o, d, truth, test_accuracy (ci).")
    types = {
        "name": _STR, "mode": {"enum": ["meter", "ci"]}, "status": {"enum": ["active", "retired"]}, "created": _TIME,
        "retired_at": _nullable(_TIME), "retired_reason": _nullable(_STR), "labels": _INT, "needed": _INT,
        "supported": {"type": ["object", "null"]}, "settings": schema_ref("Settings"), "steps": _INT,
        "steps_used": _INT, "steps_left": _INT, "version": _INT, "alarms": {"type": "array", "items": schema_ref("Alarm")},
        "failing": {"type": "boolean", "description": "Any alarm of level 'alarm' (notes never fail)."},
        "history": {"type": "array", "items": schema_ref("HistoryRow")}, "released": _BOOL,
        "tenants": {"type": "array", "items": _STR, "description": "The admin's and the owner's view only."},
    }
    status = _object({k: types[k] for k in ADMIN_STATUS_FIELDS}, required=list(STATUS_FIELDS),
                     description="A token's view: a tenant sees its own steps and alarms only; scores once released.")
    public = _object({k: types[k] for k in PUBLIC_FIELDS},
                     description="What everyone may see of a test set (no token): its state and steps.")
    owner = _object({k: types[k] for k in LIST_FIELDS}, description="A test set in the owner's list (CLI --store).")
    return {"HistoryRow": history, "Status": status, "PublicSummary": public, "OwnerSummary": owner,
            "TestSetList": _object({"testsets": {"type": "array", "items": schema_ref("PublicSummary")}}),
            "OwnerList": _object({"testsets": {"type": "array", "items": schema_ref("OwnerSummary")}})}


def _answer_schemas() -> dict:
    common = {"name": _STR, "step": _INT, "tenant": _STR, "steps_used": _INT, "steps_left": _INT, "retired": _BOOL,
              "alarms": {"type": "array", "items": schema_ref("Alarm")},
              "failing": {"type": "boolean", "description": "Any alarm of level 'alarm': fail the pipeline."}}
    meter = _object({**common, "mode": {"const": "meter"}, "meter": {"enum": ["incremental", "regular"]},
                     "signal": {"type": "integer", "minimum": 1}, "incremental_signal": {"type": "integer", "minimum": 1},
                     "range": {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}, "epsilon": _NUM,
                     "supported_epsilon": _nullable(_NUM), "tenant_steps_left": _nullable(_INT)},
                    description="ease.ml/meter: the signal (the incremental one for the incremental meter), never "
                                "the test score.")
    ci = _object({**common, "mode": {"const": "ci"}, "passed": _nullable(_BOOL),
                  "signal": {"enum": ["pass", "fail", None]}},
                 description="ease.ml/ci: pass or fail (null while adaptivity 'none' hides results).")
    alarm = _object({"kind": _STR, "level": {"enum": ["alarm", "note"], "description": "'alarm': act on it (fail a "
                                                     "pipeline); 'note': the plan works as designed."},
                     "step": _nullable(_INT), "message": _STR})
    assert tuple(alarm["properties"]) == ALARM_FIELDS
    return {
        "Alarm": alarm, "MeterSubmission": meter, "CiSubmission": ci,
        "Submission": {"oneOf": [schema_ref("MeterSubmission"), schema_ref("CiSubmission")]},
        "SubmissionRequest": _object({"predictions": {"type": "object", "additionalProperties": _STR,
                                                      "description": "Every id of the test set, once."},
                                      "val_accuracy": {"type": ["number", "null"], "minimum": 0, "maximum": 1}},
                                     required=["predictions"]),
        "TokenRequest": _object({"tenant": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$"}}),
        "Empty": _object({}, description="No body, or {}."),
        "Token": _object({"name": _STR, "tenant": _STR, "token": {"type": "string", "pattern": "^mdt_[0-9a-f]{16}_"}}),
        "Revert": _object({"name": _STR, "step": _INT, "reverted": {"const": True}}),
        "Retire": _object({"name": _STR, "status": {"const": "retired"}, "steps_used": _INT, "reason": _STR}),
        "Export": _object({"name": _STR, "format": {"enum": ["csv", "json"]}, "trace": _STR, "test_size": _INT,
                           "settings": schema_ref("Settings")}),
        "Health": _object({"ready": _BOOL, "version": _STR,
                           "store": _object({"backend": {"enum": ["sqlite", "postgresql"]}, "reachable": _BOOL,
                                             "writable": {"type": "boolean", "description": "A write transaction "
                                                          "succeeds and (SQLite) its disk has 1 MiB free."},
                                             "problem": {"type": ["string", "null"], "description": "Why the "
                                                         "store is not ready (the disk is full, ...), one line."}})}),
        "Error": _object({"error": {"type": "string", "pattern": "^[^\\n]+$", "description": "One line."}}),
    }


def _cli_schemas() -> dict:
    return {
        "Created": _object({"name": _STR, "mode": {"enum": ["meter", "ci"]}, "labels": _INT, "needed": _INT,
                            "supported": {"type": ["object", "null"]},
                            "admin_token": {"type": "string", "pattern": "^mdt_[0-9a-f]{16}_"}},
                           description="testset create (shown once: the admin token)."),
        "ExportFile": _object({"name": _STR, "out": _STR, "format": {"enum": ["csv", "json"]}, "test_size": _INT,
                               "labels_out": _nullable(_STR), "settings": schema_ref("Settings")},
                              description="testset export: where the trace (and labels) went."),
        "Refused": _object({"refused": {"const": True}, "message": _STR},
                           description="Any verb refused by the test set's rules (exit 1)."),
    }


_ERRORS = {
    "400": "Bad input: the one-line message names what, where and what it must be.",
    "401": "No token, or not a valid token of this test set (the body is not read).",
    "403": "A valid token that may not do this (a tenant token on an admin action, the admin token submitting).",
    "409": "Refused by the test set's rules: the budget (or a tenant's share) is used up, the test set retired, "
           "a revert the plan has no room for, scores and labels asked for while the test set is active.",
    "413": "A body over a limit, answered as soon as the limit is passed (with or without Content-Length): "
           "100 MiB for a submission, 64 KiB otherwise; a submission holds at most the test set's labels + 1 lines "
           "(blank lines count) or as many predictions as labels.",
    "422": "The Idempotency-Key was used before by this tenant on this test set for other predictions or another "
           "val_accuracy: a retry must send the same request; new predictions need a new key.",
    "429": "A tenant over the test set's submissions per hour, or a token with 60 refused requests (4xx) in the last "
           "60 s (Retry-After: seconds; nothing read, nothing spent).",
    "503": "The store does not answer, its disk is full (the message says so), or the server is stopping "
           "(Retry-After); nothing was recorded: send the request again (a submission with the same Idempotency-Key).",
}


def _json(name: str, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema_ref(name)}}}


def _op(summary: str, ok: dict, errors: str, *, body: dict | None = None, params=(), secured: bool = True) -> dict:
    op: dict[str, Any] = {"summary": summary,  # an OpenAPI operation object
                          "responses": {"200": ok, **{c: _json("Error", _ERRORS[c]) for c in errors.split()}}}
    op["responses"]["default"] = _json("Error", "Any other failure, one line: a path over 2,048 characters (414); a "
                                                "method the route does not serve (405, with Allow); a token with 60 "
                                                "refused requests in the last 60 s (429, Retry-After); the store "
                                                "not answering or its disk full, or the server stopping (503, "
                                                "nothing recorded: send the request again).")
    if secured:
        op["security"] = [{"token": []}]
        op["parameters"] = [{"name": "name", "in": "path", "required": True,
                             "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"}}]
    op.setdefault("parameters", []).extend(params)
    if not op["parameters"]:
        del op["parameters"]
    if body is not None:
        op["requestBody"] = body
    return op


def _small_body(name: str, required: bool = False) -> dict:
    return {"required": required, "x-max-body-bytes": MAX_SMALL_BODY_BYTES,
            "content": {"application/json": {"schema": schema_ref(name)}}}


def _paths() -> dict:
    submit_body = {
        "required": True, "x-max-body-bytes": MAX_SUBMISSION_BYTES,
        "description": "JSON, or the id,prediction CSV file itself (text/csv, faster for large test sets; the "
                       "validation accuracy goes in ?val_accuracy=). At most 100 MiB and the test set's labels + 1 "
                       "lines.",
        "content": {"application/json": {"schema": schema_ref("SubmissionRequest")},
                    "text/csv": {"schema": {"type": "string", "description": "id,prediction with a header row"}}}}
    val = {"name": "val_accuracy", "in": "query", "required": False, "schema": {"type": "number", "minimum": 0,
                                                                                 "maximum": 1},
           "description": "With a text/csv body: the model's validation accuracy (meter mode: required)."}
    key = {"name": "Idempotency-Key", "in": "header", "required": False,
           "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:+/=-]{1,128}$"},
           "description": "A new random key per submission (a UUID), sent again unchanged on a retry: a retry of a "
                          "submission that was recorded gets its first answer and spends nothing. After a dropped "
                          "connection (no answer), send the same request with the same key."}
    fmt = {"name": "format", "in": "query", "required": False, "schema": {"enum": ["csv", "json"], "default": "csv"}}
    csv_ok = {"description": "The released labels, id,label CSV.",
              "content": {"text/csv": {"schema": {"type": "string"}}}}
    return {
        "/api/testsets": {"get": _op("Every test set: what everyone may see (no token).",
                                     _json("TestSetList", "Name, mode, state and steps of each test set."), "",
                                     secured=False)},
        "/api/testsets/{name}": {"get": _op("Status and the history the token may see.",
                                            _json("Status", "The token's view."), "401")},
        "/api/testsets/{name}/submissions": {"post": _op(
            "Submit predictions (a tenant token): the signal, never the score.", _json("Submission", "The answer."),
            "400 401 403 409 413 422 429", body=submit_body, params=[val, key])},
        "/api/testsets/{name}/tokens": {"post": _op("A new tenant token, shown once (the admin token).",
                                                    _json("Token", "The token."), "400 401 403 413",
                                                    body=_small_body("TokenRequest", required=True))},
        "/api/testsets/{name}/revert": {"post": _op("Mark the latest step reverted (the admin token).",
                                                    _json("Revert", "Reverted."), "400 401 403 409",
                                                    body=_small_body("Empty"))},
        "/api/testsets/{name}/retire": {"post": _op("Retire the test set now and release its scores and labels to "
                                                    "its tokens (the admin token; a test set that retired by itself "
                                                    "keeps them hidden until this).",
                                                    _json("Retire", "Retired and released."), "400 401 403 409",
                                                    body=_small_body("Empty"))},
        "/api/testsets/{name}/export": {"get": _op("After retirement: the history as a trace (any token).",
                                                   _json("Export", "The trace."), "400 401 409", params=[fmt])},
        "/api/testsets/{name}/labels": {"get": _op("After retirement: the labels (any token).", csv_ok, "401 409")},
        "/api/health": {"get": _op("Readiness: the server answers and the store is reachable.",
                                   _json("Health", "Ready."), "503", secured=False)},
        "/api/openapi.json": {"get": _op("This document.", {"description": "OpenAPI 3.1.",
                                                            "content": {"application/json": {"schema":
                                                                                             {"type": "object"}}}},
                                         "", secured=False)},
    }


def document() -> dict:
    """The OpenAPI 3.1 document of the guarded-test-set API (a new dict each call)."""
    schemas = {**_settings_schemas(), **_status_schemas(), **_answer_schemas(), **_cli_schemas()}
    paths = _paths()
    paths["/api/health"]["get"]["responses"]["503"] = _json("Health", "Not ready: the store does not answer.")
    return {
        "openapi": "3.1.0",
        "info": {"title": "meter-dashboard guarded test sets", "version": version(),
                 "description": "Developers submit predictions and get back the meter's signal (or ease.ml/ci's "
                                "pass/fail), never the test score. Tokens: Authorization: Bearer TOKEN. Errors are "
                                '{"error": "one line"}. Limits: x-limits. The CLI\'s --format json output uses the '
                                "same schemas (x-cli-schemas: verb -> schema)."},
        "x-limits": dict(LIMITS),
        "x-cli-schemas": dict(CLI_SCHEMAS),
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer",
                                          "description": "mdt_<key id>_<secret>: the admin token (testset create) "
                                                         "or a tenant token (testset token)."}},
        },
    }
