"""Read PyTorch checkpoints (``torch.save`` of a state dict) without PyTorch.

Two containers exist:

* the *legacy* format (PyTorch < 1.6 and ``_use_new_zipfile_serialization=False``):
  five pickles written one after another -- a magic number, the protocol
  version (1001), a ``sys_info`` dict, the object itself (tensors refer to
  their storages through persistent ids), and the list of storage keys -- and
  after them, for each key in that list, the storage's element count as a
  little-endian int64 followed by its raw little-endian elements;
* the *zip* format (PyTorch >= 1.6): a zip archive with ``<prefix>/data.pkl``
  (the object) and one entry ``<prefix>/data/<key>`` of raw bytes per storage.

Only the classes a state dict needs are ever resolved while unpickling
(:data:`ALLOWED_GLOBALS`); any other global, e.g. ``os.system`` or
``builtins.eval``, raises :class:`pickle.UnpicklingError` before anything runs.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, BinaryIO

import numpy as np

LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL_VERSION = 1001


@dataclass(frozen=True)
class StorageType:
    """Stand-in for a ``torch.<Name>Storage`` class: its name and element dtype."""

    name: str
    dtype: np.dtype


@dataclass(frozen=True)
class TensorRef:
    """A tensor as described by ``torch._utils._rebuild_tensor_v2``.

    ``storage_key`` names the storage, ``offset`` is the storage offset in
    elements, ``size`` the shape and ``stride`` the strides in elements.
    """

    storage_key: str
    dtype: np.dtype
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    """Stand-in for ``torch._utils._rebuild_tensor_v2``: records a :class:`TensorRef`.

    ``storage`` is the ``(key, dtype)`` pair returned by ``persistent_load``;
    the storage bytes are read only after unpickling (legacy files store them
    after the pickle), so the tensor is materialised later.
    """
    if not (isinstance(storage, tuple) and len(storage) == 2):
        raise pickle.UnpicklingError("tensor storage is not a persistent storage reference")
    key, dtype = storage
    try:
        ref = TensorRef(key, dtype, int(storage_offset), tuple(int(d) for d in size),
                        tuple(int(s) for s in stride))
    except (TypeError, ValueError) as error:
        raise pickle.UnpicklingError(f"malformed tensor arguments: {error}") from None
    if len(ref.size) != len(ref.stride) or min(ref.size + ref.stride + (ref.offset,), default=0) < 0:
        raise pickle.UnpicklingError(f"malformed tensor size {ref.size} / stride {ref.stride}")
    return ref


_STORAGE_DTYPES = {
    "DoubleStorage": "<f8", "FloatStorage": "<f4", "HalfStorage": "<f2",
    "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2",
    "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "?",
}

#: (module, name) -> object, the only globals a checkpoint may refer to.
ALLOWED_GLOBALS = MappingProxyType({
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    **{("torch", name): StorageType(name, np.dtype(code)) for name, code in _STORAGE_DTYPES.items()},
})


class RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that resolves only :data:`ALLOWED_GLOBALS` and torch storage ids.

    ``storages`` (a dict) receives ``key -> (dtype, numel)`` for every storage
    met; ``persistent_load`` returns ``(key, dtype)``, which
    :func:`_rebuild_tensor_v2` turns into a :class:`TensorRef`.
    """

    def __init__(self, file: BinaryIO, storages: dict[str, tuple[np.dtype, int]]):
        super().__init__(file)
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        """Return the allowed stand-in for ``module.name``; refuse anything else."""
        try:
            return ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed") from None

    def persistent_load(self, pid: Any) -> tuple[str, np.dtype]:
        """Resolve ``('storage', StorageType, key, location, numel[, view_metadata])``."""
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"
                and isinstance(pid[1], StorageType)):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r:.80}")
        storage_type, key, numel = pid[1], str(pid[2]), pid[4]
        if len(pid) == 6 and pid[5] is not None:
            raise pickle.UnpicklingError("storage views (legacy view_metadata) are not supported")
        if not isinstance(numel, int) or numel < 0:
            raise pickle.UnpicklingError(f"storage {key}: bad element count {numel!r}")
        known = self._storages.setdefault(key, (storage_type.dtype, numel))
        if known != (storage_type.dtype, numel):
            raise pickle.UnpicklingError(f"storage {key} declared twice with different types")
        return key, storage_type.dtype


class _RefusingUnpickler(pickle.Unpickler):
    """Unpickler for the legacy header pickles, which hold only plain data."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed in a header")


def _materialise(ref: TensorRef, storage: np.ndarray) -> np.ndarray:
    """Copy the elements that ``ref`` views in ``storage`` into a C-contiguous array."""
    if 0 in ref.size:
        return np.zeros(ref.size, dtype=ref.dtype)
    last = ref.offset + sum((n - 1) * s for n, s in zip(ref.size, ref.stride))
    if last >= storage.size:
        raise pickle.UnpicklingError(
            f"tensor (offset {ref.offset}, size {ref.size}, stride {ref.stride}) "
            f"reads past its storage of {storage.size} elements")
    view = np.lib.stride_tricks.as_strided(
        storage[ref.offset:], shape=ref.size,
        strides=tuple(s * storage.itemsize for s in ref.stride), writeable=False)
    return np.array(view, order="C")  # a copy; keeps rank 0 for scalars


def _to_state_dict(obj: Any, storages: dict[str, np.ndarray]) -> collections.OrderedDict:
    """Turn the unpickled mapping of name -> TensorRef into name -> ndarray."""
    if not isinstance(obj, dict):
        raise pickle.UnpicklingError(f"checkpoint holds a {type(obj).__name__}, not a state dict")
    result = collections.OrderedDict()
    for name, value in obj.items():
        if not isinstance(value, TensorRef):
            raise pickle.UnpicklingError(f"state dict entry {name!r} is not a tensor")
        result[name] = _materialise(value, storages[value.storage_key])
    return result


def _load_legacy(data: bytes) -> collections.OrderedDict:
    """Parse the legacy container (see the module docstring)."""
    stream = io.BytesIO(data)
    if _RefusingUnpickler(stream).load() != LEGACY_MAGIC_NUMBER:
        raise pickle.UnpicklingError("not a PyTorch legacy checkpoint (bad magic number)")
    if _RefusingUnpickler(stream).load() != LEGACY_PROTOCOL_VERSION:
        raise pickle.UnpicklingError("unsupported legacy protocol version")
    sys_info = _RefusingUnpickler(stream).load()
    if not (isinstance(sys_info, dict) and sys_info.get("little_endian")):
        raise pickle.UnpicklingError("only little-endian checkpoints are supported")
    declared: dict[str, tuple[np.dtype, int]] = {}
    obj = RestrictedUnpickler(stream, declared).load()
    keys = _RefusingUnpickler(stream).load()
    if not (isinstance(keys, list) and set(map(str, keys)) == set(declared)):
        raise pickle.UnpicklingError("storage key list does not match the tensors")
    storages: dict[str, np.ndarray] = {}
    position = stream.tell()
    for key in map(str, keys):
        dtype, numel = declared[key]
        if position + 8 > len(data):
            raise pickle.UnpicklingError(f"storage {key}: truncated file")
        (stored,) = struct.unpack_from("<q", data, position)
        end = position + 8 + stored * dtype.itemsize
        if stored != numel or end > len(data):
            raise pickle.UnpicklingError(f"storage {key}: {stored} elements stored, {numel} declared")
        storages[key] = np.frombuffer(data, dtype=dtype, count=numel, offset=position + 8)
        position = end
    return _to_state_dict(obj, storages)


def _load_zip(file: BinaryIO) -> collections.OrderedDict:
    """Parse the zip container (see the module docstring)."""
    with zipfile.ZipFile(file) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise pickle.UnpicklingError("zip checkpoint without exactly one <prefix>/data.pkl")
        prefix = pickles[0][: -len("data.pkl")]
        if f"{prefix}byteorder" in archive.namelist() and archive.read(f"{prefix}byteorder") != b"little":
            raise pickle.UnpicklingError("only little-endian checkpoints are supported")
        declared: dict[str, tuple[np.dtype, int]] = {}
        obj = RestrictedUnpickler(io.BytesIO(archive.read(pickles[0])), declared).load()
        storages = {}
        for key, (dtype, numel) in declared.items():
            raw = archive.read(f"{prefix}data/{key}")
            if len(raw) < numel * dtype.itemsize:
                raise pickle.UnpicklingError(f"storage {key}: {len(raw)} bytes, {numel} elements declared")
            storages[key] = np.frombuffer(raw, dtype=dtype, count=numel)
    return _to_state_dict(obj, storages)


def load_state_dict(path: str | Path) -> collections.OrderedDict:
    """Load a PyTorch state dict checkpoint as ``OrderedDict[name, numpy.ndarray]``.

    The container (legacy or zip) is detected from the file. Each array is a
    C-contiguous copy in its storage's dtype (``FloatStorage`` -> float32,
    ``LongStorage`` -> int64, ...), honouring the tensor's storage offset,
    size and stride. Raises :class:`pickle.UnpicklingError` for a forbidden
    global, a malformed or truncated file, or an object that is not a mapping
    of names to tensors.
    """
    path = Path(path)
    if zipfile.is_zipfile(path):
        with path.open("rb") as file:
            return _load_zip(file)
    return _load_legacy(path.read_bytes())
