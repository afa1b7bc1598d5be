"""The progress wait() shows: a tqdm bar when tqdm is installed, else one
line on stderr redrawn in place with ``\\r`` (a new line per change when
stderr is not a terminal, so logs stay readable)."""
import sys

from .display import eta_seconds, format_duration, progress_text

__all__ = ["Progress"]


class Progress:
    def __init__(self, stream=None, use_tqdm=None):
        self.stream = stream or sys.stderr
        self.bar = None
        self.last = None
        self.width = 0
        if use_tqdm is not False:
            try:
                import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.tqdm = tqdm
            elif use_tqdm:
                raise ImportError("tqdm is not installed")
            use_tqdm = tqdm is not None
        self.use_tqdm = bool(use_tqdm)

    def update(self, detail):
        if self.use_tqdm:
            self._update_bar(detail)
            return
        text = progress_text(detail)
        if text == self.last:
            return
        self.last = text
        if _isatty(self.stream):
            pad = max(self.width - len(text), 0)
            self.stream.write("\r" + text + " " * pad)
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def _update_bar(self, detail):
        total = detail.get("units_total") or 0
        if self.bar is None:
            self.bar = self.tqdm.tqdm(total=total, desc=str(detail.get("id", "")), unit="unit", file=self.stream)
        if self.bar.total != total:
            self.bar.total = total
        self.bar.n = detail.get("units_done") or 0
        best = detail.get("best")
        postfix = {"eta": format_duration(eta_seconds(detail.get("elapsed_s"), detail.get("progress")))}
        if isinstance(best, dict) and best.get("metric") is not None:
            postfix[detail.get("metric", "best")] = "%.4f" % best["metric"]
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.last is not None and _isatty(self.stream):
            self.stream.write("\n")
            self.stream.flush()


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
