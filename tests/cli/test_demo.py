"""``feedline demo`` on a generated COCO data set: throughput, picture, boxes on the objects."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from feedline.cli import main
from feedline.cli.demo import build_pipeline, gpu_problem
from feedline.cli.demo_data import find_coco, generate_coco
from feedline.core.plugins import PluginSystem


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    generate_coco(root, num_images=6, seed=3)
    return root


def test_demo_writes_a_contact_sheet(
    shapes: Path, tmp_path: Path, plugin_system: PluginSystem, capsys
) -> None:
    out = tmp_path / "sheet.png"
    argv = [
        "demo",
        "--data",
        str(shapes),
        "--out",
        str(out),
        "--batches",
        "2",
        "--batch-size",
        "3",
        "--threads",
        "2",
        "--samples",
        "5",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "6 images in" in text and "images/s" in text and "5 augmented samples" in text
    assert f": {out.resolve()}" in text
    assert "demo: 100%" in captured.err and "2/2" in captured.err  # tqdm, on stderr
    with Image.open(out) as sheet:
        assert sheet.format == "PNG" and sheet.width > 3 * 320 and sheet.height > 2 * 320


def test_the_sheet_goes_to_the_current_folder_by_default(
    shapes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugin_system: PluginSystem
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["demo", "--data", str(shapes), "--batches", "1", "--batch-size", "2"]
    assert main(argv) == 0
    assert (tmp_path / "feedline-demo.png").is_file()


def test_the_demo_picture_is_ignored_by_git() -> None:
    root = Path(__file__).resolve().parents[2]
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        pytest.skip("needs git and a checkout of the repository")
    for name in ("feedline-demo.png", "examples/feedline-demo-2.png"):
        done = subprocess.run([git, "check-ignore", "-q", name], cwd=root)
        assert done.returncode == 0, f"{name} is not ignored"


def test_boxes_and_masks_stay_on_the_objects_after_crop_resize_and_flip(
    shapes: Path, plugin_system: PluginSystem
) -> None:
    pytest.importorskip("pycocotools")
    data = find_coco(shapes)
    pipe = build_pipeline(data, batch_size=6, threads=2, size=64, masks=True, device="cpu", seed=5)
    pipe.build()
    for _ in range(3):
        _, boxes, labels, masks = (out.as_cpu() for out in pipe.run())
        for i in range(len(boxes)):
            mask = np.asarray(masks.at(i))[..., 0]
            sample_boxes, sample_labels = np.asarray(boxes.at(i)), np.asarray(labels.at(i))
            assert sample_boxes.shape[0] == sample_labels.shape[0] > 0
            # Every labelled pixel lies in some box of its label (1 px slack for rounding).
            for label in np.unique(mask[mask > 0]):
                ys, xs = np.nonzero(mask == label)
                allowed = np.zeros(mask.shape, bool)
                for left, top, right, bottom in sample_boxes[sample_labels == label] * 64:
                    allowed[
                        max(int(top) - 1, 0) : int(np.ceil(bottom)) + 1,
                        max(int(left) - 1, 0) : int(np.ceil(right)) + 1,
                    ] = True
                assert allowed[ys, xs].mean() > 0.98


def test_missing_data_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--data", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such folder" in capsys.readouterr().err


def test_a_folder_without_annotations_is_named(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--data", str(tmp_path)]) == 2
    assert "expected exactly one annotation file" in capsys.readouterr().err


def test_gpu_without_a_device_says_why(plugin_system: PluginSystem, capsys) -> None:
    problem = gpu_problem()
    if problem is None:
        pytest.skip("a GPU and GPU kernels are available here")
    assert main(["demo", "--device", "gpu"]) == 3
    assert "--device gpu is not available" in capsys.readouterr().err


def test_without_data_the_bundled_sample_is_used(
    shapes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from feedline.cli import demo_data

    package = tmp_path / "feedline"
    (package / "data").mkdir(parents=True)
    (package / "data" / demo_data.BUNDLED).symlink_to(shapes, target_is_directory=True)
    monkeypatch.setattr(demo_data.resources, "files", lambda name: package)
    sample = demo_data.bundled_sample()
    assert sample is not None and sample.images == package / "data" / demo_data.BUNDLED / "images"
    assert sample.num_images == 6 and sample.label_names() == {
        1: "rectangle",
        2: "ellipse",
        3: "triangle",
    }


def test_without_data_or_sample_shapes_are_generated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugin_system: PluginSystem, capsys
) -> None:
    from feedline.cli import demo_data

    monkeypatch.setattr(demo_data.resources, "files", lambda name: tmp_path / "no-package")
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["demo", "--out", str(tmp_path / "a.png"), "--batches", "1", "--batch-size", "2"]
    assert main(argv) == 0
    assert "generating shapes into" in capsys.readouterr().out
    assert (tmp_path / "cache" / "demo-coco" / "instances.json").is_file()
    assert main(argv) == 0
    assert "generating" not in capsys.readouterr().out


def test_an_image_missing_from_the_data_set_is_named(
    tmp_path: Path, plugin_system: PluginSystem, capsys
) -> None:
    data = generate_coco(tmp_path, num_images=2, seed=1)
    (data.images / "0002.jpg").unlink()
    argv = ["demo", "--data", str(tmp_path), "--out", str(tmp_path / "x.png"), "--batches", "1"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "0002.jpg" in err and "Traceback" not in err


@pytest.mark.gpu
def test_demo_on_the_gpu_matches_the_cpu_pipeline(
    shapes: Path, plugin_system: PluginSystem
) -> None:
    data = find_coco(shapes)
    results = []
    for device in ("cpu", "gpu"):
        pipe = build_pipeline(
            data, batch_size=3, threads=2, size=48, masks=False, device=device, seed=9
        )
        pipe.build()
        images, boxes, _ = (out.as_cpu() for out in pipe.run())
        results.append(([np.asarray(images.at(i)) for i in range(3)], boxes))
    for cpu, gpu in zip(results[0][0], results[1][0], strict=True):
        np.testing.assert_allclose(gpu, cpu, atol=0.05)
    for i in range(3):
        np.testing.assert_array_equal(results[0][1].at(i), results[1][1].at(i))
