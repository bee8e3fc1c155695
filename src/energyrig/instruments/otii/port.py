"""The Otii application's TCP port (imports nothing: the family record and the config's
model both read it, and the record does not import pydantic)."""
from __future__ import annotations

#: The TCP port the Otii application's TCP server listens on unless told otherwise.
DEFAULT_PORT = 1905
