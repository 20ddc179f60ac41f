"""Fixtures for every test: a private clperf state folder, the local PoCL device, a local Ray cluster."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def clperf_home(tmp_path_factory: pytest.TempPathFactory):
    """Keep device caches and the measurement store of the tests out of the user's folder."""
    home = tmp_path_factory.mktemp("clperf_home")
    old = os.environ.get("CLPERF_HOME")
    os.environ["CLPERF_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("CLPERF_HOME", None)
    else:
        os.environ["CLPERF_HOME"] = old


@pytest.fixture(scope="session")
def pocl():
    """PoCL, the CPU OpenCL runtime every test machine has, its peaks measured (once per session, into the
    tests' private folder: predictions need them, whichever test runs first); tests that need it skip
    without it."""
    from clperf.benchmark.devices import select

    try:
        return select("pocl", measure=True)
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no PoCL device: {e}")


@pytest.fixture(scope="module")
def ray_worker_env() -> dict[str, str]:
    """Environment variables the Ray workers of ``ray_cluster`` start with besides the tests' own (a test
    module overrides this fixture to give them more)."""
    return {}


@pytest.fixture(scope="module")
def ray_cluster(ray_worker_env: dict[str, str]):
    """A local Ray cluster bound to 127.0.0.1 with two CPUs for one module's tests; its GCS address."""
    # Ray replaces a loopback node address by the host's own unless this is off (read when ray loads)
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    import ray

    saved = {k: os.environ.get(k) for k in ray_worker_env}
    os.environ.update(ray_worker_env)  # the workers start with the driver's environment
    try:
        ctx = ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    yield ctx.address_info["gcs_address"]
    ray.shutdown()
