"""Cerebro's Python client: submit, follow, steer and collect deep-learning
model selection experiments over the server's HTTP API (docs/PYTHON.md).

Needs only the standard library; PyTorch (Template, loading models,
predict), pandas (to_pandas), matplotlib (plot), tqdm (the progress bar)
and IPython (watch) are used when installed.
"""

__version__ = "0.1.0"

from .client import Client  # noqa: E402
from .errors import (  # noqa: E402
    AuthError, BadRequest, CerebroError, Conflict, ConnectionLost, ExperimentFailed, Forbidden, NotFound,
    SpecError, TemplateError, Throttled, TLSError, TooLarge, Unavailable, VersionMismatch,
)
from .experiment import Config, Experiment  # noqa: E402
from .results import Curves, Leaderboard, Pareto  # noqa: E402
from .template import Template  # noqa: E402
from .toml_writer import dumps as to_toml  # noqa: E402

__all__ = [
    "__version__", "Client", "Experiment", "Config", "Template", "Leaderboard", "Curves", "Pareto", "to_toml",
    "CerebroError", "AuthError", "Forbidden", "NotFound", "Conflict", "BadRequest", "SpecError", "TooLarge",
    "Throttled", "Unavailable", "ConnectionLost", "TLSError", "VersionMismatch", "ExperimentFailed",
    "TemplateError",
]
