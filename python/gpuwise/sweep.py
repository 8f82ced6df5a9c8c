"""Many simulations from one call, in parallel on every core: a grid of spec changes in, one
table out."""

import copy
import itertools
import json
import os

from . import _native
from .errors import from_native
from .results import frame
from .specs import DICT_MARK, dict_error, set_path, to_dict


class SweepTable(list):
    """One row per (configuration, service): the grid's values, then the simulated figures.
    ``results[i]`` is configuration i's whole simulate answer (None where it failed)."""

    def __init__(self, rows, results):
        super().__init__(rows)
        self.results = results

    def to_pandas(self):
        return frame(list(self))


def _row(values, service):
    row = dict(values)
    row.update({
        "service": service["name"],
        "deployment": service.get("deployment"),
        "verdict": service.get("verdict"),
        "slo_met": service.get("slo_met"),
        "slo_attainment": service.get("slo_attainment"),
        "throughput_rps": service.get("throughput_rps"),
        "latency_p99_s": service.get("latency_s", {}).get("p99"),
        "ttft_p99_s": service.get("ttft_s", {}).get("p99"),
        "tpot_p99_s": service.get("tpot_s", {}).get("p99"),
        "usd_per_month": service.get("usd_per_month"),
        "usd_per_1k_inferences": service.get("usd_per_1k_inferences"),
        "error": None,
    })
    return row


def sweep(spec, grid, *, catalog=None, path=None, threads=None, seed=1, requests=0, duration_s=0,
          average_rate=False, calibration=""):
    """Simulates the spec once per combination of the grid's values, `threads` at a time
    (default: every core), and returns a SweepTable.

    grid: {"services.0.deployment.accelerator": ["A100-80GB", "H100"],
           "services.chat.deployment.max_batch": [32, 64, 128]}  (dotted paths into the spec;
           list items by index or name). A configuration the simulator refuses gets a row with
           its error; Ctrl-C stops them all.
    path: where a dict's relative trace paths resolve from (a path spec: its own folder).
    """
    from . import _catalog  # the package's default catalog, unless one is given
    document, own_path = to_dict(spec)
    path = path or own_path
    keys = list(grid)
    combos = list(itertools.product(*(grid[k] for k in keys)))
    texts, chosen = [], []
    for combo in combos:
        config = copy.deepcopy(document)
        for key, value in zip(keys, combo):
            set_path(config, key, value)
        texts.append((json.dumps(config), path + DICT_MARK))
        chosen.append(dict(zip(keys, combo)))
    options = _native.SimulateOptions()
    options.seed, options.requests, options.duration_s = seed, requests, duration_s
    options.average_rate, options.calibration = average_rate, calibration
    outcomes = _native.simulate_many(_catalog(catalog), texts, options, threads or os.cpu_count() or 1)
    rows, results = [], []
    for values, outcome in zip(chosen, outcomes):
        if isinstance(outcome, tuple):
            results.append(None)
            rows.append(dict(values, service=None, error=str(from_native(dict_error(outcome)))))
            continue
        answer = json.loads(outcome)
        results.append(answer)
        rows.extend(_row(values, s) for s in answer["services"])
    return SweepTable(rows, results)
