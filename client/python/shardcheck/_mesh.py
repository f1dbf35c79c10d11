"""Target meshes: from a jax.sharding.Mesh / AbstractMesh (duck-typed: jax is never imported), a CLI
mesh spec string, or a {name: size} dict, to one validated TargetMesh that both the in-process library
and the daemon's TargetMesh message are built from.

Validation mirrors the daemon's (server/check.c), so a bad mesh raises the ValueError the daemon's
INVALID_ARGUMENT would carry, naming the field: `mesh.axes[1].size: ...`."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

AXIS_TYPES = ("auto", "explicit", "manual")
PLATFORMS = ("tpu", "gpu", "cpu")
# The daemon's bound on a target mesh's device count (MAX_MESH_DEVICES in server/check.c).
MAX_MESH_DEVICES = 1 << 24
# JAX's axis type names, current (jax.sharding.AxisType) and the older AxisTypes spelling.
_JAX_AXIS_TYPES = {"auto": "auto", "explicit": "explicit", "manual": "manual", "user": "explicit",
                   "collective": "manual"}


@dataclasses.dataclass(frozen=True)
class MeshAxis:
    name: str
    size: int
    type: str = "auto"  # "auto", "explicit" or "manual"


@dataclasses.dataclass(frozen=True)
class TargetMesh:
    """The mesh a module will be deployed on: axes in order, device ids in mesh order (None = iota)
    and the platform (None = unspecified)."""
    axes: tuple[MeshAxis, ...]
    device_ids: tuple[int, ...] | None = None
    platform: str | None = None
    device_kind: str | None = None  # jax.Device.device_kind ("TPU v5 lite"): the memory rules' device memory

    @property
    def devices(self) -> int:
        return math.prod(a.size for a in self.axes)

    def spec(self) -> str:
        """The equivalent `--mesh` spec of the CLI."""
        s = ",".join(f"{a.name}={a.size}" + ("" if a.type == "auto" else f":{a.type}") for a in self.axes)
        if self.device_ids is not None:
            s += ";devices=" + ",".join(str(d) for d in self.device_ids)
        if self.platform:
            s += f";platform={self.platform}"
        if self.device_kind:
            s += f";device_kind={self.device_kind}"
        return s


def platform_name(value, field="platform"):
    """Normalizes a platform name as the library does (cuda/rocm are gpu); None/"" = unspecified."""
    if value is None:
        return None
    p = str(value).lower()
    if p in ("", "unspecified"):
        return None
    if p in ("cuda", "rocm"):
        return "gpu"
    if p not in PLATFORMS:
        raise ValueError(f"{field}: unknown platform '{value}' (tpu, gpu or cpu)")
    return p


def _as_int(v):
    """Integer-like sizes (numpy integers) as int; anything else is left for validate() to name."""
    return int(v) if hasattr(v, "__index__") and not isinstance(v, bool) else v


def to_target_mesh(mesh) -> TargetMesh | None:
    """Converts what check(mesh=...) accepts; None stays None (the module's own meshes are the target)."""
    if mesh is None or isinstance(mesh, TargetMesh):
        return validate(mesh) if mesh is not None else None
    if isinstance(mesh, str):
        return validate(parse_spec(mesh))
    if isinstance(mesh, Mapping):
        return validate(TargetMesh(tuple(MeshAxis(name, _as_int(size)) for name, size in mesh.items())))
    if hasattr(mesh, "axis_names"):
        return validate(from_jax(mesh))
    raise TypeError("mesh must be a jax.sharding.Mesh or AbstractMesh, a mesh spec string "
                    f"('data=2,model=4:explicit'), or a {{name: size}} dict; got {type(mesh).__name__}")


def validate(m: TargetMesh) -> TargetMesh:
    """The daemon's checks of a TargetMesh, with its messages; returns m."""
    if not m.axes:
        raise ValueError("mesh.axes: a target mesh needs at least one axis")
    devices = 1
    seen = set()
    for i, a in enumerate(m.axes):
        if not isinstance(a.name, str):
            raise ValueError(f"mesh.axes[{i}].name: axis names must be strings, got {type(a.name).__name__}")
        if not a.name:
            raise ValueError(f"mesh.axes[{i}].name: empty axis name")
        if a.name in seen:
            raise ValueError(f'mesh.axes[{i}].name: duplicate axis "{a.name[:64]}"')
        seen.add(a.name)
        if isinstance(a.size, bool) or not isinstance(a.size, int):
            raise ValueError(f'mesh.axes[{i}].size: axis "{a.name[:64]}" has size {a.size!r}, must be an integer')
        if a.size < 1:
            raise ValueError(f'mesh.axes[{i}].size: axis "{a.name[:64]}" has size {a.size}, must be >= 1')
        if a.type not in AXIS_TYPES:
            raise ValueError(f"mesh.axes[{i}].type: unknown axis type {a.type!r} (auto, explicit or manual)")
        devices *= a.size
        if devices > MAX_MESH_DEVICES:
            raise ValueError(f"mesh.axes: more than {MAX_MESH_DEVICES} devices")
    if m.device_ids is not None:
        if len(m.device_ids) != devices:
            raise ValueError(f"mesh.device_ids: {len(m.device_ids)} ids for a mesh of {devices} devices")
        used = bytearray(devices)
        for i, d in enumerate(m.device_ids):
            why = "out of range" if not 0 <= d < devices else "a duplicate" if used[d] else None
            if why:
                raise ValueError(f"mesh.device_ids[{i}]: device id {d} is {why} (mesh of {devices} devices)")
            used[d] = 1
    if m.platform is not None and m.platform not in PLATFORMS:
        raise ValueError(f"mesh.platform: unknown platform {m.platform!r} (tpu, gpu or cpu)")
    return m


# --- the CLI's mesh spec: "data=2,model=4:explicit[;devices=0,1,...][;platform=tpu]" ----------------
# The same grammar and messages as sc_mesh_parse() in lib/check.c (a test compares the two), so a spec
# works the same in-process, through a daemon, and in the CLI.

def _is_name_char(c):
    return c.isascii() and (c.isalnum() or c == "_")


def _digits(s, i):
    j, v = i, 0
    while j < len(s) and "0" <= s[j] <= "9":
        if v > ((1 << 63) - 1 - 9) // 10:  # sc_mesh_parse's overflow guard
            return None, i
        v, j = v * 10 + int(s[j]), j + 1
    return (v, j) if j > i else (None, i)


def parse_spec(spec: str) -> TargetMesh:
    s, i = spec, 0
    axes: list[MeshAxis] = []
    devices: list[int] = []
    platform = device_kind = None
    while i < len(s) and s[i] != ";":
        j = i
        while j < len(s) and _is_name_char(s[j]):
            j += 1
        if j == i:
            raise ValueError(f"mesh spec: expected an axis name at '{s[i:]}' "
                             "(format: name=size[:auto|explicit|manual],...)")
        name, i = s[i:j], j
        if i >= len(s) or s[i] != "=":
            raise ValueError(f"mesh spec: expected '=' after axis '{name}'")
        size, i = _digits(s, i + 1)
        if size is None:
            raise ValueError(f"mesh spec: axis '{name}' needs a positive integer size")
        kind = "auto"
        if i < len(s) and s[i] == ":":
            j = i + 1
            while j < len(s) and s[j].isascii() and s[j].isalpha():
                j += 1
            kind, i = s[i + 1:j], j
            if kind not in AXIS_TYPES:
                raise ValueError(f"mesh spec: axis '{name}' has unknown type '{kind}' (auto, explicit or manual)")
        axes.append(MeshAxis(name, size, kind))
        if i < len(s) and s[i] == ",":
            i += 1
        elif i < len(s) and s[i] != ";":
            raise ValueError(f"mesh spec: unexpected '{s[i]}' after axis '{name}'")
    while i < len(s) and s[i] == ";":
        i += 1
        if s.startswith("devices=", i):
            i += 8
            while i < len(s) and s[i] != ";":
                d, i = _digits(s, i)
                if d is None:
                    raise ValueError("mesh spec: devices= needs comma-separated device ids")
                devices.append(d)
                if i < len(s) and s[i] == ",":
                    i += 1
        elif s.startswith("platform=", i):
            end = s.find(";", i + 9)
            end = len(s) if end < 0 else end
            name = s[i + 9:end]
            try:
                platform = platform_name(name)
            except ValueError:
                raise ValueError(f"mesh spec: unknown platform '{name}' (tpu, gpu or cpu)") from None
            i = end
        elif s.startswith("device_kind=", i):
            end = s.find(";", i + 12)
            end = len(s) if end < 0 else end
            device_kind, i = s[i + 12:end], end
        else:
            raise ValueError(f"mesh spec: unknown section '{s[i:]}' (devices=..., platform=... or device_kind=...)")
    # The semantic checks (sizes, duplicates, device count) are validate()'s, as sc_mesh_parse leaves
    # them to sc_mesh_validate.
    return validate(TargetMesh(tuple(axes), tuple(devices) if devices else None, platform, device_kind))


# --- jax.sharding.Mesh / AbstractMesh, duck-typed -------------------------------------------------------

def _axis_type_name(t, i):
    raw = getattr(t, "name", t)  # an enum member (AxisType.Explicit) or a string
    name = _JAX_AXIS_TYPES.get(str(raw).lower()) if raw is not None else None
    if name is None:
        raise ValueError(f"mesh.axes[{i}].type: unknown axis type {t!r} (Auto, Explicit or Manual)")
    return name


def _axis_types(mesh, names):
    """JAX's axis_types: a tuple aligned with axis_names (current JAX), or a mapping from type to an axis
    name or names (JAX 0.5's AxisTypes); absent means Auto."""
    types = getattr(mesh, "axis_types", None)
    if types is None:
        return ["auto"] * len(names)
    if isinstance(types, Mapping):
        by_name = {}
        for t, axes in types.items():
            for a in (axes,) if isinstance(axes, str) else tuple(axes):
                by_name[a] = t
        return [_axis_type_name(by_name[n], i) if n in by_name else "auto" for i, n in enumerate(names)]
    if not isinstance(types, (tuple, list)):
        types = (types,)
    if len(types) != len(names):
        raise ValueError(f"mesh.axis_types: {len(types)} axis types for {len(names)} axes")
    return [_axis_type_name(t, i) for i, t in enumerate(types)]


def _mesh_devices(mesh):
    """mesh.devices, or None for an AbstractMesh (which has none, or raises when asked)."""
    try:
        return getattr(mesh, "devices", None)
    except Exception:  # noqa: BLE001 - AbstractMesh versions raise various errors here
        return None


def _flat(devices):
    flat = getattr(devices, "flat", None)
    if flat is not None:
        return list(flat)
    out = []
    stack = [iter(devices)]
    while stack:  # nested sequences in row-major order, without recursion
        for d in stack[-1]:
            if isinstance(d, (list, tuple)):
                stack.append(iter(d))
                break
            out.append(d)
        else:
            stack.pop()
    return out


def _platform_of(devices):
    found = {str(getattr(d, "platform", "") or "").lower() for d in devices}
    found.discard("")
    known = set()
    for p in found:
        try:
            q = platform_name(p)
        except ValueError:
            continue  # a platform shardcheck has no rules for: leave it unspecified
        if q:
            known.add(q)
    if len(known) > 1:
        raise ValueError(f"mesh.platform: the mesh's devices are on several platforms ({', '.join(sorted(known))})")
    return known.pop() if known else None


def from_jax(mesh) -> TargetMesh:
    names = tuple(mesh.axis_names)
    shape = getattr(mesh, "shape", None)
    devices = _mesh_devices(mesh)
    if isinstance(shape, Mapping):
        sizes = [shape[n] for n in names]
    elif getattr(mesh, "axis_sizes", None) is not None:
        sizes = list(mesh.axis_sizes)
    elif devices is not None and hasattr(devices, "shape"):
        sizes = list(devices.shape)
    else:
        raise ValueError("mesh.axes: the mesh has neither a shape nor axis_sizes")
    if len(sizes) != len(names):
        raise ValueError(f"mesh.axes: {len(sizes)} sizes for {len(names)} axis names")
    sizes = [_as_int(s) for s in sizes]
    types = _axis_types(mesh, names)
    axes = tuple(MeshAxis(n, s, t) for n, s, t in zip(names, sizes, types))
    ids = platform = device_kind = None
    if devices is not None:
        dev_shape = getattr(devices, "shape", None)
        if dev_shape is not None and tuple(dev_shape) != tuple(sizes):
            raise ValueError(f"mesh.devices: shape {tuple(dev_shape)} does not match the axis sizes {tuple(sizes)}")
        flat = _flat(devices)
        try:
            ids = tuple(int(d.id) for d in flat)
        except AttributeError:
            raise ValueError("mesh.devices: every device needs an `id` (a jax.Device)") from None
        platform = _platform_of(flat)
        device_kind = getattr(flat[0], "device_kind", None) if flat else None
    else:  # an AbstractMesh may know its device kind
        device = getattr(mesh, "abstract_device", None)
        platform = _platform_of([device]) if device is not None else None
    return TargetMesh(axes, ids, platform, str(device_kind) if device_kind else None)
