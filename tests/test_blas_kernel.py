"""A seed gives the same run whatever BLAS kernels the machine would pick (``hri/__init__.py``).

An Intel processor with AVX-512 makes numpy's OpenBLAS take its ``SkylakeX`` kernels, an AMD one
its ``Haswell`` ones, and an SSM run's forward kinematics then differ in the last bit: the same
seed gave another run. ``OPENBLAS_CORETYPE`` stands in for the other machine here (OpenBLAS
reads it when it loads): hri replaces it, so a run under ``SkylakeX`` equals one under the
default, bit for bit. Each run is a process of its own, since OpenBLAS loads once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hri import BLAS_KERNEL as KERNEL
from hri.base.blas import kernel_in_use
from hri.run.stats import WALL_CLOCK_KEYS

PINNED = os.environ.get("OPENBLAS_CORETYPE") == KERNEL  # tests/conftest.py imported hri first


def _python(code: str, coretype: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          timeout=300).stdout


@pytest.mark.skipif(not PINNED, reason="no kernel is pinned on this processor (not x86-64 with AVX2 and FMA)")
def test_hri_pins_the_kernel_before_numpy_loads_it():
    code = "import hri, numpy\nfrom hri.base.blas import kernel_in_use\nprint(kernel_in_use())"
    assert _python(code, None).strip() == KERNEL
    assert _python(code, "SkylakeX").strip() == KERNEL
    assert kernel_in_use() == KERNEL  # this test process too (tests/conftest.py imports hri first)


_RUN = ("import sys\nfrom hri.cli.main import main\n"
        "sys.exit(main(['run', 'collaboration', '--set', 'safety.mode=ssm', '--duration', '20', '--seed', '3757552657', '--json']))")


def _statistics(coretype: str | None) -> dict:
    stats = json.loads(_python(_RUN, coretype))
    return {key: value for key, value in stats.items() if key not in WALL_CLOCK_KEYS}


@pytest.mark.skipif(not PINNED, reason="no kernel is pinned on this processor (not x86-64 with AVX2 and FMA)")
@pytest.mark.skipif(not Path("/proc/cpuinfo").exists() or "avx512f" not in Path("/proc/cpuinfo").read_text(),
                    reason="the SkylakeX kernels need AVX-512")
def test_an_ssm_run_is_the_same_under_the_kernels_an_intel_processor_would_pick():
    """The seed and the 20 s are those of the risk example in docs/statistics.md, whose SSM
    margin was 0.0435 m under ``SkylakeX`` and 0.0399 m under ``Haswell`` before the pin."""
    default, intel = _statistics(None), _statistics("SkylakeX")
    assert intel == default
    assert abs(default["ssm_margin_min_m"] - 0.039908) < 1e-6
