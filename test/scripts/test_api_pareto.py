#!/usr/bin/env python3
"""The Pareto front of an experiment with several objectives while it
runs and after it ends, through the HTTP API, the dashboard (headless Chromium)
and the REPL's `top`. A tpe experiment (val_accuracy, parameters, inference_ms)
runs on an embedded cluster (`cerebro repl --ui`): while it runs the API lists
each config as soon as it is proposed and a live front without inference_ms, and
the dashboard's Pareto table has a row per front member; at the end the front is
final and has inference_ms.

usage: test_api_pareto.py CEREBRO_BINARY ARTIFACT_DIR"""
import itertools
import os
import re
import sys
import tempfile

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from cerebro_test_support import ReplWithDashboard, wait_for

FASHION = "/usr/share/datasets/fashion-mnist"
SPEC = f"""[experiment]
name = "pareto"
search = "tpe"
samples = 5
startup = 2
epochs = 1
seed = 5
metric = ["val_accuracy", "parameters", "inference_ms"]
[data]
source = "idx"
path = "{FASHION}"
limit = 1000
[space]
model = ["mlp"]
hidden = [[8], [16], [64]]
lr = {{ dist = "loguniform", low = 1e-4, high = 3e-2 }}
"""


def main():
    binary, artifacts = sys.argv[1], sys.argv[2]
    os.makedirs(artifacts, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cerebro-pareto-")
    # Slower units: the run stays alive while the front is looked at.
    repl = ReplWithDashboard(binary, tmp, {"CEREBRO_FAULT_INJECTION_ENABLE": "i-am-a-test",
                                           "CEREBRO_FAULTS": "slow_worker=0:100;slow_worker=1:100"})
    url, link_token = repl.url, repl.link_token
    try:
        status, body = repl.request("POST", "/api/v1/experiments", SPEC)
        assert status == 201, body
        experiment = body["id"]

        def view():
            status, body = repl.request("GET", f"/api/v1/experiments/{experiment}")
            assert status == 200, body
            return body

        # Live: a front without inference_ms, while some config is still to come or running.
        live = wait_for("a live front",
                        lambda: (lambda v: v if v.get("pareto") and v.get("pareto_final") is False else None)(view()))
        names = [o["name"] for o in live["pareto_objectives"]]
        assert names == ["val_accuracy", "parameters", "inference_ms"], names
        assert [o["live"] for o in live["pareto_objectives"]] == [True, True, False], live["pareto_objectives"]
        for member in live["pareto"]:
            assert set(member["values"]) == {"val_accuracy", "parameters"}, member
            assert member["values"]["parameters"] > 0, member
        ids = {c["config"] for c in live["configs"]}
        assert {m["config"] for m in live["pareto"]} <= ids

        # The REPL's leaderboard has the front too.
        repl.command(f"top {experiment}")
        wait_for("the REPL's Pareto front", lambda: "Pareto front" in repl.output(), 30)
        # Its columns: one number of decimals each (accuracy), parameters as integers.
        lines = repl.output().split("Pareto front", 1)[1].splitlines()
        assert lines[1].split() == ["config", "val_accuracy", "parameters"], lines[:3]
        rows = [line.split() for line in itertools.takewhile(lambda l: re.fullmatch(r"\s*\d+ +\S+ +\S+", l),
                                                               lines[2:])]
        assert rows and all(len(r) == 3 and r[0].isdigit() and r[2].isdigit() for r in rows), lines[:8]
        assert len({len(r[1].split(".")[1]) for r in rows}) == 1, rows

        driver = repl.browser()
        driver.get(url + "?token=" + link_token + "&poll=500")
        wait = WebDriverWait(driver, 90, poll_frequency=0.25, ignored_exceptions=(StaleElementReferenceException,))
        # The page selects the newest experiment itself.
        wait.until(lambda d: d.find_element(By.ID, "pareto-section").is_displayed())
        heads = lambda d: [th.text for th in d.find_elements(By.CSS_SELECTOR, "#pareto thead th")]
        wait.until(lambda d: heads(d)[:3] == ["config", "val_accuracy (max)", "parameters (min)"])
        # Every config ends: the front is final, inference_ms measured.
        # (While it finishes the view has only the experiment's entry and a note.)
        final = wait_for("the final front", lambda: (lambda v: v if v.get("pareto_final") else None)(view()), 180)
        assert all(o["live"] for o in final["pareto_objectives"]), final["pareto_objectives"]
        assert all("inference_ms" in m["values"] for m in final["pareto"]), final["pareto"]
        assert len(final["configs"]) == 5, final["configs"]
        wait.until(lambda d: "inference_ms (min)" in heads(d))
        rows = lambda d: [int(r.get_attribute("data-config"))
                          for r in d.find_elements(By.CSS_SELECTOR, "#pareto tbody tr")]
        wait.until(lambda d: rows(d) == [m["config"] for m in final["pareto"]])
        # Each objective's column has one number of decimals (the API's "decimals": 4 significant digits
        # of the column's largest value, parameters as integers), not 0.690000 beside 50890.0.
        objectives = final["pareto_objectives"]
        for o in objectives:
            assert isinstance(o.get("decimals"), int), o
        assert next(o for o in objectives if o["name"] == "parameters")["decimals"] == 0, objectives
        table = wait.until(lambda d: [[td.text for td in r.find_elements(By.TAG_NAME, "td")]
                                      for r in d.find_elements(By.CSS_SELECTOR, "#pareto tbody tr")])
        for row, member in zip(table, final["pareto"]):
            assert row[0] == str(member["config"]), (row, member)
            for text, o in zip(row[1:], objectives):
                expected = f"{member['values'][o['name']]:.{o['decimals']}f}"
                assert text == expected, (o["name"], text, expected)
                assert re.fullmatch(r"\d+" if o["decimals"] == 0 else r"\d+\.\d{%d}" % o["decimals"], text), text
        largest = max(m["values"]["val_accuracy"] for m in final["pareto"])
        assert len(f"{largest:.{objectives[0]['decimals']}f}".replace(".", "").lstrip("0")) == 4, (largest, objectives)
        shot = os.path.join(artifacts, "dashboard-pareto.png")
        driver.save_screenshot(shot)
        print("ok: live and final Pareto fronts in the API, the REPL and the dashboard; screenshot", shot)
    finally:
        repl.close(sys.exc_info()[0] is not None, os.path.join(artifacts, "dashboard-pareto-failed.png"))


if __name__ == "__main__":
    main()
