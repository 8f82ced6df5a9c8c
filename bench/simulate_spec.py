"""What the Python benches share: run `gpuwise simulate` on a spec's text and read its JSON."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUWISE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "gpuwise")


def simulate(spec_text, *args):
    """The first service of `gpuwise simulate SPEC --format json ARGS...` on a spec given as text."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(spec_text)
        path = f.name
    try:
        out = subprocess.run([GPUWISE, "simulate", path, "--format", "json", *args], check=True, capture_output=True, text=True)
    finally:
        os.unlink(path)
    return json.loads(out.stdout)["services"][0]
