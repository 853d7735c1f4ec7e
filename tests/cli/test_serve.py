"""``meter-dashboard serve``: options refused by name before anything is bound (issue 15 #4, #6).

The served behaviour (localhost by default, gzip, sessions cleaned, ...) is in tests/ui/test_server.py.
"""
from __future__ import annotations

import socket
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "meter_dashboard", "serve", "--no-show", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, message", [
    (["--address", "999.999.1.1"], "--address must be an IP address of this machine (127.0.0.1, 0.0.0.0 for every "
                                   "interface) or its host name; got '999.999.1.1'"),
    (["--address", "192.0.2.1"], "--address must be an IP address of this machine"),
    (["--address", "no-such-host.invalid"], "(this name does not resolve); got 'no-such-host.invalid'"),
    (["--port", "70000"], "--port must be a whole number in [0, 65535]; got '70000'"),
    (["--num-threads", "-1"], "--num-threads must be a whole number in [0, 64]; got '-1'"),
    (["--num-procs", "two"], "--num-procs must be a whole number; got 'two'"),
    (["--session-lifetime", "0"], "--session-lifetime must be a number in [1, 86400]; got '0'"),
    (["--pages", "planner,nope"], "--pages must be names from planner"),
])
def test_bad_options_exit_2_with_one_line(args, message):
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("meter-dashboard serve: error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr and "Errno" not in result.stderr


@pytest.mark.parametrize("args", [["--pages", "planner,nope"], ["--num-threads", "-1"], ["--address", "999.1.1.1"]])
def test_a_bad_option_is_named_even_when_the_port_is_taken(args):
    """The suite must pass with the dashboard already running on 5006 (issue 20): options are checked first."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = run("--port", str(taken.getsockname()[1]), *args)
    assert result.returncode == 2 and "--port" not in result.stderr, result.stderr
    assert result.stderr.startswith("meter-dashboard serve: error: " + args[0])


def test_a_port_in_use_is_named():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("--port", str(port))
    assert result.returncode == 2
    assert result.stderr.strip() == f"meter-dashboard serve: error: --port must be a port no other program is " \
                                    f"listening on; got {port}"


def test_help_names_the_defaults():
    result = subprocess.run([sys.executable, "-m", "meter_dashboard", "serve", "--help"], capture_output=True,
                            text=True, timeout=60)
    text = " ".join(result.stdout.split())
    assert "default 127.0.0.1: this machine only" in text
    assert "--num-threads" in text and "(default 4;" in text
    assert "--num-procs" in text and "--session-lifetime" in text
