"""Parallel pieces of the step (migration, ghosts) and the MPI wrapper; with one rank and no
periodic axis they reduce to plain calls, so the core works on one rank."""

from .comm import MPIComm, SerialComm, get_comm
from .exchange import BlockExchange, ExchangeError, SerialExchange, StoreChanges, make_exchange

__all__ = ["MPIComm", "SerialComm", "get_comm", "BlockExchange", "ExchangeError",
           "SerialExchange", "StoreChanges", "make_exchange"]
