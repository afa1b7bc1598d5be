"""Writes scikit-learn's bundled datasets (no network) as the CSV files the task examples train on.

Run with Debian's python3 (python3-sklearn):  /usr/bin/python3 export_sklearn.py OUT_DIR
  OUT_DIR/diabetes.csv      10 features, `progression` (regression target)
  OUT_DIR/digits.csv        64 pixels, `digit` (10 classes)
  OUT_DIR/digits_tags.csv   64 pixels, `tags`: ';'-separated tags of the digit (even, large, prime, loop)
"""
import csv
import os
import sys

from sklearn.datasets import load_diabetes, load_digits

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)

d = load_diabetes(scaled=False)
with open(os.path.join(out, "diabetes.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(list(d.feature_names) + ["progression"])
    for x, y in zip(d.data, d.target):
        w.writerow(list(x) + [y])


def tags(c):
    named = (("even", c % 2 == 0), ("large", c >= 5), ("prime", c in (2, 3, 5, 7)), ("loop", c in (0, 6, 8, 9)))
    return ";".join(name for name, yes in named if yes)


g = load_digits()
for name, label, value in (("digits.csv", "digit", lambda c: c), ("digits_tags.csv", "tags", tags)):
    with open(os.path.join(out, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["p%d" % i for i in range(64)] + [label])
        for x, c in zip(g.data, g.target):
            w.writerow([int(v) for v in x] + [value(c)])
