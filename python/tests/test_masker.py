"""Opening a Masker: the configuration's forms, overrides, properties, errors, lifetime."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import depthmask
from reference import bits, reference_mask

CPU = {"backend.kind": "cpu"}


def _small():
    depth = np.array([[0, 500, 1500, 2500]], dtype=np.uint16)
    mask = np.array([[1, 1, 0, 1]], dtype=np.uint8)
    return depth, mask


def test_defaults(cpu):
    assert cpu.backend == "cpu"
    assert cpu.device == -1
    assert isinstance(cpu.reason, str) and cpu.reason
    assert "scale: 0.001" in cpu.config_yaml
    depth, mask = _small()
    out = cpu.mask(depth, mask)
    assert out.dtype == np.float32 and out.shape == depth.shape
    assert np.array_equal(bits(out), bits(reference_mask(depth, mask, {})))


@pytest.mark.parametrize("form", ["dict", "yaml", "path", "pathlike"])
def test_config_forms(form, tmp_path):
    cfg = {"depth": {"scale": 0.0001, "max": 0.2}, "mask": {"invert": True}}
    yaml = "depth:\n  scale: 0.0001\n  max: 0.2\nmask:\n  invert: true\n"
    file = tmp_path / "c.yaml"
    file.write_text(yaml)
    config = {"dict": cfg, "yaml": yaml, "path": str(file), "pathlike": pathlib.Path(file)}[form]
    depth, mask = _small()
    with depthmask.Masker(config, overrides=CPU) as m:
        assert "scale: 0.0001" in m.config_yaml
        assert np.array_equal(bits(m.mask(depth, mask)), bits(reference_mask(depth, mask, cfg)))


def test_overrides_values():
    over = {"backend.kind": "cpu", "mask.labels": [1, 3], "mask.invert": False, "output.invalid": float("nan"),
            "depth.max": 2}
    with depthmask.Masker(overrides=over) as m:
        text = m.config_yaml
        assert "labels: [1, 3]" in text or "- 1" in text
        depth = np.array([[1000, 1000, 1000]], dtype=np.uint16)
        mask = np.array([[1, 2, 3]], dtype=np.uint8)
        out = m.mask(depth, mask)
        cfg = {"mask": {"labels": [1, 3]}, "output": {"invalid": float("nan")}, "depth": {"max": 2}}
        assert np.array_equal(bits(out), bits(reference_mask(depth, mask, cfg)))
        assert np.isnan(out[0, 1])


def test_overrides_as_strings():
    with depthmask.Masker(overrides=["backend.kind=cpu", "mask.threshold=7"]) as m:
        assert "threshold: 7" in m.config_yaml


def test_string_overrides_are_taken_as_written():
    # A pattern opening with {id} is no YAML map for a string key; None unsets an optional one.
    over = {"backend.kind": "cpu", "input.depth": "{id}-transparent-depth-img.exr", "input.color": None,
            "input.mask": "{id}-mask.png"}
    with depthmask.Masker(overrides=over) as m:
        text = m.config_yaml
        assert 'depth: "{id}-transparent-depth-img.exr"' in text
        assert 'mask: "{id}-mask.png"' in text
        assert "color: ~" in text
    # The YAML quoted form keeps working; other keys keep YAML's reading.
    with depthmask.Masker(overrides=["backend.kind=cpu", 'input.depth="{id}.exr"', "mask.labels=[1, 3]"]) as m:
        assert 'depth: "{id}.exr"' in m.config_yaml
        assert "labels: [1, 3]" in m.config_yaml
    with pytest.raises(depthmask.ConfigError) as e:
        depthmask.Masker(overrides={"backend.kind": "cpu", "input.depth": "depth.exr"})
    assert "exactly one '{id}'" in str(e.value)


def test_bad_key_is_a_config_error():
    with pytest.raises(depthmask.ConfigError) as e:
        depthmask.Masker({"mask": {"nonsense": 1}}, overrides=CPU)
    assert e.value.status == 2
    assert "nonsense" in str(e.value) and e.value.message == str(e.value)


def test_bad_value_is_a_config_error():
    with pytest.raises(depthmask.ConfigError, match="erode"):
        depthmask.Masker(overrides={"backend.kind": "cpu", "mask.erode": 99})


def test_missing_config_file(tmp_path):
    with pytest.raises(depthmask.Error):
        depthmask.Masker(str(tmp_path / "missing.yaml"), overrides=CPU)


def test_config_type_error():
    with pytest.raises(TypeError):
        depthmask.Masker(42)


def test_close_and_use_after_close():
    m = depthmask.Masker(overrides=CPU)
    assert not m.closed
    m.close()
    m.close()  # twice is fine
    assert m.closed
    depth, mask = _small()
    with pytest.raises(depthmask.Error, match="closed"):
        m.mask(depth, mask)
    with pytest.raises(depthmask.Error, match="closed"):
        m.config_yaml
    with pytest.raises(depthmask.Error, match="closed"):
        m.run()
    assert "closed" in repr(m)


def test_context_manager_closes():
    with depthmask.Masker(overrides=CPU) as m:
        assert m.backend == "cpu"
    assert m.closed


def test_errors_are_also_builtin_classes():
    assert issubclass(depthmask.InputError, ValueError)
    assert issubclass(depthmask.ConfigError, ValueError)
    assert issubclass(depthmask.PlatformError, RuntimeError)
    assert not issubclass(depthmask.Interrupted, InterruptedError)
