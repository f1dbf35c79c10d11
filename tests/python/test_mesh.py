"""Mesh conversion on its own: jax Mesh / AbstractMesh fakes, dicts and CLI spec strings to the target
mesh; the spec parser against the library's sc_mesh_parse; bad meshes named as the daemon names them."""
import ctypes
import enum
import types
import unittest

import support
from support import AbstractMesh, AxisType, Device, DeviceArray, Mesh, make_mesh

from shardcheck import MeshAxis, TargetMesh, _lib, _mesh, to_target_mesh


class JaxMeshTest(unittest.TestCase):
    def test_mesh_axes_types_devices_platform(self):
        m = make_mesh((2, 4), ("data", "model"), ids=[7, 6, 5, 4, 3, 2, 1, 0],
                      axis_types=(AxisType.Explicit, AxisType.Manual))
        t = to_target_mesh(m)
        self.assertEqual(t.axes, (MeshAxis("data", 2, "explicit"), MeshAxis("model", 4, "manual")))
        self.assertEqual(t.device_ids, (7, 6, 5, 4, 3, 2, 1, 0))  # row-major, as mesh.devices.flat
        self.assertEqual(t.platform, "tpu")
        self.assertEqual(t.spec(), "data=2:explicit,model=4:manual;devices=7,6,5,4,3,2,1,0;platform=tpu;device_kind=TPU v5 lite")
        self.assertEqual(t.device_kind, "TPU v5 lite")

    def test_default_axis_types_and_gpu(self):
        m = make_mesh((4,), ("x",), platform="gpu", axis_types=None)
        m.axis_types = None  # JAX before axis types
        t = to_target_mesh(m)
        self.assertEqual(t.axes, (MeshAxis("x", 4, "auto"),))
        self.assertEqual(t.platform, "gpu")
        self.assertEqual(to_target_mesh(make_mesh((2,), ("x",), platform="cuda")).platform, "gpu")

    def test_unknown_device_platform_is_unspecified(self):
        self.assertIsNone(to_target_mesh(make_mesh((2,), ("x",), platform="METAL")).platform)

    def test_nested_list_devices(self):
        m = types.SimpleNamespace(axis_names=("a", "b"), shape={"a": 2, "b": 2},
                                  devices=[[Device(1), Device(0)], [Device(3), Device(2)]])  # no .flat
        self.assertEqual(to_target_mesh(m).device_ids, (1, 0, 3, 2))

    def test_abstract_mesh(self):
        t = to_target_mesh(AbstractMesh((2, 2), ("x", "y"), (AxisType.Auto, AxisType.Explicit)))
        self.assertEqual(t, TargetMesh((MeshAxis("x", 2), MeshAxis("y", 2, "explicit")), None, None))
        am = AbstractMesh((8,), ("x",))
        am.abstract_device = Device(0, "cpu")
        self.assertEqual(to_target_mesh(am).platform, "cpu")

    def test_older_axis_types_mapping(self):
        class AxisTypes(enum.Enum):  # JAX 0.5: {AxisTypes.X: axis names}
            Auto = 1
            User = 2
            Collective = 3
        m = make_mesh((2, 2, 2), ("a", "b", "c"))
        m.axis_types = {AxisTypes.User: ("b",), AxisTypes.Collective: "c"}
        self.assertEqual([a.type for a in to_target_mesh(m).axes], ["auto", "explicit", "manual"])

    def test_dict_and_spec(self):
        self.assertEqual(to_target_mesh({"x": 2, "y": 4}), TargetMesh((MeshAxis("x", 2), MeshAxis("y", 4))))
        t = to_target_mesh("x=2:explicit,y=2;devices=3,2,1,0;platform=gpu")
        self.assertEqual(t, TargetMesh((MeshAxis("x", 2, "explicit"), MeshAxis("y", 2)), (3, 2, 1, 0), "gpu"))
        self.assertIsNone(to_target_mesh(None))

    def test_not_a_mesh(self):
        with self.assertRaisesRegex(TypeError, "jax.sharding.Mesh"):
            to_target_mesh(42)


class BadMeshTest(unittest.TestCase):
    """Each error names the field, as the daemon's INVALID_ARGUMENT does (test_remote compares the two)."""

    CASES = [
        ({"x": 2, "y": 0}, 'mesh.axes[1].size: axis "y" has size 0, must be >= 1'),
        ({"x": 2, "": 2}, "mesh.axes[1].name: empty axis name"),
        ({}, "mesh.axes: a target mesh needs at least one axis"),
        ({"x": 1 << 13, "y": 1 << 12}, "mesh.axes: more than 16777216 devices"),
        (make_mesh((2, 2), ("x", "x")), 'mesh.axes[1].name: duplicate axis "x"'),
        (make_mesh((2, 2), ("x", "y"), ids=[0, 1, 2, 4]),
         "mesh.device_ids[3]: device id 4 is out of range (mesh of 4 devices)"),
        (make_mesh((2, 2), ("x", "y"), ids=[0, 1, 1, 2]),
         "mesh.device_ids[2]: device id 1 is a duplicate (mesh of 4 devices)"),
        ("x=2,y=2;devices=0,1,2", "mesh.device_ids: 3 ids for a mesh of 4 devices"),
        ({"x": 2.5}, 'mesh.axes[0].size: axis "x" has size 2.5, must be an integer'),
    ]

    def test_bad_meshes(self):
        for mesh, message in self.CASES:
            with self.subTest(message=message):
                with self.assertRaises(ValueError) as cm:
                    to_target_mesh(mesh)
                self.assertEqual(str(cm.exception), message)

    def test_jax_specific(self):
        m = make_mesh((2,), ("x",), axis_types=("Sideways",))
        with self.assertRaisesRegex(ValueError, r"^mesh.axes\[0\].type: unknown axis type 'Sideways'"):
            to_target_mesh(m)
        m = Mesh(DeviceArray([Device(0, "tpu"), Device(1, "gpu")], (2,)), ("x",))
        with self.assertRaisesRegex(ValueError, r"^mesh.platform: .*several platforms \(gpu, tpu\)"):
            to_target_mesh(m)
        m = make_mesh((2, 2), ("x", "y"))
        m.axis_types = (AxisType.Auto,)
        with self.assertRaisesRegex(ValueError, r"^mesh.axis_types: 1 axis types for 2 axes"):
            to_target_mesh(m)
        m = Mesh(DeviceArray([object(), object()], (2,)), ("x",))
        with self.assertRaisesRegex(ValueError, r"^mesh.devices: every device needs an `id`"):
            to_target_mesh(m)


class SpecParserTest(unittest.TestCase):
    """The package parses --mesh specs itself (remote checks need no library); it must agree with the
    library's sc_mesh_parse, messages included."""

    SPECS = ["x=2", "data=2,model=4:explicit", "a=1:manual,b=3:auto,c_2=2", "x=2,", "x=4;devices=3,2,1,0",
             "x=2;platform=tpu", "x=2;platform=cuda;devices=1,0", "x=2;devices=0,1;platform=cpu", "",
             "=2", "x", "x=", "x=0", "x=-1", "x=2:sideways", "x=2,x=3", "x=2 y=3", "x=2;devices=0,a",
             "x=2;devices=0,1,2", "x=2;platform=mips", "x=2;colour=red", "x=99999999999999999999",
             "x=4294967296,y=4294967296,z=4294967296", "x=2:explicit:manual", "é=2", "x=2;devices=0,,1"]

    def c_parse(self, spec):
        lib = _lib.library().lib
        arena = lib.sc_arena_new(0)
        try:
            tm, err = _lib.TargetMeshStruct(), ctypes.c_char_p()
            if lib.sc_mesh_parse(arena, spec.encode(), ctypes.byref(tm), ctypes.byref(err)) != 0:
                return err.value.decode()
            axes = tuple(MeshAxis(tm.axes[i].name.decode(), tm.axes[i].size,
                                  ("auto", "explicit", "manual")[tm.axes[i].type]) for i in range(tm.naxes))
            ids = tuple(tm.device_ids[i] for i in range(tm.ndevice_ids)) or None
            return TargetMesh(axes, ids, {0: None, 1: "tpu", 2: "gpu", 3: "cpu"}[tm.platform])
        finally:
            lib.sc_arena_free(arena)

    def test_agrees_with_library(self):
        for spec in self.SPECS:
            with self.subTest(spec=spec):
                try:
                    got = _mesh.parse_spec(spec)
                except ValueError as e:
                    got = str(e)
                self.assertEqual(got, self.c_parse(spec))
        self.assertTrue(support.LIB.is_file())


if __name__ == "__main__":
    unittest.main()
