#!/usr/bin/env python3
"""A finished captioning run and a finished detection run on an embedded cluster (`cerebro repl --ui`):
the API's experiment view holds the best config's pictures of the first test images, and the dashboard
shows them: each image with its caption and the image's own captions, or with its boxes drawn over it.
Saves a screenshot of each.

usage: test_dashboard_examples.py CEREBRO_BINARY SOURCE_DIR ARTIFACT_DIR"""
import os
import subprocess
import sys
import tempfile

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from cerebro_test_support import ReplWithDashboard, wait_for


def spec(task, shapes, annotations, space):
    return f"""[experiment]
name = "{task}-pictures"
task = "{task}"
epochs = 2
seed = 3
[data]
source = "coco"
path = "{shapes}"
annotations = "{annotations}"
image_root = "images"
color = "rgb"
[space]
{space}lr = [0.01]
batch_size = [16]
"""


def main():
    binary, source, artifacts = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(artifacts, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="cerebro-pictures-")
    shapes = os.path.join(tmp, "shapes")
    subprocess.run([os.path.join(source, "tools", "make_shapes"), "--out", shapes, "--images", "120", "--size", "16"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    repl = ReplWithDashboard(binary, tmp)
    try:
        driver = None
        runs = [("captioning", "captions.json",
                 'model = ["captioner"]\nchannels = [[8, 16]]\nlayers = [1]\nd_model = [16]\nheads = [2]\nff = [32]\n'),
                ("detection", "instances.json", 'model = ["detector"]\nchannels = [[8, 16]]\nhead = [16]\n')]
        for task, annotations, space in runs:
            status, body = repl.request("POST", "/api/v1/experiments", spec(task, shapes, annotations, space))
            assert status == 201, body
            experiment = body["id"]

            def finished():
                status, view = repl.request("GET", f"/api/v1/experiments/{experiment}")
                assert status == 200, view
                return view if view.get("status") == "completed" and view.get("examples") else None

            view = wait_for(f"the {task} run's pictures", finished, 180, logs=repl.output)
            examples = view["examples"]
            assert len(examples) == 6, examples
            for e in examples:
                assert e["image"].startswith("data:image/png;base64,"), e["image"][:40]
                assert ("caption" in e) == (task == "captioning"), e.keys()
                assert ("truth" in e) == (task == "detection"), e.keys()

            if driver is None:
                driver = repl.browser()
                driver.get(repl.url + "?token=" + repl.link_token + "&poll=500")
            else:
                driver.refresh()  # an open page stays on its experiment; a fresh one takes the newest
            wait = WebDriverWait(driver, 60, poll_frequency=0.25,
                                 ignored_exceptions=(StaleElementReferenceException,))
            # The page selects the newest experiment itself.
            wait.until(lambda d: experiment in d.find_element(By.ID, "experiment-title").text)
            wait.until(lambda d: d.find_element(By.ID, "examples-section").is_displayed())
            figures = wait.until(lambda d: (lambda f: f if len(f) == 6 else None)(
                d.find_elements(By.CSS_SELECTOR, "#examples figure")))
            for figure, e in zip(figures, examples):
                image = figure.find_element(By.CSS_SELECTOR, "svg image")
                assert image.get_attribute("href") == e["image"]
                text = figure.find_element(By.TAG_NAME, "figcaption").text
                if task == "captioning":
                    assert text.splitlines()[0] == e["caption"], (text, e["caption"])
                    assert text.splitlines()[1:] == e["references"], (text, e["references"])
                else:
                    truth = figure.find_elements(By.CSS_SELECTOR, "rect.truth")
                    found = figure.find_elements(By.CSS_SELECTOR, "rect.found")
                    assert len(truth) == len(e["truth"]) and len(found) == len(e["boxes"]), (len(truth), len(found))
            section = driver.find_element(By.ID, "examples-section")
            driver.execute_script("arguments[0].scrollIntoView();", section)
            shot = os.path.join(artifacts, f"dashboard-{task}-pictures.png")
            driver.save_screenshot(shot)
            print(f"ok: the {task} run's pictures in the API and the dashboard; screenshot", shot)
    finally:
        repl.close(sys.exc_info()[0] is not None, os.path.join(artifacts, "dashboard-pictures-failed.png"))


if __name__ == "__main__":
    main()
