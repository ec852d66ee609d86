"""pdyn: MPI-parallel particle dynamics of spheres with pluggable broad-phase structures."""

from .broadphase import REGISTRY, find_contacts, make_broadphase
from .config import ConfigError, SimulationConfig, load_config
from .particles import ParticleStore
from .restart import from_checkpoint
from .scenarios import SCENES, make_scene
from .simulation import Simulation
from .version import __version__

__all__ = [
    "REGISTRY", "find_contacts", "make_broadphase", "ConfigError", "SimulationConfig",
    "load_config", "ParticleStore", "SCENES", "make_scene", "Simulation", "from_checkpoint",
    "__version__",
]
