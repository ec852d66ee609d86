"""pdyn: MPI-parallel particle dynamics of spheres with pluggable broad-phase structures."""

__version__ = "0.1.0"

from .broadphase import REGISTRY, find_contacts, make_broadphase  # noqa: E402
from .config import ConfigError, SimulationConfig, load_config  # noqa: E402
from .particles import ParticleStore  # noqa: E402
from .scenarios import SCENES, make_scene  # noqa: E402
from .simulation import Simulation  # noqa: E402

__all__ = [
    "REGISTRY", "find_contacts", "make_broadphase", "ConfigError", "SimulationConfig",
    "load_config", "ParticleStore", "SCENES", "make_scene", "Simulation", "__version__",
]
