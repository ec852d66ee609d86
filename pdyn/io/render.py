"""``pdyn render FILE``: a PNG of a snapshot (spheres coloured by speed, radius or rank, the
walls as translucent faces and the box outline), rendered offscreen with VTK — no display needed.

Needs the optional ``vtk`` package (``pip install 'pdyn[render]'``); ``pdyn run`` never imports
it. Offscreen rendering uses EGL (``VTK_DEFAULT_OPENGL_WINDOW=vtkEGLRenderWindow``) unless the
environment chooses another window class.
"""

from __future__ import annotations

import os
from pathlib import Path

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

    pos, rad = data["position"], data["radius"]
    values = {"speed": np.linalg.norm(data["velocity"], axis=1), "radius": rad,
              "rank": data["rank"].astype(float)}[color]
    unit = {"speed": "speed (m/s)", "radius": "radius (m)", "rank": "rank"}[color]

    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(pos, float), deep=True))
    poly = vtkPolyData()
    poly.SetPoints(pts)
    r = numpy_to_vtk(np.ascontiguousarray(rad, float), deep=True)
    r.SetName("radius")
    c = numpy_to_vtk(np.ascontiguousarray(values, float), deep=True)
    c.SetName("colour")
    poly.GetPointData().AddArray(r)
    poly.GetPointData().AddArray(c)

    sphere = vtkSphereSource()
    sphere.SetRadius(1.0)
    sphere.SetThetaResolution(20 if len(rad) < 20000 else 10)
    sphere.SetPhiResolution(14 if len(rad) < 20000 else 8)
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    lut = vtkColorTransferFunction()  # a viridis-like ramp
    for t, rgb in ((0.0, (0.267, 0.005, 0.329)), (0.25, (0.229, 0.322, 0.546)),
                   (0.5, (0.128, 0.567, 0.551)), (0.75, (0.369, 0.789, 0.383)),
                   (1.0, (0.993, 0.906, 0.144))):
        lut.AddRGBPoint(lo + t * (hi - lo), *rgb)
    mapper = vtkGlyph3DMapper()
    mapper.SetInputData(poly)
    mapper.SetSourceConnection(sphere.GetOutputPort())
    mapper.SetScaleArray("radius")
    mapper.SetScaleModeToScaleByMagnitude()
    mapper.SetScalarModeToUsePointFieldData()
    mapper.SelectColorArray("colour")
    mapper.SetLookupTable(lut)
    mapper.SetScalarRange(lo, hi)
    actor = vtkActor()
    actor.SetMapper(mapper)

    ren = vtkRenderer()
    ren.SetBackground(1.0, 1.0, 1.0)
    ren.AddActor(actor)
    if len(data["wall_faces"]):
        wpts = vtkPoints()
        wpts.SetData(numpy_to_vtk(np.ascontiguousarray(data["wall_points"], float), deep=True))
        cells = vtkCellArray()
        for face in data["wall_faces"].tolist():  # a few hundred faces
            cells.InsertNextCell(len(face), face)
        wpoly = vtkPolyData()
        wpoly.SetPoints(wpts)
        wpoly.SetPolys(cells)
        wmap = vtkPolyDataMapper()
        wmap.SetInputData(wpoly)
        wact = vtkActor()
        wact.SetMapper(wmap)
        wact.GetProperty().SetColor(0.55, 0.6, 0.7)
        wact.GetProperty().SetOpacity(0.18)
        wact.GetProperty().BackfaceCullingOn()  # hide the walls between camera and spheres
        ren.AddActor(wact)
    box = vtkOutlineSource()
    box.SetBounds(*np.ravel(np.column_stack((data["box_lo"], data["box_hi"]))))
    bmap = vtkPolyDataMapper()
    bmap.SetInputConnection(box.GetOutputPort())
    bact = vtkActor()
    bact.SetMapper(bmap)
    bact.GetProperty().SetColor(0.2, 0.2, 0.2)
    bact.GetProperty().SetLineWidth(2.0)
    ren.AddActor(bact)

    bar = vtkScalarBarActor()
    bar.SetLookupTable(lut)
    bar.SetTitle(unit)
    bar.SetNumberOfLabels(4)
    bar.SetWidth(0.08)
    bar.SetHeight(0.5)
    bar.GetTitleTextProperty().SetColor(0.1, 0.1, 0.1)
    bar.GetLabelTextProperty().SetColor(0.1, 0.1, 0.1)
    ren.AddViewProp(bar)
    caption = vtkTextActor()
    caption.SetInput(f"{data['scene']}: {len(rad)} spheres, step {data['step']}, "
                     f"t = {data['time']:.4g} s")
    caption.GetTextProperty().SetColor(0.1, 0.1, 0.1)
    caption.GetTextProperty().SetFontSize(max(12, int(size[1]) // 40))
    caption.SetPosition(10, 10)
    ren.AddViewProp(caption)

    cam = ren.GetActiveCamera()
    centre = 0.5 * (data["box_lo"] + data["box_hi"])
    cam.SetFocalPoint(*centre)
    cam.SetPosition(*(centre + np.array([1.6, -2.2, 1.1]) * np.linalg.norm(
        data["box_hi"] - data["box_lo"])))
    cam.SetViewUp(0.0, 0.0, 1.0)
    ren.ResetCamera()
    cam.Zoom(1.0)

    win = vtkRenderWindow()
    win.SetOffScreenRendering(1)
    win.SetSize(int(size[0]), int(size[1]))
    win.AddRenderer(ren)
    win.Render()
    grab = vtkWindowToImageFilter()
    grab.SetInput(win)
    grab.ReadFrontBufferOff()
    grab.Update()
    writer = vtkPNGWriter()
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
    return out
