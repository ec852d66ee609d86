"""Parallel pieces of the step (migration, ghosts) and the MPI wrapper; with one rank they
reduce to plain calls (CONVENTIONS.md habit 1)."""

from .comm import SerialComm, get_comm
from .exchange import SerialExchange, make_exchange

__all__ = ["SerialComm", "get_comm", "SerialExchange", "make_exchange"]
