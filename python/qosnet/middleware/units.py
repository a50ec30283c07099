"""Units of the middleware: bandwidth in bytes/s, time in seconds, everywhere.

Document 001 states bandwidths in MBps ("8 MBps per flow", "knee-points of 40 MBps"). We
read its MB as 10^6 bytes, the usual unit of network bandwidth (document 001 does not say
which MB it means); `MB` converts: `40 * MB` is the document's 40 MBps in bytes/s.
"""

from __future__ import annotations

__all__ = ["MB"]

#: One MB/s of document 001 in bytes/s.
MB = 1_000_000.0
