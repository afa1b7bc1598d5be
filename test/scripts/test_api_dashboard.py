#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium driven by
Selenium against a live embedded run (`cerebro repl --ui`, a spec submitted
through the API). The leaderboard has a row per config, the learning-curve and
schedule charts have one series per config and one lane per worker (the
schedule's legend lists every config, the curves' epoch axis starts at 0), the
page fetches only new units each poll and draws each unit once, the run's
TensorBoard logs decode mid-run, a click on
"Stop" stops the config (the API says so), the printed link logs one browser
in once, and a screenshot is saved.

usage: test_api_dashboard.py CEREBRO_BINARY ARTIFACT_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from cerebro_test_support import ReplWithDashboard, request

FASHION = "/usr/share/datasets/fashion-mnist"
SPEC = f"""[experiment]
name = "dash"
epochs = 12
seed = 5
[data]
source = "idx"
path = "{FASHION}"
limit = 4000
[space]
model = ["mlp"]
hidden = [[32]]
lr = [0.003, 0.001, 0.0003]
"""


def main():
    binary, artifacts = sys.argv[1], sys.argv[2]
    os.makedirs(artifacts, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cerebro-dashboard-")
    # Units 40 times slower: the run stays alive while the browser looks.
    repl = ReplWithDashboard(binary, tmp, {"CEREBRO_FAULT_INJECTION_ENABLE": "i-am-a-test",
                                           "CEREBRO_FAULTS": "slow_worker=0:40;slow_worker=1:40"})
    url, link_token = repl.url, repl.link_token
    try:
        # The link's token is not the API token: it only logs a browser in.
        status, body = request(repl.base, link_token, "GET", "/api/v1/experiments")
        assert status == 401, (status, body)
        status, body = repl.request("POST", "/api/v1/experiments", SPEC)
        assert status == 201, body
        experiment = body["id"]

        driver = repl.browser()
        driver.get(url + "?token=" + link_token + "&poll=500")
        # The page redraws the leaderboard at every poll, so an element found
        # a moment ago may be gone when it is read: the wait tries again.
        wait = WebDriverWait(driver, 90, poll_frequency=0.25,
                             ignored_exceptions=(StaleElementReferenceException,))
        rows = lambda d: d.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
        wait.until(lambda d: len(rows(d)) == 3)
        # Wait until both workers have committed units and a config validated.
        lanes = "return window.cerebroCharts.schedule ? window.cerebroCharts.schedule.data.labels.length : 0"
        wait.until(lambda d: d.execute_script(lanes) == 2)
        curves = ("return window.cerebroCharts.curves ? window.cerebroCharts.curves.data.datasets"
                  ".filter(s => s.data.length > 0).length : 0")
        wait.until(lambda d: d.execute_script(curves) >= 1)
        # TensorBoard follows the run: its logs, decoded now by an independent reader
        # (test/scripts/check_tfevents.py --running), already have a validated epoch.
        run_dir = os.path.join(tmp, "state", "experiments", experiment)
        check = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "check_tfevents.py"), "--running", run_dir],
                               capture_output=True, text=True, timeout=120)
        assert check.returncode == 0, check.stdout + check.stderr
        live = json.loads(check.stdout)["configs"]
        assert any("val_accuracy" in c["scalars"] for c in live.values()), live
        assert driver.execute_script("return window.cerebroCharts.curves.data.datasets.length") == 3
        series = driver.execute_script(
            "return window.cerebroCharts.curves.data.datasets.map(s => s.label)")
        assert sorted(series) == ["config 0", "config 1", "config 2"], series
        schedule_series = driver.execute_script(
            "return window.cerebroCharts.schedule.data.datasets.map(s => s.config)")
        assert len(schedule_series) == len(set(schedule_series)), "one schedule series per config"
        assert driver.execute_script("return window.cerebroCharts.parallel.series") == 3
        # The schedule's legend lists every config, also one without a unit yet.
        legend = driver.execute_script(
            "return window.cerebroCharts.schedule.data.datasets.map(s => s.config).sort()")
        assert legend == [0, 1, 2], legend
        # The epochs axis starts at 0 and spans at least one epoch (not -1..1 for a single epoch).
        axis = driver.execute_script("const x = window.cerebroCharts.curves.scales.x; return [x.min, x.max]")
        assert axis[0] == 0 and axis[1] >= 1, axis
        # The link is spent: opened again (another browser, a copy from the history) it logs nobody in.
        spent = urllib.request.Request(url + "?token=" + link_token)
        try:
            urllib.request.urlopen(spent, timeout=30)
            assert False, "the spent link logged in again"
        except urllib.error.HTTPError as e:
            assert e.code == 401, e.code
            assert b"has been used" in e.read()
        # Only this server was asked for anything: no CDN.
        hosts = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert all(h.startswith(url) for h in hosts), hosts

        # Paused (through the API) so that config 2 is surely still running
        # when its button is clicked; units already running finish.
        status, body = repl.request("POST", f"/api/v1/experiments/{experiment}/pause")
        assert status == 200, body
        # Stop config 2 with its button; the API says it is stopped.
        stop = "button.stop[data-config='2']"
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, stop))
        # The table is redrawn at every poll: click the button that is there now.
        driver.execute_script(f"document.querySelector(\"{stop}\").click()")
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#leaderboard tr[data-config='2'] .config-status").text
                   == "stopped")
        status, body = repl.request("GET", f"/api/v1/experiments/{experiment}/configs/2")
        assert status == 200 and body["status"] == "stopped", body
        # Paused: once the running units are in, the schedule has every unit
        # the API lists, each once, though each poll fetched only new ones.
        drawn = "return window.cerebroCharts.schedule.data.datasets.reduce((n, s) => n + s.data.length, 0)"
        listed = lambda: repl.request("GET", f"/api/v1/experiments/{experiment}/units")[1]["count"]
        wait.until(lambda d: d.execute_script(drawn) == listed() and listed() > 0)
        since = driver.execute_script("return window.cerebroUnits ? window.cerebroUnits.since : -1")
        assert since > 0, f"the last poll asked for units since {since}, not only the new ones"
        # Click a leaderboard row: that config is highlighted in the curves.
        driver.execute_script("document.querySelector(\"#leaderboard tr[data-config='0']\").click()")
        wait.until(lambda d: d.execute_script(
            "return window.cerebroCharts.curves.data.datasets.find(s => s.config === 0).borderWidth") == 4)
        wait.until(lambda d: d.execute_script(curves) >= 2)
        # Clone config 1 with an edited learning rate through the form.
        driver.execute_script("document.querySelector(\"button.clone[data-config='1']\").click()")
        wait.until(lambda d: d.find_element(By.ID, "clone-form").is_displayed())
        driver.execute_script("""
            const box = document.getElementById('clone-params');
            const params = JSON.parse(box.value);
            params.lr = 0.0005;
            box.value = JSON.stringify(params);""")
        driver.find_element(By.ID, "clone-submit").click()
        wait.until(lambda d: len(rows(d)) == 4)
        status, body = repl.request("GET", f"/api/v1/experiments/{experiment}/configs/3")
        assert status == 200 and body["params"]["lr"] == 0.0005, body
        status, body = repl.request("POST", f"/api/v1/experiments/{experiment}/resume")
        assert status == 200, body
        shot = os.path.join(artifacts, "dashboard.png")
        driver.save_screenshot(shot)
        print("screenshot:", shot)
        print("ok: dashboard drawn, stop and clone applied, screenshot saved")
    finally:
        repl.close(sys.exc_info()[0] is not None, os.path.join(artifacts, "dashboard-failed.png"))


if __name__ == "__main__":
    main()
