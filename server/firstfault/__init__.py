"""firstfault: find the line that started a distributed GPU job's failure, from its logs."""

__version__ = "0.1.0"
