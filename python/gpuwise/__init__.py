"""gpuwise from Python: the C++ library's answers as dicts equal to the CLI's JSON.

    import gpuwise
    plan = gpuwise.plan("examples/chat-azure.yaml")
    plan["services"][0]["best"]            # the cheapest configuration meeting the SLO
    plan.text()                             # the table `gpuwise plan` prints
    gpuwise.fit("llama-3.1-70b", context_tokens=8192).to_pandas()

Specs are a path, YAML text or a dict. Keyword options are the CLI's flags with underscores
(`--context` is context_tokens, units in names). Errors raise gpuwise.BadInputError or
gpuwise.InfeasibleError with file, line and field. Long calls release the GIL and stop on Ctrl-C.
"""

import functools
import json

from . import _native
from .errors import BadInputError, Error, InfeasibleError, from_native
from .specs import dict_error
from .results import Result
from .specs import to_native as _spec
from .sweep import SweepTable, sweep

__all__ = ["Catalog", "Error", "BadInputError", "InfeasibleError", "Result", "SweepTable", "audit", "catalog",
           "fit", "fleet", "mix", "perf", "plan", "recording_rules", "scale", "simulate", "sweep", "version"]
__version__ = _native.version()


def version():
    """The library's version, the same as `gpuwise --version`."""
    return _native.version()


def _translated(function):
    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except _native.NativeError as e:
            raise from_native(dict_error(e.args)) from None
    return call


def _options(native_type, command, kwargs):
    """A _native options struct from keyword arguments, refusing names it does not have."""
    options = native_type()
    for name, value in kwargs.items():
        if value is None:
            continue
        if name.startswith("_") or not hasattr(options, name):
            known = ", ".join(n for n in dir(options) if not n.startswith("_"))
            raise TypeError(f"{command}() got an unexpected keyword argument '{name}' (it takes: {known})")
        if isinstance(value, (list, tuple)):
            value = [str(v) for v in value]
        setattr(options, name, value)
    return options


class Catalog:
    """The accelerators and cloud offerings, each figure with its source and date."""

    def __init__(self, native=None):
        self._native = native or _native.Catalog.embedded()

    @classmethod
    def embedded(cls):
        """The catalog compiled into gpuwise (the CLI's without --catalog)."""
        return cls(_native.Catalog.embedded())

    @_translated
    def with_overrides(self, folder):
        """A copy with a folder of catalog CSVs applied, as `gpuwise --catalog DIR` does; this
        catalog is unchanged."""
        native = self._native.copy()
        native.apply_overrides(str(folder))
        return Catalog(native)

    @_translated
    def accelerators(self, names=(), min_vram_gib=0):
        """`gpuwise catalog accelerators --format json`'s list of accelerators."""
        return json.loads(self._native.accelerators_json([str(n) for n in names], float(min_vram_gib)))["accelerators"]

    @_translated
    def offerings(self, **filters):
        """`gpuwise catalog offerings --format json`'s list: clouds, regions, accelerators, geo,
        pricing, min_vram_gib, max_usd_per_hour, limit."""
        return json.loads(self._native.offerings_json(_options(_native.OfferingFilter, "offerings", filters)))["offerings"]


# The catalog the entry points use unless given one: gpuwise.catalog.accelerators() lists it.
catalog = Catalog.embedded()
_embedded = catalog


def _catalog(given):
    return (given if given is not None else _embedded)._native


@_translated
def plan(spec, *, catalog=None, path=None, **options):
    """`gpuwise plan SPEC`: the cheapest configuration per service and job. Options: simulate,
    sim_requests, seed, calibration, usable_memory_fraction, overhead_gib, step_token_budget."""
    return Result(_native.plan(_catalog(catalog), _spec(spec, path), _options(_native.PlanOptions, "plan", options)))


@_translated
def simulate(spec, *, catalog=None, path=None, **options):
    """`gpuwise simulate SPEC`: each service's deployment through the discrete-event simulator.
    Options: seed, requests, duration_s, average_rate, calibration, explain."""
    native = _native.simulate(_catalog(catalog), _spec(spec, path), _options(_native.SimulateOptions, "simulate", options))
    return Result(_AllMeet(native))


class _AllMeet:
    """A SimulateResult seen as an answer: exit status 3 when a service misses its SLO."""

    def __init__(self, native):
        self._native = native

    def to_json(self):
        return self._native.to_json()

    def to_text(self, explain=False):
        return self._native.to_text()

    def to_markdown(self, explain=False):
        return self._native.to_markdown()

    def to_html(self):
        raise BadInputError("simulate has no HTML report; use text() or markdown()", field="format")

    def exit_code(self):
        return 0 if self._native.all_meet() else 3

    def warnings(self):
        return []


@_translated
def fit(model, *, catalog=None, **options):
    """`gpuwise fit MODEL`: memory per device and where the model fits. Options: train, precision,
    kv_precision, batch, context_tokens, tp, pp, dp, zero, optimizer, recompute, pricing, ..."""
    return Result(_native.fit(_catalog(catalog), _options(_native.FitQuery, "fit", dict(options, model=str(model)))))


@_translated
def perf(model, accelerator, *, catalog=None, **options):
    """`gpuwise perf MODEL --accelerator A`: a step's time, or max_throughput=True with count."""
    query = _options(_native.PerfQuery, "perf", dict(options, model=str(model), accelerator=accelerator))
    return Result(_native.perf(_catalog(catalog), query))


@_translated
def train(model, tokens, *, catalog=None, **options):
    """`gpuwise train MODEL --tokens N`: time and cost of a run, spot against on-demand. Options:
    accelerator, count, offering, deadline_days, precision, pricing, spot_trace, seed, ..."""
    query = _options(_native.TrainQuery, "train", dict(options, model=str(model), tokens=float(tokens)))
    return Result(_native.train(_catalog(catalog), query))


@_translated
def scale(spec, *, catalog=None, path=None, **options):
    """`gpuwise scale SPEC`: autoscaling policies simulated on the traffic. Options: hours,
    shapes, seed, calibration, explain, jobs, exact (every request simulated: no steady
    stretch fast-forwarded), fast_forward (steady stretches replayed on spans of a day or less
    too; by default only longer spans replay them)."""
    return Result(_native.scale(_catalog(catalog), _spec(spec, path), _options(_native.ScaleOptions, "scale", options)))


@_translated
def mix(demand, *, catalog=None, **options):
    """`gpuwise mix DEMAND`: reserved, on-demand and spot units for a demand CSV or a spec.
    Options: offering, service, on_demand, reserved_1y, reserved_3y, spot, horizon_months, seed."""
    return Result(_native.mix(_catalog(catalog), _options(_native.MixQuery, "mix", dict(options, demand=str(demand)))))


@_translated
def fleet(spec, *, catalog=None, path=None, **options):
    """`gpuwise fleet SPEC`: shared pools, model pools, buckets, buy against rent, what-ifs."""
    return Result(_native.fleet(_catalog(catalog), _spec(spec, path), _options(_native.FleetOptions, "fleet", options)))


@_translated
def audit(*files, catalog=None, prometheus=None, **options):
    """`gpuwise audit FILE... | --prometheus URL`: idle, under-used and oversized GPUs with dollars.
    Options: range, selector, telemetry_format, columns, metric, accelerator, offering, group_by,
    min_coverage_hours, top, allow_partial, usd_per_gpu_hour, ... Warnings go to Python's
    warnings module as well as the answer's .warnings."""
    import warnings
    if len(files) == 1 and isinstance(files[0], (list, tuple)):
        files = tuple(files[0])
    query = _options(_native.AuditQuery, "audit", dict(options, files=[str(f) for f in files], prometheus=prometheus))
    result = Result(_native.audit(_catalog(catalog), query))
    for line in result.warnings:
        warnings.warn(line, stacklevel=2)
    return result


def recording_rules():
    """`gpuwise audit --print-recording-rules`: the Prometheus rule file that
    audit(prometheus=URL, use_recording_rules=True) reads."""
    return _native.recording_rules()
