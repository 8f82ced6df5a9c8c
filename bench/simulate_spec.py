"""What the Python benches share: run `gpuwise simulate` (or `plan`) on a spec's text and read its JSON."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUWISE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "gpuwise")


def run_on_spec(command, spec_text, *args):
    """The first service of `gpuwise COMMAND SPEC --format json ARGS...` on a spec given as text
    (`plan` exits 3 when a service cannot be planned: its JSON says why)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(spec_text)
        path = f.name
    try:
        out = subprocess.run([GPUWISE, command, path, "--format", "json", *args], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if out.returncode not in (0, 3):
        raise subprocess.CalledProcessError(out.returncode, [GPUWISE, command], out.stdout, out.stderr)
    return json.loads(out.stdout)["services"][0]


def simulate(spec_text, *args):
    """The first service of `gpuwise simulate SPEC --format json ARGS...` on a spec given as text."""
    return run_on_spec("simulate", spec_text, *args)
