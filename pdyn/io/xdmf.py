"""The XDMF 2 sidecar that makes a folder of snapshot files one ParaView time series.

A temporal collection with one entry per snapshot; each entry is a spatial collection of up to
four grids: ``particles`` (a Polyvertex of N points with the arrays id, velocity,
angular_velocity, radius, rank and from format 8 material), ``walls`` (T triangles with the cell array wall, the wall id
of each; snapshots before format 7: W quadrilaterals with the cell array normal),
``wall_pressure`` (with ``[output] wall_pressure``: the walls' patches as triangles with
the cell arrays normal_stress, shear_stress, area, wall and patch) and
``contacts`` (the contact network: K two-point polylines with the cell arrays force,
normal_force, tangential_force and the two ids id_a, id_b, hyperslabs of ``contacts/id``;
left out while there is no contact). XDMF 2 rather than 3 because it is what VTK's
``vtkXdmfReader`` (and ParaView's "XDMF Reader") reads; heavy data stays in the HDF5 files
(``file.h5:/particles/position``), including virtual datasets of multi-rank runs.
"""

from __future__ import annotations

from pathlib import Path

from .hdf5 import write_bytes_atomic


def _item(dims: str, number: str, precision: int, ref: str) -> str:
    return (f'<DataItem Dimensions="{dims}" NumberType="{number}" Precision="{precision}" '
            f'Format="HDF">{ref}</DataItem>')


def _attribute(name: str, kind: str, center: str, item: str) -> list[str]:
    return [f'     <Attribute Name="{name}" AttributeType="{kind}" Center="{center}">',
            f'      {item}', '     </Attribute>']


def _entry(sub: str, e: dict) -> str:
    """One snapshot's spatial collection: its time and grids (particles, walls, wall
    pressure, contacts) over the file ``sub/e['file']``."""
    f = f"{sub}/{e['file']}"
    lines = [
        f'   <Grid Name="step {e["step"]}" GridType="Collection" CollectionType="Spatial">',
        f'    <Time Value="{float(e["time"])!r}"/>',
        *_particles(f, e), *_walls(f, e), *_pressure(f, e), *_contacts(f, e),
        '   </Grid>']
    return "\n".join(lines)


def _particles(f: str, e: dict) -> list[str]:
    """The particles: a Polyvertex of N points with their arrays (``material`` from format
    8 on)."""
    n = int(e["n"])
    lines = [
        '    <Grid Name="particles" GridType="Uniform">',
        f'     <Topology TopologyType="Polyvertex" NumberOfElements="{n}" NodesPerElement="1"/>',
        '     <Geometry GeometryType="XYZ">',
        f'      {_item(f"{n} 3", "Float", 8, f + ":/particles/position")}',
        '     </Geometry>',
    ]
    for name, kind, number, prec, dims in (
            ("id", "Scalar", "Int", 8, f"{n}"), ("velocity", "Vector", "Float", 8, f"{n} 3"),
            ("angular_velocity", "Vector", "Float", 8, f"{n} 3"),
            ("radius", "Scalar", "Float", 8, f"{n}"), ("rank", "Scalar", "Int", 4, f"{n}")):
        lines += _attribute(name, kind, "Node",
                            _item(dims, number, prec, f + ":/particles/" + name))
    if e.get("material"):  # format 8 on: each sphere's material index
        lines += _attribute("material", "Scalar", "Node",
                            _item(f"{n}", "UInt", 1, f + ":/particles/material"))
    return lines + ['    </Grid>']


def _walls(f: str, e: dict) -> list[str]:
    """The walls: triangles with the cell array wall (format 7 on), before that a
    quadrilateral per wall with its normal; none without walls."""
    t, w = int(e.get("wall_triangles", 0)), int(e["n_walls"])
    if t:  # version 7 on: every wall as triangles, the cell array wall (its id)
        v = int(e["wall_vertices"])
        topology, points = _item(f"{t} 3", "Int", 8, f + ":/walls/triangles"), v
        kind, cells = "Triangle", _attribute("wall", "Scalar", "Cell", _item(
            f"{t}", "Int", 8, f + ":/walls/triangle_wall"))
        vertices = f + ":/walls/vertices"
    elif w and "wall_vertices" not in e:  # before version 7: a quadrilateral per wall
        t, points = w, 4 * w
        topology = _item(f"{w} 4", "Int", 8, f + ":/walls/quads")
        kind, cells = "Quadrilateral", _attribute("normal", "Vector", "Cell", _item(
            f"{w} 3", "Float", 8, f + ":/walls/normal"))
        vertices = f + ":/walls/quad_points"
    else:
        return []
    return ['    <Grid Name="walls" GridType="Uniform">',
            f'     <Topology TopologyType="{kind}" NumberOfElements="{t}">',
            f'      {topology}',
            '     </Topology>',
            '     <Geometry GeometryType="XYZ">',
            f'      {_item(f"{points} 3", "Float", 8, vertices)}',
            '     </Geometry>',
            *cells,
            '    </Grid>']


def _pressure(f: str, e: dict) -> list[str]:
    """The wall pressure maps (``pdyn.io.wallpressure``): cell data per patch triangle; none
    without them."""
    t = int(e.get("pressure_triangles", 0))
    if not t:
        return []
    v = int(e["pressure_vertices"])
    g = f + ":/walls/pressure/"
    lines = [
        '    <Grid Name="wall_pressure" GridType="Uniform">',
        f'     <Topology TopologyType="Triangle" NumberOfElements="{t}">',
        f'      {_item(f"{t} 3", "Int", 8, g + "triangles")}',
        '     </Topology>',
        '     <Geometry GeometryType="XYZ">',
        f'      {_item(f"{v} 3", "Float", 8, g + "vertices")}',
        '     </Geometry>']
    for name, kind, number, dims in (
            ("normal_stress", "Scalar", "Float", f"{t}"),
            ("shear_stress", "Vector", "Float", f"{t} 3"),
            ("area", "Scalar", "Float", f"{t}"), ("wall", "Scalar", "Int", f"{t}"),
            ("patch", "Scalar", "Int", f"{t}")):
        lines += _attribute(name, kind, "Cell", _item(dims, number, 8, g + name))
    return lines + ['    </Grid>']


def _contacts(f: str, e: dict) -> list[str]:
    """The contact network: K two-point polylines with their forces and the two ids
    (hyperslabs of ``contacts/id``); none while there is no contact."""
    k = int(e.get("n_contacts", 0))
    if not k:
        return []
    lines = [
        '    <Grid Name="contacts" GridType="Uniform">',
        f'     <Topology TopologyType="Polyline" NodesPerElement="2" NumberOfElements="{k}">',
        f'      {_item(f"{k} 2", "Int", 8, f + ":/contacts/lines")}',
        '     </Topology>',
        '     <Geometry GeometryType="XYZ">',
        f'      {_item(f"{2 * k} 3", "Float", 8, f + ":/contacts/points")}',
        '     </Geometry>',
    ]
    for name, kind, number, dims in (
            ("force", "Scalar", "Float", f"{k}"),
            ("normal_force", "Vector", "Float", f"{k} 3"),
            ("tangential_force", "Vector", "Float", f"{k} 3")):
        lines += _attribute(name, kind, "Cell", _item(dims, number, 8, f + ":/contacts/" + name))
    for col, name in enumerate(("id_a", "id_b")):  # the columns of contacts/id
        lines += [f'     <Attribute Name="{name}" AttributeType="Scalar" Center="Cell">',
                  f'      <DataItem ItemType="HyperSlab" Dimensions="{k} 1" '
                  'Type="HyperSlab">',
                  f'       <DataItem Dimensions="3 2" Format="XML">0 {col} 1 1 {k} 1'
                  '</DataItem>',
                  f'       {_item(f"{k} 2", "Int", 8, f + ":/contacts/id")}',
                  '      </DataItem>',
                  '     </Attribute>']
    return lines + ['    </Grid>']


def write_xdmf(path: Path, sub: str, entries: list[dict]) -> Path:
    """Write the sidecar ``path`` for ``entries`` ({file, step, time, n, n_walls, n_contacts,
    and from format 7 wall_vertices, wall_triangles};
    file names relative to the folder ``sub`` next to ``path``), atomically (temporary name +
    rename; :class:`~pdyn.io.hdf5.OutputWriteError` if it cannot)."""
    path = Path(path)
    body = "\n".join(_entry(sub, e) for e in sorted(entries, key=lambda e: e["step"]))
    text = (
        '<?xml version="1.0" ?>\n<!DOCTYPE Xdmf SYSTEM "Xdmf.dtd" []>\n'
        '<Xdmf Version="2.0">\n <Domain>\n'
        '  <Grid Name="pdyn" GridType="Collection" CollectionType="Temporal">\n'
        f"{body}\n  </Grid>\n </Domain>\n</Xdmf>\n"
    )
    write_bytes_atomic(path, text.encode())
    return path
