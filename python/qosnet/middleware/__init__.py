"""The QoS middleware of document 001: profiles, communication patterns, the QoS translator.

- `profiles`: applications, curves of execution time against bandwidth per flow, the store
  holding them, and the knee-point rule (document 001 §3.2, §3.3, §3.5.1).
- `profile_io`: the store to and from JSON and CSV; the illustrative example profiles.
- `patterns`: who talks to whom, turning bandwidth per flow into load per link (§3.2.1).
- `translator`: a request in application terms to bandwidth per flow on N nodes, asking a
  resource allocator what it can grant (§3.3-3.5).
- `cluster`: the cluster allocated, a qosnet network description; document 001's testbed.
- `allocator`: the resource allocator (§3.4): exclusive nodes and reserved bandwidth per
  job, through the Rust engine's call admission (document 004 §3.4).

Document 001's evaluation (its request stream and the fluid model of its cluster, §4.3-4.4)
is a reproduction, not part of the service: `qosnet.reproduce.seed001`.

Bandwidths are bytes/s and times seconds throughout; `MB` is document 001's MB/s.
Per-link accounting and routes are the Rust engine's (`qosnet.CallAdmission`); the
translator reaches the resource allocator through the `Allocator` protocol.
"""

from qosnet.middleware.allocator import (
    Allocation,
    AllocationRefused,
    FlowReservation,
    LinkUsage,
    NodeUsage,
    ResourceAllocator,
)
from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.errors import InvalidData, Issue, parse
from qosnet.middleware.patterns import Flow, LinkLoad, Pattern
from qosnet.middleware.profile_io import (
    from_csv,
    from_json,
    load_examples,
    load_profiled,
    to_csv,
    to_json,
)
from qosnet.middleware.profiles import (
    KNEE_TOLERANCE,
    Application,
    Curve,
    ParamValue,
    Point,
    ProfileStore,
    knee,
)
from qosnet.middleware.translator import (
    Allocator,
    Alternative,
    Refusal,
    RefusalReason,
    Request,
    candidates,
    translate,
)
from qosnet.middleware.units import MB

__all__ = [
    "DOCUMENT_001_TESTBED",
    "KNEE_TOLERANCE",
    "MB",
    "Allocation",
    "AllocationRefused",
    "Allocator",
    "Alternative",
    "Application",
    "Cluster",
    "Curve",
    "Flow",
    "FlowReservation",
    "InvalidData",
    "Issue",
    "LinkLoad",
    "LinkUsage",
    "NodeUsage",
    "ParamValue",
    "Pattern",
    "Point",
    "ProfileStore",
    "Refusal",
    "RefusalReason",
    "Request",
    "ResourceAllocator",
    "candidates",
    "from_csv",
    "from_json",
    "knee",
    "load_examples",
    "load_profiled",
    "parse",
    "to_csv",
    "to_json",
    "translate",
]
