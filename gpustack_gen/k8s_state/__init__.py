"""Kubernetes objects as ``kubectl get -o json|yaml`` or the API server gives them, read into typed objects.

One home for every reader of cluster state: ``import`` reads its nodes, ConfigMaps and ClusterPolicy here,
and ``verify`` reads nodes, the ClusterPolicy, ConfigMaps, DaemonSets, Deployments, pods and the DRA objects
(ResourceSlices, DeviceClasses, claims) and the Operator namespace's events here, from files or from the API. :mod:`.load` parses text into
located documents, :mod:`.read` opens lists and dispatches each object by (apiVersion, kind) to its reader in
:mod:`.objects`.
"""

from .load import Document, InputSource, InputText, Where, load_documents, parse_documents
from .objects import (
    READERS,
    ClusterPolicy,
    ConfigMap,
    ContainerState,
    DaemonSet,
    Deployment,
    Device,
    DraObject,
    Event,
    KubeObject,
    Node,
    Pod,
    ResourceSlice,
)
from .read import describe, list_items, list_kinds, read_objects, unwrap

__all__ = [
    "READERS",
    "ClusterPolicy",
    "ConfigMap",
    "ContainerState",
    "DaemonSet",
    "Deployment",
    "Device",
    "Document",
    "DraObject",
    "Event",
    "InputSource",
    "InputText",
    "KubeObject",
    "Node",
    "Pod",
    "ResourceSlice",
    "Where",
    "describe",
    "list_items",
    "list_kinds",
    "load_documents",
    "parse_documents",
    "read_objects",
    "unwrap",
]
