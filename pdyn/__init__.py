"""pdyn: MPI-parallel particle dynamics of spheres with pluggable broad-phase structures.

The package face's names are imported on first use (PEP 562), so that ``pdyn`` the command
takes over SIGINT and SIGTERM before numba and the kernels load (``pdyn.cli.main``)."""

from importlib import import_module

from .version import __version__

#: each public name and the module it comes from
_FACE = {
    "REGISTRY": ".broadphase", "find_contacts": ".broadphase", "make_broadphase": ".broadphase",
    "ConfigError": ".config", "SimulationConfig": ".config", "load_config": ".config",
    "ParticleStore": ".particles", "from_checkpoint": ".restart", "SCENES": ".scenarios",
    "make_scene": ".scenarios", "Simulation": ".simulation",
}

__all__ = [*_FACE, "__version__"]


def __getattr__(name: str):
    if name not in _FACE:
        raise AttributeError(f"module 'pdyn' has no attribute {name!r}")
    value = getattr(import_module(_FACE[name], __name__), name)
    globals()[name] = value
    return value
