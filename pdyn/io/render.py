"""``pdyn render FILE``: a PNG of a snapshot (spheres coloured by speed, radius or rank, the
walls as translucent faces and the box outline), rendered offscreen with VTK — no display needed.

Needs the optional ``vtk`` package (``pip install 'pdyn[render]'``); ``pdyn run`` never imports
it. Offscreen rendering uses EGL (``VTK_DEFAULT_OPENGL_WINDOW=vtkEGLRenderWindow``) unless the
environment chooses another window class.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .hdf5 import (CHECKPOINT, SNAPSHOT, OutputFileError, OutputWriteError, make_folder,
                   step_files)
from .schema import read_pdyn


def _load(path: Path) -> dict:
    """Positions, velocities, radii, ranks and walls of a snapshot or checkpoint, read strictly
    (``pdyn.io.schema``)."""
    head, data = read_pdyn(path, (SNAPSHOT, CHECKPOINT))
    snap = head["format"] == SNAPSHOT
    g = "particles/"
    rows = head["rows_per_rank"]
    return {
        "position": data[g + ("position" if snap else "pos")],
        "velocity": data[g + ("velocity" if snap else "vel")],
        "radius": data[g + "radius"],
        "rank": data[g + "rank"] if snap else np.repeat(np.arange(len(rows)), rows),
        # the walls' faces: triangles (snapshots from format 7), else a quadrilateral each
        "wall_points": data.get("walls/vertices", data.get("walls/quad_points")),
        "wall_faces": data.get("walls/triangles", data.get("walls/quads")),
        **{k: head[k] for k in ("step", "time", "box_lo", "box_hi", "scene")},
    }


def snapshot_of(path: Path) -> Path:
    """``path``, or the newest snapshot of the run folder ``path``."""
    if path.is_dir():
        folder = path / "snapshots" if (path / "snapshots").is_dir() else path
        files = step_files(folder, "snap")
        if not files:
            raise OutputFileError(f"{path}: no snapshot in this folder")
        return files[-1][1]
    return path


def render_png(path, out=None, *, color: str = "speed", size=(1200, 900)) -> Path:
    """Render the snapshot ``path`` (or a run folder's newest snapshot) to the PNG ``out``."""
    path = snapshot_of(Path(path))
    data = _load(path)  # bad files fail before VTK is needed
    out = Path(out) if out else path.with_suffix(".png")
    vtk = _vtk()
    values = {"speed": np.linalg.norm(data["velocity"], axis=1), "radius": data["radius"],
              "rank": data["rank"].astype(float)}[color]
    unit = {"speed": "speed (m/s)", "radius": "radius (m)", "rank": "rank"}[color]
    ren = vtk.vtkRenderer()
    ren.SetBackground(1.0, 1.0, 1.0)
    spheres, lut = _spheres(vtk, data["position"], data["radius"], values)
    ren.AddActor(spheres)
    if len(data["wall_faces"]):
        ren.AddActor(_walls(vtk, data["wall_points"], data["wall_faces"]))
    ren.AddActor(_outline(vtk, data["box_lo"], data["box_hi"]))
    _label(vtk, ren, lut, unit, data, size)
    _aim(ren, data["box_lo"], data["box_hi"])
    _write_png(vtk, ren, out, size)
    return out


def _vtk() -> SimpleNamespace:
    """The VTK classes the picture needs, the offscreen (EGL) back end registered, unless the
    environment chose another window class."""
    os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    try:
        import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (registers the OpenGL back end)
        from vtkmodules.util.numpy_support import numpy_to_vtk
        from vtkmodules.vtkCommonCore import vtkPoints
        from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
        from vtkmodules.vtkFiltersSources import vtkOutlineSource, vtkSphereSource
        from vtkmodules.vtkIOImage import vtkPNGWriter
        from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
        from vtkmodules.vtkRenderingCore import vtkTextActor
        from vtkmodules.vtkRenderingCore import (vtkActor, vtkColorTransferFunction,
                                                 vtkGlyph3DMapper, vtkPolyDataMapper,
                                                 vtkRenderer, vtkRenderWindow,
                                                 vtkWindowToImageFilter)
    except ImportError:
        raise ImportError("pdyn render needs the 'vtk' package: pip install 'pdyn[render]' "
                          "(or pip install vtk)") from None
    return SimpleNamespace(**{k: v for k, v in locals().items() if k != "vtkmodules"})


def _spheres(vtk, pos, rad, values):
    """The spheres as glyphs of their radius coloured by ``values`` on a viridis-like ramp:
    (actor, the ramp)."""
    pts = vtk.vtkPoints()
    pts.SetData(vtk.numpy_to_vtk(np.ascontiguousarray(pos, float), deep=True))
    poly = vtk.vtkPolyData()
    poly.SetPoints(pts)
    r = vtk.numpy_to_vtk(np.ascontiguousarray(rad, float), deep=True)
    r.SetName("radius")
    c = vtk.numpy_to_vtk(np.ascontiguousarray(values, float), deep=True)
    c.SetName("colour")
    poly.GetPointData().AddArray(r)
    poly.GetPointData().AddArray(c)

    sphere = vtk.vtkSphereSource()
    sphere.SetRadius(1.0)
    sphere.SetThetaResolution(20 if len(rad) < 20000 else 10)
    sphere.SetPhiResolution(14 if len(rad) < 20000 else 8)
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    lut = vtk.vtkColorTransferFunction()  # a viridis-like ramp
    for t, rgb in ((0.0, (0.267, 0.005, 0.329)), (0.25, (0.229, 0.322, 0.546)),
                   (0.5, (0.128, 0.567, 0.551)), (0.75, (0.369, 0.789, 0.383)),
                   (1.0, (0.993, 0.906, 0.144))):
        lut.AddRGBPoint(lo + t * (hi - lo), *rgb)
    mapper = vtk.vtkGlyph3DMapper()
    mapper.SetInputData(poly)
    mapper.SetSourceConnection(sphere.GetOutputPort())
    mapper.SetScaleArray("radius")
    mapper.SetScaleModeToScaleByMagnitude()
    mapper.SetScalarModeToUsePointFieldData()
    mapper.SelectColorArray("colour")
    mapper.SetLookupTable(lut)
    mapper.SetScalarRange(lo, hi)
    actor = vtk.vtkActor()
    actor.SetMapper(mapper)
    return actor, lut


def _walls(vtk, points, faces):
    """The walls' faces, translucent, their backs culled (no wall between the camera and the
    spheres)."""
    wpts = vtk.vtkPoints()
    wpts.SetData(vtk.numpy_to_vtk(np.ascontiguousarray(points, float), deep=True))
    cells = vtk.vtkCellArray()
    for face in faces.tolist():  # a few hundred faces
        cells.InsertNextCell(len(face), face)
    wpoly = vtk.vtkPolyData()
    wpoly.SetPoints(wpts)
    wpoly.SetPolys(cells)
    wmap = vtk.vtkPolyDataMapper()
    wmap.SetInputData(wpoly)
    wact = vtk.vtkActor()
    wact.SetMapper(wmap)
    wact.GetProperty().SetColor(0.55, 0.6, 0.7)
    wact.GetProperty().SetOpacity(0.18)
    wact.GetProperty().BackfaceCullingOn()
    return wact


def _outline(vtk, lo, hi):
    """The box's edges."""
    box = vtk.vtkOutlineSource()
    box.SetBounds(*np.ravel(np.column_stack((lo, hi))))
    bmap = vtk.vtkPolyDataMapper()
    bmap.SetInputConnection(box.GetOutputPort())
    bact = vtk.vtkActor()
    bact.SetMapper(bmap)
    bact.GetProperty().SetColor(0.2, 0.2, 0.2)
    bact.GetProperty().SetLineWidth(2.0)
    return bact


def _label(vtk, ren, lut, unit, data, size) -> None:
    """The colour bar titled ``unit`` and a caption (scene, spheres, step, time)."""
    bar = vtk.vtkScalarBarActor()
    bar.SetLookupTable(lut)
    bar.SetTitle(unit)
    bar.SetNumberOfLabels(4)
    bar.SetWidth(0.08)
    bar.SetHeight(0.5)
    bar.GetTitleTextProperty().SetColor(0.1, 0.1, 0.1)
    bar.GetLabelTextProperty().SetColor(0.1, 0.1, 0.1)
    ren.AddViewProp(bar)
    caption = vtk.vtkTextActor()
    caption.SetInput(f"{data['scene']}: {len(data['radius'])} spheres, step {data['step']}, "
                     f"t = {data['time']:.4g} s")
    caption.GetTextProperty().SetColor(0.1, 0.1, 0.1)
    caption.GetTextProperty().SetFontSize(max(12, int(size[1]) // 40))
    caption.SetPosition(10, 10)
    ren.AddViewProp(caption)


def _aim(ren, lo, hi) -> None:
    """The camera on the box's centre, from the front right and above, z up."""
    cam = ren.GetActiveCamera()
    centre = 0.5 * (lo + hi)
    cam.SetFocalPoint(*centre)
    cam.SetPosition(*(centre + np.array([1.6, -2.2, 1.1]) * np.linalg.norm(hi - lo)))
    cam.SetViewUp(0.0, 0.0, 1.0)
    ren.ResetCamera()
    cam.Zoom(1.0)


def _write_png(vtk, ren, out: Path, size) -> None:
    """Render ``ren`` offscreen at ``size`` and write the PNG ``out`` atomically (a temporary
    file, then a rename)."""
    win = vtk.vtkRenderWindow()
    win.SetOffScreenRendering(1)
    win.SetSize(int(size[0]), int(size[1]))
    win.AddRenderer(ren)
    win.Render()
    grab = vtk.vtkWindowToImageFilter()
    grab.SetInput(win)
    grab.ReadFrontBufferOff()
    grab.Update()
    writer = vtk.vtkPNGWriter()
    make_folder(out.parent)
    tmp = out.with_name(out.name + ".tmp.png")
    writer.SetFileName(str(tmp))
    writer.SetInputConnection(grab.GetOutputPort())
    writer.Write()
    win.Finalize()
    try:
        if writer.GetErrorCode() or not tmp.is_file():
            raise OSError("the PNG writer failed")
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputWriteError(f"{out}: cannot write ({exc.strerror or exc})") from None
