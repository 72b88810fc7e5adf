#!/usr/bin/env python3
"""A driver shim that misbehaves in one way, chosen by its argument. It
adds its pid, its parent's (the supervisor's) and any child's to
$HOSTILE_PIDS so the test can check nothing is left running afterwards."""
import json
import os
import signal
import subprocess
import sys
import time

mode = sys.argv[1]
pids = [os.getpid(), os.getppid()]


def note_pids():
    path = os.environ.get("HOSTILE_PIDS")
    if path:
        # Appended: trials running in parallel share the file.
        with open(path, "a") as f:
            f.write(" ".join(map(str, pids)) + " ")


def escape():
    """A grandchild that leaves our process group and session (setsid and a
    double fork), ignores SIGTERM and keeps our stdout open."""
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() > 0:
            os._exit(0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pids[:] = [os.getpid()]
        note_pids()
        os.close(ready_w)
        while True:
            time.sleep(3600)
    os.close(ready_w)
    os.waitpid(child, 0)
    os.read(ready_r, 1)  # end of file: its pid is noted
    os.close(ready_r)


if mode.startswith("escape"):
    escape()
if mode == "escape":
    # Then an honest driver: the reference, served by the CLI (argv[2]).
    note_pids()
    os.execv(sys.argv[2], [sys.argv[2], "shim", "--driver", "reference"])


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if mode == "silent-hello":
    note_pids()
    time.sleep(3600)

if mode == "huge-hello":
    # 100 MB with no newline where the hello answer should be, written in
    # chunks so this process stays small.
    note_pids()
    sys.stdin.readline()
    for _ in range(100):
        sys.stdout.write("x" * (1024 * 1024))
    sys.stdout.write("\n")
    sys.stdout.flush()
    time.sleep(3600)

if mode == "orphan":
    # A grandchild in our process group that would outlive us.
    child = subprocess.Popen(["sleep", "3600"])
    pids.append(child.pid)
note_pids()

for line in sys.stdin:
    msg = json.loads(line)
    rid, method = msg.get("id"), msg.get("method")
    if method == "hello":
        caps = ["codex", "per-tool-approval"] + (["http-servers"] if mode.startswith("secret-") else [])
        send({"jsonrpc": "2.0", "id": rid, "result": {"name": f"hostile-{mode}", "capabilities": caps}})
        continue
    secret = next(iter(msg.get("params", {}).get("launch", {}).get("secrets", {}).values()), None)
    if secret and mode == "secret-error":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": f"cannot open with token {secret}", "data": {"kind": "launch-failed"}}})
        continue
    if secret and mode == "secret-event":
        send({"jsonrpc": "2.0", "method": "event", "params": {"token": secret}})
    if secret and mode == "secret-stderr":
        sys.stderr.write(f"debug: token={secret}\n")
        sys.stderr.flush()
        sys.exit(4)
    if mode in ("crash", "escape-crash"):
        sys.exit(3)
    if mode in ("hang", "orphan", "escape-hang"):
        time.sleep(3600)
    if mode == "huge-line":
        sys.stdout.write("x" * (64 * 1024 * 1024) + "\n")
        sys.stdout.flush()
        time.sleep(3600)
    if mode == "wrong-id":
        send({"jsonrpc": "2.0", "id": rid + 100, "result": {}})
        time.sleep(3600)
    if mode == "duplicate-id":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
        continue
    if mode == "close-early":
        os.close(1)
        time.sleep(3600)
    if mode == "bad-host-request":
        send({"jsonrpc": "2.0", "id": "h1", "method": "host/decide", "params": {"prompt": {"type": "coffee"}}})
        time.sleep(3600)
    if mode == "bad-result":
        send({"jsonrpc": "2.0", "id": rid, "result": "not an object"})
        time.sleep(3600)
    send({"jsonrpc": "2.0", "id": rid, "result": {}})
