"""How an experiment looks: an HTML table for notebooks (with an inline SVG
sparkline of each config's metric per epoch) and the one-line progress text
wait() prints."""
import html
import math

__all__ = ["sparkline_svg", "experiment_html", "progress_text", "format_duration"]


def sparkline_svg(values, width=80, height=18):
    """A small inline SVG line through `values` (None values skipped); empty without any number."""
    points = [(i, v) for i, v in enumerate(values) if isinstance(v, (int, float)) and math.isfinite(v)]
    if not points:
        return ""
    low = min(v for _, v in points)
    high = max(v for _, v in points)
    span = (high - low) or 1.0
    steps = max(len(values) - 1, 1)
    pad = 2
    coords = ["%.1f,%.1f" % (pad + (width - 2 * pad) * i / steps, height - pad - (height - 2 * pad) * (v - low) / span)
              for i, v in points]
    last = coords[-1].split(",")
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
            '<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="%s"/>'
            '<circle cx="%s" cy="%s" r="2" fill="#1f77b4"/></svg>'
            % (width, height, width, height, " ".join(coords), last[0], last[1]))


def format_duration(seconds):
    """1:05, 1:02:03; "?" for an unknown duration."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "?"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return "%d:%02d:%02d" % (h, m, s) if h else "%d:%02d" % (m, s)


def eta_seconds(elapsed, progress):
    """The time left if the rest goes as fast as what is done; None before any progress."""
    if not progress or progress <= 0 or elapsed is None:
        return None
    return max(elapsed * (1 - min(progress, 1.0)) / progress, 0.0)


def _best(detail):
    best = detail.get("best")
    if isinstance(best, dict) and best.get("metric") is not None:
        return best
    return None


def progress_text(detail):
    """``ID: 12/40 units (30%) elapsed 0:12 ETA 0:28 best val_accuracy 0.8123 (config 2)``."""
    done, total = detail.get("units_done") or 0, detail.get("units_total") or 0
    progress = detail.get("progress") if detail.get("progress") is not None else (done / total if total else 0)
    elapsed = detail.get("elapsed_s")
    if not total and detail.get("note") and detail.get("status") == "running":
        return "%s: setting up (preparing and placing its data)" % detail.get("id", "?")
    text = "%s: %d/%d units (%d%%) elapsed %s" % (detail.get("id", "?"), done, total, round(100 * progress),
                                                  format_duration(elapsed))
    if detail.get("status") == "running":
        text += " ETA " + format_duration(eta_seconds(elapsed, progress))
    best = _best(detail)
    if best:
        text += " best %s %.4f (config %s)" % (detail.get("metric", "metric"), best["metric"], best["config"])
    if detail.get("paused"):
        text += " (paused)"
    if detail.get("status") not in (None, "running"):
        text += " " + str(detail["status"])
    return text


def experiment_html(detail):
    """An HTML table of the experiment (id, status, progress bar, best metric)
    and its leaderboard with a sparkline of each config's metric per epoch."""
    e = html.escape
    metric = detail.get("metric") or "val_accuracy"
    done, total = detail.get("units_done") or 0, detail.get("units_total") or 0
    progress = detail.get("progress") if detail.get("progress") is not None else (done / total if total else 0)
    best = _best(detail)
    best_text = "%.4f (config %s)" % (best["metric"], best["config"]) if best else "&ndash;"
    status = str(detail.get("status", "?")) + (" (paused)" if detail.get("paused") else "")
    bar = ('<div style="width:160px;background:#eee;border-radius:3px;display:inline-block;vertical-align:middle">'
           '<div style="width:%.1f%%;background:#1f77b4;height:10px;border-radius:3px"></div></div> %d/%d units'
           % (100 * min(max(progress, 0), 1), done, total))
    out = ['<div class="cerebro-experiment">',
           '<table><tr><th style="text-align:left">experiment</th><td>%s</td></tr>' % e(str(detail.get("id", ""))),
           '<tr><th style="text-align:left">status</th><td>%s</td></tr>' % e(status),
           '<tr><th style="text-align:left">progress</th><td>%s</td></tr>' % bar,
           '<tr><th style="text-align:left">best %s</th><td>%s</td></tr></table>' % (e(metric), best_text)]
    configs = detail.get("configs") or []
    if configs:
        out.append('<table><tr><th>rank</th><th>config</th><th>status</th><th>%s</th><th>per epoch</th>'
                   '<th style="text-align:left">params</th></tr>' % e(metric))
        for c in configs:
            value = c.get("metric")
            series = [ep.get(metric) for ep in c.get("epochs") or []]
            params = " ".join("%s=%s" % (k, v) for k, v in (c.get("params") or {}).items())
            out.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td style=\"text-align:left\">"
                       "%s</td></tr>" % (e(str(c.get("rank") or "-")), e(str(c.get("config"))),
                                         e(str(c.get("status"))),
                                         "%.4f" % value if isinstance(value, (int, float)) else "-",
                                         sparkline_svg(series), e(params)))
        out.append("</table>")
    elif detail.get("note"):
        out.append("<p>%s</p>" % e(str(detail["note"])))
    out.append("</div>")
    return "\n".join(out)
