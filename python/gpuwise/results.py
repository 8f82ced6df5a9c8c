"""Answers as plain dicts equal to the CLI's JSON, with the other writers and a DataFrame view."""

import json

# The list a DataFrame shows by default, per command.
_TABLE_KEYS = {
    "plan": "services", "simulate": "services", "scale": "services", "fit": "fits",
    "audit": "findings", "catalog accelerators": "accelerators", "catalog offerings": "offerings",
    "mix": "levels", "train": "pareto",
}


def _pandas():
    try:
        import pandas
    except ImportError as missing:  # pandas is optional: only the DataFrame views need it
        raise ImportError("to_pandas() needs pandas (Debian: apt install python3-pandas)") from missing
    return pandas


def frame(rows):
    """A DataFrame of a list of dicts, nested keys flattened with dots ("latency_s.p99")."""
    return _pandas().json_normalize(rows)


class Result(dict):
    """One answer: the dict `gpuwise COMMAND --format json` prints, plus

    exit_code  the CLI's exit status (0 answered, 3 constraints not met, 4 partial telemetry)
    warnings   the lines the CLI writes to stderr beside it
    text(), markdown(), html()   the other formats, as the CLI writes them
    csv(), manifests()   a plan's --format csv table and --emit-k8s files
    """

    def __init__(self, native):
        super().__init__(json.loads(native.to_json()))
        self._native = native
        self.exit_code = native.exit_code()
        self.warnings = list(native.warnings())

    @property
    def command(self):
        return self["command"]

    def text(self, explain=False):
        return self._native.to_text(explain)

    def markdown(self, explain=False):
        return self._native.to_markdown(explain)

    def html(self):
        return self._native.to_html()

    def csv(self):
        """A plan's `--format csv`: a row per service, training job and batch job."""
        return self._plan_only("csv").to_csv()

    def manifests(self, prometheus_url="http://prometheus-operated.monitoring.svc:9090"):
        """A plan's `--emit-k8s` files as {file name: YAML}, in the order the CLI writes them."""
        native = self._plan_only("manifests")
        from . import _native
        from .errors import from_native
        from .specs import dict_error
        try:
            return dict(native.manifests(prometheus_url))
        except _native.NativeError as e:
            raise from_native(dict_error(e.args)) from None

    def _plan_only(self, what):
        if not hasattr(self._native, "manifests"):
            raise AttributeError(f"{what}() is a plan's; this is a {self.command} answer")
        return self._native

    def to_pandas(self, key=None):
        """A DataFrame of one of the answer's lists (default: its main table, e.g. a plan's services)."""
        key = key or _TABLE_KEYS.get(self.command)
        if key is None or key not in self:
            lists = [k for k, v in self.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
            if not lists:
                raise KeyError(f"the {self.command} answer has no list of rows; name one of its keys")
            key = lists[0]
        return frame(self[key])
