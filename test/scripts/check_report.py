#!/usr/bin/python3
"""Opens a `cerebro report` page in headless Chromium (Selenium with
chromium-driver) with the network cut off, and checks that its charts are
drawn: one series per config in every learning-curve chart (with one point
per epoch) and in the parallel-coordinates plot, one lane per worker and one
bar per unit in the schedule, a leaderboard row per config; that a click on
a leaderboard row highlights that config; and that the page asked for
nothing but itself. Saves a screenshot.

Usage: check_report.py REPORT.html SCREENSHOT.png EXPECT.json
EXPECT.json: {"configs": {"<id>": <epochs>, ...}, "workers": W, "units": U}
Prints a JSON digest; exits 1 naming the first problem.
"""
import json
import os
import re
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def fail(message):
    print("check_report: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    report, screenshot, expect_file = sys.argv[1:4]
    expect = json.load(open(expect_file))
    html = open(report, encoding="utf-8").read()
    if re.search(r"(https?|ftp)://", html):
        fail("the report names a network URL")
    configs = expect["configs"]
    profile = tempfile.mkdtemp(prefix="cerebro-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,2400", "--user-data-dir=" + profile,
                # No network: every host unresolvable, every proxy dead.
                "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                "--no-first-run", "--disable-background-networking"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        url = "file://" + os.path.abspath(report)
        driver.get(url)
        digest = {}
        count = lambda css: len(driver.find_elements(By.CSS_SELECTOR, css))
        rows = count("table#leaderboard tr.leader")
        if rows != len(configs):
            fail(f"leaderboard rows {rows}, configs {len(configs)}")
        for chart in ("curve-val_accuracy", "curve-val_loss", "curve-train_loss", "parallel"):
            series = driver.find_elements(By.CSS_SELECTOR, f"svg#{chart} g.series")
            ids = sorted(s.get_attribute("data-config") for s in series)
            if ids != sorted(configs):
                fail(f"{chart}: series for configs {ids}, expected {sorted(configs)}")
            box = driver.execute_script(
                "const r = document.getElementById(arguments[0]).getBoundingClientRect(); return [r.width, r.height];",
                chart)
            if box[0] < 100 or box[1] < 100:
                fail(f"{chart}: drawn {box[0]}x{box[1]}")
            for s in series:
                # The browser laid the line out: its drawn box has a size.
                size = driver.execute_script(
                    "const b = arguments[0].querySelector('polyline').getBBox(); return b.width + b.height;", s)
                if size <= 0:
                    fail(f"{chart}: config {s.get_attribute('data-config')}'s line is not drawn")
                if chart.startswith("curve-"):
                    points = len(s.find_elements(By.CSS_SELECTOR, "circle.point"))
                    if points != configs[s.get_attribute("data-config")]:
                        fail(f"{chart}: config {s.get_attribute('data-config')} has {points} points, "
                             f"expected one per epoch ({configs[s.get_attribute('data-config')]})")
            digest[chart] = len(series)
        lanes = count("svg#schedule g.lane")
        units = driver.find_elements(By.CSS_SELECTOR, "svg#schedule rect.unit")
        if lanes != expect["workers"]:
            fail(f"schedule lanes {lanes}, workers {expect['workers']}")
        if len(units) != expect["units"]:
            fail(f"schedule bars {len(units)}, units {expect['units']}")
        widths = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg#schedule rect.unit')).map(r => r.getBBox().width);")
        if min(widths) <= 0:
            fail("a unit's bar has no width")
        digest["lanes"], digest["units"] = lanes, len(units)
        # Click the best config's row: it is highlighted in every chart.
        best = driver.find_element(By.CSS_SELECTOR, "table#leaderboard tr.leader")
        chosen = best.get_attribute("data-config")
        best.click()
        if "highlighting" not in driver.find_element(By.TAG_NAME, "body").get_attribute("class"):
            fail("a click on a leaderboard row highlights nothing")
        highlighted = {e.get_attribute("data-config") for e in driver.find_elements(By.CSS_SELECTOR, "svg .hl")}
        if highlighted != {chosen}:
            fail(f"clicked config {chosen}, highlighted {highlighted}")
        # The whole page in one picture.
        height = driver.execute_script("return document.documentElement.scrollHeight;")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1400, "height": max(800, height + 20), "deviceScaleFactor": 1,
                                "mobile": False})
        driver.save_screenshot(screenshot)
        # Nothing was requested but the page itself (the browser's own
        # chrome:// start page, loaded before it, aside), and nothing at all
        # went to the network.
        requested, network = [], []
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                params = message["params"]
                target = params["request"]["url"]
                if params.get("documentURL") == url:
                    requested.append(target)
                if re.match(r"(https?|wss?|ftp)://", target):
                    network.append(target)
        others = [u for u in requested if u != url and not u.startswith("data:")]
        if others or network:
            fail(f"the page requested {others + network}")
        if url not in requested:
            fail("the browser's log does not show the page itself: the request check saw nothing")
        digest["requests"] = requested
        digest["highlighted"] = chosen
        print(json.dumps(digest, sort_keys=True))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
