"""server.models.torch_pickle: reads real and synthetic PyTorch checkpoints, refuses code."""

from __future__ import annotations

import collections
import io
import pickle
import struct
import sys
import types
import zipfile

import numpy as np
import pytest

from server.models import torch_pickle
from server.models.convert import default_checkpoint


# ----------------------------------------------------------------- the real file

@pytest.fixture(scope="module")
def state_dict():
    """The packaged EfficientNet-Lite0 checkpoint (a legacy-format file)."""
    path = default_checkpoint()
    assert not zipfile.is_zipfile(path), "the packaged checkpoint is expected in the legacy format"
    return torch_pickle.load_state_dict(path)


def test_real_checkpoint_keys_and_shapes(state_dict):
    assert isinstance(state_dict, collections.OrderedDict)
    assert len(state_dict) == 296
    assert list(state_dict)[:2] == ["_conv_stem.weight", "_bn0.weight"]
    expected = {
        "_conv_stem.weight": (32, 3, 3, 3),
        "_blocks.0._depthwise_conv.weight": (32, 1, 3, 3),
        "_blocks.3._depthwise_conv.weight": (144, 1, 5, 5),
        "_blocks.15._project_conv.weight": (320, 1152, 1, 1),
        "_conv_head.weight": (1280, 320, 1, 1),
        "_fc.weight": (1000, 1280),
        "_fc.bias": (1000,),
    }
    for key, shape in expected.items():
        assert state_dict[key].shape == shape, key
        assert state_dict[key].dtype == np.float32, key
        assert state_dict[key].flags.c_contiguous
    tracked = state_dict["_bn0.num_batches_tracked"]
    assert tracked.shape == () and tracked.dtype == np.int64
    assert not any("_se_" in key for key in state_dict), "Lite has no squeeze-excite"
    # Values read from the storage bytes (regression values of this reader).
    np.testing.assert_allclose(state_dict["_fc.bias"][:3], [0.03205391, -0.01598576, 0.00529074], rtol=1e-6)
    assert np.all(state_dict["_bn0.running_var"] >= 0)


# --------------------------------------------------------- synthetic checkpoints

class _FakeStorage:
    def __init__(self, key: str, data: np.ndarray):
        self.key, self.data = key, np.ascontiguousarray(data)


class _FakeTensor:
    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, tuple(size), tuple(stride), False, collections.OrderedDict())

    def __reduce__(self):
        return sys.modules["torch._utils"]._rebuild_tensor_v2, self.args


@pytest.fixture
def fake_torch(monkeypatch):
    """Importable stand-ins named like torch's, so that pickle writes torch's globals."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch._utils")

    def _rebuild_tensor_v2(*args):  # pragma: no cover - never called while pickling
        raise AssertionError

    _rebuild_tensor_v2.__module__ = utils.__name__
    _rebuild_tensor_v2.__qualname__ = "_rebuild_tensor_v2"
    utils._rebuild_tensor_v2 = _rebuild_tensor_v2
    for name in ("FloatStorage", "LongStorage"):
        cls = type(name, (), {"__module__": "torch"})
        setattr(torch, name, cls)
    torch._utils = utils
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch._utils", utils)
    return torch


def _pickle_state(obj, torch) -> bytes:
    """Pickle ``obj`` (protocol 2) with storages as persistent ids, as torch.save does."""
    class Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, _FakeStorage):
                kind = torch.FloatStorage if value.data.dtype == np.float32 else torch.LongStorage
                return ("storage", kind, value.key, "cpu", value.data.size)
            return None

    stream = io.BytesIO()
    Pickler(stream, protocol=2).dump(obj)
    return stream.getvalue()


def _legacy_file(obj, storages, torch, main_pickle: bytes | None = None) -> bytes:
    """Build a legacy-format checkpoint: 3 header pickles, the object, keys, raw storages."""
    out = io.BytesIO()
    for header in (torch_pickle.LEGACY_MAGIC_NUMBER, torch_pickle.LEGACY_PROTOCOL_VERSION,
                   {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(header, out, protocol=2)
    out.write(main_pickle if main_pickle is not None else _pickle_state(obj, torch))
    pickle.dump([s.key for s in storages], out, protocol=2)
    for storage in storages:
        out.write(struct.pack("<q", storage.data.size) + storage.data.astype(storage.data.dtype.newbyteorder("<")).tobytes())
    return out.getvalue()


def _zip_file(obj, storages, torch, main_pickle: bytes | None = None) -> bytes:
    """Build a zip-format checkpoint (archive/data.pkl + archive/data/<key>)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("archive/data.pkl", main_pickle if main_pickle is not None else _pickle_state(obj, torch))
        archive.writestr("archive/byteorder", "little")
        for storage in storages:
            archive.writestr(f"archive/data/{storage.key}", storage.data.tobytes())
        archive.writestr("archive/version", "3\n")
    return out.getvalue()


def _synthetic():
    """Tensors exercising storage offset, non-contiguous stride, sharing and int64."""
    base = _FakeStorage("0", np.arange(12, dtype=np.float32))
    count = _FakeStorage("1", np.array([7], dtype=np.int64))
    state = collections.OrderedDict([
        ("matrix", _FakeTensor(base, 0, (3, 4), (4, 1))),
        ("transposed", _FakeTensor(base, 0, (4, 3), (1, 4))),
        ("tail", _FakeTensor(base, 10, (2,), (1,))),
        ("every_other_row", _FakeTensor(base, 1, (2, 2), (8, 2))),
        ("count", _FakeTensor(count, 0, (), ())),
    ])
    return state, [base, count]


@pytest.mark.parametrize("writer", [_legacy_file, _zip_file], ids=["legacy", "zip"])
def test_synthetic_offsets_strides_and_dtypes(tmp_path, fake_torch, writer):
    state, storages = _synthetic()
    path = tmp_path / "model.pth"
    path.write_bytes(writer(state, storages, fake_torch))
    loaded = torch_pickle.load_state_dict(path)
    base = np.arange(12, dtype=np.float32)
    assert list(loaded) == list(state)
    np.testing.assert_array_equal(loaded["matrix"], base.reshape(3, 4))
    np.testing.assert_array_equal(loaded["transposed"], base.reshape(3, 4).T)
    assert loaded["transposed"].flags.c_contiguous
    np.testing.assert_array_equal(loaded["tail"], [10, 11])
    np.testing.assert_array_equal(loaded["every_other_row"], [[1, 3], [9, 11]])
    assert loaded["count"].dtype == np.int64 and loaded["count"].shape == () and loaded["count"] == 7


def test_tensor_reading_past_its_storage_is_refused(tmp_path, fake_torch):
    base = _FakeStorage("0", np.arange(4, dtype=np.float32))
    state = {"too_big": _FakeTensor(base, 2, (3,), (1,))}
    path = tmp_path / "bad.pth"
    path.write_bytes(_legacy_file(state, [base], fake_torch))
    with pytest.raises(pickle.UnpicklingError, match="past its storage"):
        torch_pickle.load_state_dict(path)


def test_truncated_legacy_file_is_refused(tmp_path, fake_torch):
    state, storages = _synthetic()
    path = tmp_path / "truncated.pth"
    path.write_bytes(_legacy_file(state, storages, fake_torch)[:-20])
    with pytest.raises(pickle.UnpicklingError):
        torch_pickle.load_state_dict(path)


# ------------------------------------------------------------------- malicious

def _os_system_pickle(marker) -> bytes:
    """A protocol-0 pickle whose loading would run ``os.system('touch MARKER')``."""
    return f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()


@pytest.mark.parametrize("writer", [_legacy_file, _zip_file], ids=["legacy", "zip"])
def test_os_system_is_refused(tmp_path, fake_torch, writer):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pth"
    path.write_bytes(writer(None, [], fake_torch, main_pickle=_os_system_pickle(marker)))
    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        torch_pickle.load_state_dict(path)
    assert not marker.exists()


@pytest.mark.parametrize("module,name", [("builtins", "eval"), ("torch", "load"), ("numpy", "frombuffer"),
                                         ("collections", "namedtuple"), ("torch._utils", "_rebuild_parameter")])
def test_only_allowed_globals_resolve(module, name):
    unpickler = torch_pickle.RestrictedUnpickler(io.BytesIO(b""), {})
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        unpickler.find_class(module, name)


def test_globals_in_the_legacy_header_are_refused(tmp_path, fake_torch):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil_header.pth"
    path.write_bytes(_os_system_pickle(marker) + _legacy_file(None, [], fake_torch, main_pickle=b"N."))
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        torch_pickle.load_state_dict(path)
    assert not marker.exists()


def test_non_state_dict_object_is_refused(tmp_path, fake_torch):
    path = tmp_path / "list.pth"
    path.write_bytes(_legacy_file(None, [], fake_torch, main_pickle=pickle.dumps([1, 2], protocol=2)))
    with pytest.raises(pickle.UnpicklingError, match="not a state dict"):
        torch_pickle.load_state_dict(path)
