#!/usr/bin/env python3
"""Regenerate vectors.json: REST answers of the reference's generated FastAPI apps (0.4.6).

Black-box only: `apizr generate rest` (the oracle) writes a direct and a governed (v1, `{}`
policy) bundle for kinds.py; each is served with uvicorn and sent every case below; the status
code and the exact body bytes are recorded. Our server must answer the same.

Usage: refresh.py ORACLE_APIZR VENV_PYTHON   (the venv needs fastapi, uvicorn, pydantic)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    ("add", '{"a": 1, "b": 2}'), ("add", '{"a": 1}'), ("add", '{"a": 2.0}'), ("add", '{"a": 2.5}'),
    ("add", '{"a": true}'), ("add", '{}'), ("add", '{"a": 1, "c": 3}'), ("add", '[1, 2]'),
    ("add", '"x"'), ("add", ''), ("add", '{bad'), ("add", '{"a": 1} x'), ("add", '{"a": NaN}'),
    ("add", '{"a": 1e400}'), ("add", '{"a": 123456789012345678901234567890}'),
    ("add", '{"a": null}'),
    ("scale", '{"x": 1}'), ("scale", '{"x": 3, "factor": 0.5}'), ("scale", '{"x": "1"}'),
    ("scale", '{"x": 1e400}'), ("scale", '{"x": Infinity}'),
    ("shout", '{"text": "hi"}'), ("shout", '{"text": "hi", "times": 2, "sep": "-"}'),
    ("shout", '{"times": 2}'), ("shout", '{"text": 5}'),
    ("flags", '{"on": true}'), ("flags", '{"on": 1}'), ("flags", '{"on": false, "maybe": null}'),
    ("flags", '{"on": false, "maybe": 3}'),
    ("totals", '{"prices": [1, 2.5], "extra": {"a": 1}}'), ("totals", '{"prices": [], "extra": {"a": "x"}}'),
    ("totals", '{"prices": {}, "extra": {}}'),
    ("span", '{"pair": [1, "a"]}'), ("span", '{"pair": [1, "a", 2]}'), ("span", '{"pair": [1, "a"], "rest": [1, 2, 3]}'),
    ("span", '{"pair": [1, 2]}'),
    ("uniq", '{"items": [1, 2, 3]}'), ("uniq", '{"items": [1, 1]}'), ("uniq", '{"items": [1, 1.0]}'),
    ("uniq", '{"items": "abc"}'),
    ("pick", '{"mode": "a"}'), ("pick", '{"mode": 1}'), ("pick", '{"mode": 1.0}'), ("pick", '{"mode": 2.5}'),
    ("pick", '{"mode": true}'), ("pick", '{"mode": "c"}'), ("pick", '{"mode": 2}'),
    ("either", '{"v": 1}'), ("either", '{"v": "s"}'), ("either", '{"v": null}'), ("either", '{"v": 1.5}'),
    ("fail", '{"n": 1}'), ("sets_out", '{"n": 1}'), ("bad_result", '{"n": 1}'),
    ("anything", '{"v": {"z": 1, "a": [1, 2.0, "x", null]}}'), ("anything", '{"v": 1e-07}'),
    ("anything", '{"v": -0.0}'), ("anything", '{"v": "\\u00e9\\ud83d\\ude00"}'),
    ("anything", '{"v": ' + "[" * 70 + "]" * 70 + "}"),
    ("missing", '{}'),
]


def post(port, name, body):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/capabilities/{name}", data=body.encode(), method="POST",
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def serve(bundle, python, port):
    proc = subprocess.Popen(
        [python, "-m", "uvicorn", "app:app", "--port", str(port), "--log-level", "warning"],
        cwd=bundle)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return proc
        except Exception:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("reference server did not start")


def main():
    oracle, python = sys.argv[1], sys.argv[2]
    source = os.path.join(HERE, "kinds.py")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        policy = os.path.join(tmp, "policy.json")
        with open(policy, "w") as f:
            f.write("{}")
        for mode, extra, port in (("direct", [], 18191), ("governed", ["--execution-policy", policy], 18192)):
            bundle = os.path.join(tmp, mode)
            subprocess.run([oracle, "generate", "rest", source, "--output-dir", bundle, *extra],
                           check=True, stdout=subprocess.DEVNULL)
            proc = serve(bundle, python, port)
            try:
                out[mode] = [post(port, n, b) for n, b in CASES]
            finally:
                proc.kill()
    vectors = [
        {"capability": n, "body": b,
         "direct": {"status": d[0], "body": d[1]}, "governed": {"status": g[0], "body": g[1]}}
        for (n, b), d, g in zip(CASES, out["direct"], out["governed"])
    ]
    with open(os.path.join(HERE, "vectors.json"), "w") as f:
        json.dump({"reference": "outerspace-apizr 0.4.6", "vectors": vectors}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
