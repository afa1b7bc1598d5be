"""The suite imports the package from the source tree (python/) unless
PYTHONPATH already gives one, and shares a stub server (stub.py) and the
real cluster fixture (cluster.py)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
try:
    import cerebro  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(SOURCE, "python"))

from cluster import cluster, cerebro_binary  # noqa: E402,F401  (session fixtures)
