#!/usr/bin/python3
"""Runs one attack script of ../shared/redteam against the deployment as shipped: Debian's nginx with
deploy/nginx/shardcheckd-front.conf in front, shardcheckd on loopback behind it (connections.max_per_peer
0: every connection is the front's). The scripts start their daemon through rt.Daemon; this wraps its
start/stop so that the attacker and the prober talk to the front, and the daemon's RSS is still what
is sampled. On loopback every client has the same address, and the front's limits are per address:
so the prober gets a port of its own and the harness keys those limits by address and port, which
makes the prober another client, as it would be on a network.

usage (from the project root): front.py SCRIPT [ARGS...]     e.g. front.py a1b_unknown_backlog.py rst 5
Everything listens on 127.0.0.1 only; nginx is stopped by its PID with the daemon."""
import os
import re
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import time

REDTEAM = os.path.abspath(os.environ.get("REDTEAM_DIR", "../shared/redteam"))
FRONT_CONF = "deploy/nginx/shardcheckd-front.conf"
NGINX = "/usr/sbin/nginx"
sys.path.insert(0, REDTEAM)
import rt  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def front_conf(attacker_port, prober_port, daemon_port):
    text = open(FRONT_CONF).read()
    text = re.sub(r"listen 50051 http2;",
                  f"listen 127.0.0.1:{attacker_port} http2;\n    listen 127.0.0.1:{prober_port} http2;", text)
    text = text.replace("limit_conn_zone $binary_remote_addr ", "limit_conn_zone $binary_remote_addr$server_port ")
    text = text.replace("limit_req_zone $binary_remote_addr ", "limit_req_zone $binary_remote_addr$server_port ")
    return text.replace("127.0.0.1:50052", f"127.0.0.1:{daemon_port}")


def start_front(d):
    """nginx in front of daemon d (already listening): sets d.port/d.target to the front."""
    ng = f"{d.dir}/nginx"
    os.makedirs(ng, exist_ok=True)
    shutil.copytree("deploy/nginx/shardcheckd", f"{ng}/shardcheckd", dirs_exist_ok=True)
    for _ in range(5):
        port, probe_port = free_port(), free_port()
        with open(f"{ng}/front.conf", "w") as f:
            f.write(front_conf(port, probe_port, d.daemon_port))
        with open(f"{ng}/nginx.conf", "w") as f:
            f.write(f"worker_processes 1;\npid {ng}/nginx.pid;\nerror_log {ng}/error.log warn;\n"
                    "events { worker_connections 4096; }\n"
                    f"http {{\n  access_log off;\n  client_body_temp_path {ng}/body;\n  proxy_temp_path {ng}/proxy;\n"
                    f"  fastcgi_temp_path {ng}/fcgi;\n  uwsgi_temp_path {ng}/uwsgi;\n  scgi_temp_path {ng}/scgi;\n"
                    f"  include {ng}/front.conf;\n}}\n")
        proc = subprocess.Popen([NGINX, "-p", f"{ng}/", "-c", f"{ng}/nginx.conf", "-e", f"{ng}/error.log",
                                 "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=open(f"{ng}/stderr", "wb"))
        for _ in range(100):
            if proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                d.front, d.port, d.target = proc, port, f"127.0.0.1:{probe_port}"  # attackers use port, the prober target
                rt.log(f"front nginx pid={proc.pid} on 127.0.0.1:{port} (prober :{probe_port}) -> daemon "
                       f"127.0.0.1:{d.daemon_port}")
                return
            except OSError:
                time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    raise RuntimeError(f"nginx did not start; see {ng}/error.log")


def stop_front(d):
    p = getattr(d, "front", None)
    if p and p.poll() is None:
        p.send_signal(signal.SIGQUIT)  # graceful: finish what is in flight
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


_start, _stop, _kill = rt.Daemon.start, rt.Daemon.stop, rt.Daemon.kill


def start(self, timeout=15, metrics=True, reuse_port=None):
    if "--max-connections-per-peer" not in self.args:
        self.args += ["--max-connections-per-peer", "0"]
    _start(self, timeout, metrics, reuse_port)
    self.daemon_port = self.port
    start_front(self)
    return self


def stop(self, timeout=25):
    rc = _stop(self, timeout)
    stop_front(self)
    return rc


def kill(self):
    _kill(self)
    stop_front(self)


rt.Daemon.start, rt.Daemon.stop, rt.Daemon.kill = start, stop, kill

# The runs a script started: if the script dies (the front refused what the attack needs, e.g. more
# than http2_max_concurrent_streams), its run is still finished — result written with the prober's
# outcome, daemon, nginx and prober stopped.
runs = []
_run_init = rt.Run.__init__


def run_init(self, *a, **kw):
    _run_init(self, *a, **kw)
    runs.append(self)


rt.Run.__init__ = run_init

if __name__ == "__main__":
    script = os.path.join(REDTEAM, sys.argv[1])
    sys.argv = [script] + sys.argv[2:]
    try:
        runpy.run_path(script, run_name="__main__")
    except Exception as e:  # noqa: BLE001 - any failure of the attacker: record it, stop what it started
        rt.log(f"the attack script stopped: {e!r}")
        for r in runs:
            if r.d.alive() or (r.p and r.p.proc.poll() is None):
                r.notes["attack_stopped"] = repr(e)[:300]
                r.finish()
        raise
