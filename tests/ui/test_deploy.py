"""Past one machine (issue 19): the shipped deployment, run for real.

Two ``meter-dashboard serve`` processes started with the ExecStart of the shipped systemd unit
(``apps/deploy/meter-dashboard@.service``) on one throwaway PostgreSQL store, behind a real nginx
running the shipped site (``apps/deploy/nginx.conf``), rewritten only for this machine: free ports
instead of 80/443/5007/5008, a throwaway certificate and password file, no IPv6 listeners.  Which
process answered each request is nginx's own account (its access log, ``$upstream_addr``).

Proves: plain HTTP goes to HTTPS; pages need the password, the test-set API its own tokens; a
browser's page, assets, websocket and reloads all reach one process (sticky), while browsers are
spread over both; a submission through one process is seen at once by the other's API and, without
a reload, by the /testsets page served by the other; concurrent submissions through both processes
get the steps 1..T exactly once.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from meter_dashboard.testsets import service as S
from meter_dashboard.testsets import signals as G
from meter_dashboard.testsets.store import Store
from tests.testsets.conftest import Data
from tests.testsets.postgres import find_bindir, start_cluster

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "apps" / "deploy"
USER, PASSWORD = "team", "budget-meeting"
STEPS = 20
_LOG = re.compile(r'^(?P<id>\S+) (?P<cookie>\S+) "(?P<request>[^"]*)" (?P<status>\d+) (?P<upstream>\S+)$')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not listen on {port} within {timeout} s")
        time.sleep(0.2)


# ---------------------------------------------------------------------- the shipped files, for this machine
def exec_start(port: int, origin: str) -> list[str]:
    """The unit's ExecStart for instance ``port`` (``%i``), run with this interpreter."""
    unit = (DEPLOY / "meter-dashboard@.service").read_text(encoding="utf-8")
    line = re.search(r"^ExecStart=(.+)$", unit, re.M).group(1)
    argv = shlex.split(line.replace("%i", str(port)).replace("${METER_DASHBOARD_ORIGIN}", origin))
    assert Path(argv[0]).name == "meter-dashboard" and argv[1] == "serve", argv
    return [sys.executable, "-m", "meter_dashboard", *argv[1:]]


def environment(store_url: str, origin: str) -> dict:
    """The unit's environment file, with this test's store and origin."""
    shipped = dict(re.findall(r"^([A-Z_]+)=(.*)$", (DEPLOY / "meter-dashboard.env").read_text(encoding="utf-8"),
                              re.M))
    assert set(shipped) == {"METER_DASHBOARD_STORE", "METER_DASHBOARD_ORIGIN"}
    assert shipped["METER_DASHBOARD_STORE"].startswith("postgresql+psycopg://")
    return dict(os.environ, METER_DASHBOARD_STORE=store_url, METER_DASHBOARD_ORIGIN=origin,
                PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def site_config(http_port: int, https_port: int, upstreams: list[int], folder: Path) -> str:
    """apps/deploy/nginx.conf with this machine's ports, certificate and password file."""
    text = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
    changes = [
        (r"^[ \t]*listen \[::\]:\d+[^\n]*\n", "", 2),  # the test machine may have no IPv6
        (r"listen 80;", f"listen 127.0.0.1:{http_port};", 1),
        (r"listen 443 ssl http2;", f"listen 127.0.0.1:{https_port} ssl http2;", 1),
        (r"server 127\.0\.0\.1:5007;(\s+)server 127\.0\.0\.1:5008;",
         f"server 127.0.0.1:{upstreams[0]};\\1server 127.0.0.1:{upstreams[1]};", 1),
        (r"ssl_certificate\s+\S+;", f"ssl_certificate {folder / 'cert.pem'};", 1),
        (r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {folder / 'key.pem'};", 1),
        (r"auth_basic_user_file\s+\S+;", f"auth_basic_user_file {folder / 'htpasswd'};", 1),
    ]
    for pattern, new, count in changes:
        text, n = re.subn(pattern, new, text, flags=re.M)
        assert n == count, f"apps/deploy/nginx.conf changed shape: {pattern!r} matched {n} times, not {count}"
    return text


class Deployment:
    """nginx + two serve processes + one PostgreSQL database, in a temporary folder."""

    def __init__(self, store_url: str):
        self.folder = Path(tempfile.mkdtemp(prefix="md-deploy-"))
        self.store_url = store_url
        self.http_port, self.https_port = _free_port(), _free_port()
        self.ports = [_free_port(), _free_port()]
        self.base = f"https://127.0.0.1:{self.https_port}"
        self.procs: list[subprocess.Popen] = []
        origin = f"127.0.0.1:{self.https_port}"
        for port in self.ports:
            log = open(self.folder / f"serve-{port}.log", "w")
            proc = subprocess.Popen(exec_start(port, origin), stdout=log, stderr=subprocess.STDOUT,
                                    env=environment(store_url, origin), cwd=ROOT)
            self.procs.append(proc)
        for port, proc in zip(self.ports, self.procs):
            _wait_listening(port, proc, f"serve on {port}")
        self._start_nginx()

    def _start_nginx(self) -> None:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                        str(self.folder / "key.pem"), "-out", str(self.folder / "cert.pem")],
                       check=True, capture_output=True, timeout=60)
        salt = os.urandom(8)
        digest = base64.b64encode(hashlib.sha1(PASSWORD.encode() + salt).digest() + salt).decode()
        (self.folder / "htpasswd").write_text(f"{USER}:{{SSHA}}{digest}\n")
        (self.folder / "site.conf").write_text(site_config(self.http_port, self.https_port, self.ports, self.folder))
        temp = " ".join(f"{kind}_temp_path {self.folder / kind};" for kind in
                        ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (self.folder / "nginx.conf").write_text(
            f"worker_processes 2;\npid {self.folder / 'nginx.pid'};\nevents {{ worker_connections 1024; }}\n"
            "http {\n  log_format upstream '$request_id $cookie_md_route \"$request\" $status $upstream_addr';\n"
            f"  access_log {self.folder / 'access.log'} upstream;\n  {temp}\n"
            f"  include {self.folder / 'site.conf'};\n}}\n")
        prefix = []
        if os.geteuid() == 0:  # as an unprivileged user, like the store's cluster (tests/testsets/postgres.py)
            import pwd

            entry = pwd.getpwnam("nobody")
            for path in [self.folder, *self.folder.iterdir()]:
                os.chown(path, entry.pw_uid, entry.pw_gid)
            prefix = ["runuser", "-u", "nobody", "--"]
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        argv = [nginx, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"), "-e",
                str(self.folder / "error.log")]
        check = subprocess.run(prefix + argv + ["-t"], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stderr
        self.procs.append(subprocess.Popen(prefix + argv + ["-g", "daemon off;"], stderr=subprocess.DEVNULL))
        _wait_listening(self.https_port, self.procs[-1], "nginx")

    # ------------------------------------------------------------------ requests through nginx
    def request(self, path: str, *, method: str = "GET", body=None, route: str | None = None,
                password: bool = True, token: str | None = None, base: str | None = None):
        """(status, headers, text) of a request through nginx; ``route`` pins it to a process (the cookie)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request((base or self.base) + path, data=data, method=method)
        if password and token is None:
            req.add_header("Authorization", "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        if route is not None:
            req.add_header("Cookie", f"md_route={route}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ssl._create_unverified_context()),
                                             _NoRedirect())
        try:
            with opener.open(req, timeout=300) as response:
                return response.status, response.headers, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read().decode("utf-8", "replace")

    def log(self) -> list[dict]:
        """nginx's access log: request id, route cookie, request line, status, upstream (``-`` for none)."""
        lines = (self.folder / "access.log").read_text().splitlines()
        return [m.groupdict() for m in map(_LOG.match, lines) if m]

    def upstream_of(self, route: str) -> str:
        """The process (``127.0.0.1:PORT``) a browser with route key ``route`` reaches."""
        marker = f"/docs?probe={route}"
        assert self.request(marker, route=route)[0] == 200
        deadline = time.monotonic() + 10
        while True:  # nginx writes the line once the response is out
            found = [e["upstream"] for e in self.log() if marker in e["request"]]
            if found or time.monotonic() > deadline:
                return found[-1]
            time.sleep(0.1)

    def routes(self) -> dict[str, str]:
        """A route key for each process: {"127.0.0.1:PORT": key}."""
        found: dict[str, str] = {}
        for k in range(64):
            found.setdefault(self.upstream_of(f"room{k:02d}"), f"room{k:02d}")
            if len(found) == 2:
                return found
        raise AssertionError(f"64 route keys all reached {set(found)}")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture(scope="module")
def deployed():
    for tool in ("nginx", "openssl"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            pytest.skip(f"{tool} not installed (the README's test command installs it)")
    if find_bindir() is None:
        pytest.skip("PostgreSQL binaries not found (apt-get install postgresql)")
    cluster = start_cluster()
    deployment = None
    try:
        deployment = Deployment(cluster.create_database("md_deploy"))
        yield deployment
    finally:
        if deployment is not None:
            deployment.stop()
        cluster.stop()


def _context(browser, deployment, route: str | None = None):
    context = browser.new_context(ignore_https_errors=True, http_credentials={"username": USER, "password": PASSWORD},
                                  viewport={"width": 1400, "height": 1000})
    if route is not None:
        context.add_cookies([{"name": "md_route", "value": route, "url": deployment.base}])
    return context


def _lines_of(deployment, route: str, wait_for_websocket: int = 0) -> list[dict]:
    """Every request of the browser whose route key is ``route`` (its first one carried no cookie yet)."""
    deadline = time.monotonic() + 20
    while True:  # nginx logs a websocket when it closes
        lines = [e for e in deployment.log() if route in (e["cookie"], e["id"])]
        if sum("/ws " in e["request"] for e in lines) >= wait_for_websocket or time.monotonic() > deadline:
            return lines
        time.sleep(0.3)


def test_plain_http_goes_to_https_and_pages_need_the_password(deployed):
    status, headers, _ = deployed.request("/planner?delta=0.05", base=f"http://127.0.0.1:{deployed.http_port}")
    assert status == 301 and headers["Location"] == "https://127.0.0.1/planner?delta=0.05"
    assert deployed.request("/planner", password=False)[0] == 401
    status, headers, text = deployed.request("/")
    assert status == 200 and "Start here: the paper" in text
    cookie = headers["Set-Cookie"]
    assert re.fullmatch(r"md_route=[0-9a-f]{32}; Path=/; HttpOnly; Secure; SameSite=Lax", cookie), cookie
    # a browser that has its key is not given another one
    assert deployed.request("/", route="room00")[1]["Set-Cookie"] is None
    # the test-set API answers its own tokens, not the password
    status, _, text = deployed.request("/api/testsets", password=False)
    assert status == 200 and json.loads(text)["testsets"] == []


def test_a_browser_stays_on_its_process_and_browsers_spread_over_both(browser, deployed):
    context = _context(browser, deployed)
    try:
        page = context.new_page()
        page.goto(deployed.base + "/planner")
        for _ in range(3):  # the page and three reloads: each a new session, each on the same process
            expect(page.locator(".label-count-incremental").first).to_have_text("38,005", timeout=120_000)
            page.reload()
        expect(page.locator(".label-count-incremental").first).to_have_text("38,005", timeout=120_000)
        route = next(c["value"] for c in context.cookies() if c["name"] == "md_route")
    finally:
        context.close()
    everything = _lines_of(deployed, route, wait_for_websocket=4)
    lines = [e for e in everything if e["upstream"] != "-"]  # not the password challenge nginx answers itself
    assert {e["status"] for e in everything if e["upstream"] == "-"} <= {"401"}
    websockets = [e for e in lines if re.match(r"GET /planner/ws[ ?]", e["request"])]
    pages = [e for e in lines if re.match(r"GET /planner[ ?]", e["request"])]  # the URL keeps the plan
    assets = [e for e in lines if e["request"].startswith("GET /static/")]
    assert len(websockets) == 4 and len(pages) == 4 and assets
    assert {e["upstream"] for e in lines} == {deployed.upstream_of(route)}  # one process for all of it
    assert {e["status"] for e in websockets} == {"101"}
    # other browsers reach the other process: their keys hash there
    assert set(deployed.routes()) == {f"127.0.0.1:{p}" for p in deployed.ports}


def test_a_submission_through_one_process_is_seen_at_once_by_the_other(browser, deployed):
    store, data = Store(deployed.store_url), Data(n=5_000)
    settings = G.meter_settings(epsilon=[0.01, 0.02, 0.03, 0.04, 0.05], delta=0.1, steps=8)
    admin = S.create(store, "shared", data.labels_csv(), settings, allow_smaller=True)["admin_token"]
    store.dispose()
    routes = deployed.routes()
    first, second = (routes[f"127.0.0.1:{p}"] for p in deployed.ports)
    status, _, text = deployed.request("/api/testsets/shared/tokens", method="POST", body={"tenant": "ann"},
                                       token=admin, route=first)
    assert status == 200, text
    token = json.loads(text)["token"]
    context = _context(browser, deployed, route=second)  # this person's page lives in the second process
    try:
        page = context.new_page()
        page.goto(deployed.base + "/testsets")
        card = page.locator(".testset-card", has=page.locator('[data-name="shared"]')).first
        expect(card.locator(".testset-steps-used")).to_have_text("0 / 8", timeout=120_000)
        status, _, text = deployed.request("/api/testsets/shared/submissions", method="POST", token=token,
                                           route=first, body={"predictions": data.mapping(data.predictions(300)),
                                                              "val_accuracy": 0.96})
        assert status == 200 and json.loads(text)["step"] == 1, text
        status, _, text = deployed.request("/api/testsets/shared", token=token, route=second)  # at once
        assert status == 200 and json.loads(text)["steps_used"] == 1
        expect(card.locator(".testset-steps-used")).to_have_text("1 / 8", timeout=15_000)  # no reload
    finally:
        context.close()
    time.sleep(1)  # nginx writes each line once its response is out
    submitted = [e for e in deployed.log() if e["request"].startswith("POST /api/testsets/shared/submissions")]
    assert [e["upstream"] for e in submitted] == [f"127.0.0.1:{deployed.ports[0]}"]
    shown = [e for e in _lines_of(deployed, second, wait_for_websocket=1) if e["upstream"] != "-"]
    assert {e["upstream"] for e in shown if "/testsets" in e["request"]} == {f"127.0.0.1:{deployed.ports[1]}"}
    assert [e["status"] for e in shown if re.match(r"GET /testsets/ws[ ?]", e["request"])] == ["101"]


def test_steps_are_numbered_once_across_both_processes_under_concurrent_load(deployed):
    store, data = Store(deployed.store_url), Data(n=5_000, seed=3)
    settings = G.meter_settings(epsilon=[0.02, 0.04, 0.06, 0.08, 0.1], delta=0.1, steps=STEPS)
    admin = S.create(store, "busy", data.labels_csv(), settings, allow_smaller=True)["admin_token"]
    token = json.loads(deployed.request("/api/testsets/busy/tokens", method="POST", body={"tenant": "bo"},
                                        token=admin)[2])["token"]
    routes = list(deployed.routes().values())
    bodies = [{"predictions": data.mapping(data.predictions(200 + k)), "val_accuracy": 0.97} for k in range(STEPS + 4)]
    answers, lock, barrier = [], threading.Lock(), threading.Barrier(len(bodies))

    def send(k):
        barrier.wait()
        status, _, text = deployed.request("/api/testsets/busy/submissions", method="POST", token=token,
                                           route=routes[k % 2], body=bodies[k])
        with lock:
            answers.append((status, json.loads(text)))

    threads = [threading.Thread(target=send, args=(k,)) for k in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    steps = sorted(a["step"] for status, a in answers if status == 200)
    assert steps == list(range(1, STEPS + 1))  # each step exactly once, across both processes
    refused = [a for status, a in answers if status != 200]
    assert len(refused) == 4 and all(status == 409 for status, _ in answers if status != 200)
    assert [h["step"] for h in S.status(store, "busy", S.OWNER)["history"]] == list(range(1, STEPS + 1))
    store.dispose()
    time.sleep(1)  # nginx writes each line once its response is out
    served = [e["upstream"] for e in deployed.log() if e["request"].startswith("POST /api/testsets/busy/submissions")]
    assert {u: served.count(u) for u in set(served)} == {f"127.0.0.1:{p}": (STEPS + 4) // 2 for p in deployed.ports}
