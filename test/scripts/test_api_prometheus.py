#!/usr/bin/env python3
"""Debian's real Prometheus scrapes a running coordinator's /metrics
with the cluster token, and its HTTP query API returns the coordinator's
series: agents up, and the units an experiment completed.

usage: test_api_prometheus.py CEREBRO_BINARY"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

from cerebro_test_support import free_port, small_fashion_spec, wait_for

TOKEN = "s3cret-token-for-prometheus-0123"
SPEC = small_fashion_spec("scraped", 1, [0.001])


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="cerebro-prometheus-")
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    port, prom_port = free_port(), free_port()
    processes = []
    log_paths = []

    def start(name, argv):
        path = os.path.join(tmp, name + ".log")
        log_paths.append(path)
        processes.append(subprocess.Popen(argv, stdout=open(path, "w"), stderr=subprocess.STDOUT))

    def logs():
        return "".join(f"--- {p}\n" + open(p).read()[-3000:] for p in log_paths)

    try:
        start("coordinator", [binary, "coordinator", "--listen", f"127.0.0.1:{port}", "--state",
                              os.path.join(tmp, "state"), "--token-file", token_file, "--http", "127.0.0.1:0"])
        http = wait_for("the coordinator's HTTP port",
                        lambda: re.search(r"http on http://127\.0\.0\.1:(\d+)/", open(log_paths[0]).read()), 20,
                        poll=0.25, logs=logs)
        http_port = int(http.group(1))
        start("agent", [binary, "agent", "--join", f"127.0.0.1:{port}", "--token-file", token_file, "--workers", "1",
                        "--data-dir", os.path.join(tmp, "data"), "--name", "scraped-node"])
        wait_for("the agent", lambda: "agent scraped-node joined" in open(log_paths[0]).read(), 60, poll=0.25,
                 logs=logs)
        req = urllib.request.Request(f"http://127.0.0.1:{http_port}/api/v1/experiments", data=SPEC.encode(),
                                     method="POST", headers={"Authorization": "Bearer " + TOKEN})
        experiment = json.loads(urllib.request.urlopen(req, timeout=60).read())["id"]

        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: cerebro
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ["127.0.0.1:{http_port}"]
""")
        start("prometheus", ["/usr/bin/prometheus", f"--config.file={config}",
                             f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
                             f"--web.listen-address=127.0.0.1:{prom_port}"])

        def query(expression):
            url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
            try:
                answer = json.loads(urllib.request.urlopen(url, timeout=5).read())
            except OSError:
                return None
            return answer["data"]["result"] if answer.get("status") == "success" else None

        up = wait_for("cerebro_agents_up in Prometheus", lambda: query("cerebro_agents_up"), 60, poll=0.25, logs=logs)
        assert float(up[0]["value"][1]) == 1.0, up
        assert up[0]["metric"]["job"] == "cerebro", up
        done = wait_for("units completed in Prometheus", lambda: [
            s for s in (query(f'cerebro_units_completed_total{{experiment="{experiment}"}}') or [])
            if float(s["value"][1]) >= 1], 120, poll=0.25, logs=logs)
        assert done[0]["metric"]["experiment"] == experiment, done
        histogram = wait_for("the unit duration histogram", lambda: query(
            f'cerebro_unit_duration_seconds_count{{experiment="{experiment}"}}'), 30, poll=0.25, logs=logs)
        assert float(histogram[0]["value"][1]) >= 1, histogram
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/api/v1/targets", timeout=5).read())
        health = [t["health"] for t in targets["data"]["activeTargets"]]
        assert health == ["up"], targets
        print(f"ok: Prometheus scraped {experiment}: {done[0]['value'][1]} units completed")
    finally:
        for p in reversed(processes):
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
