"""A StreamPETR-style input pipeline: six cameras per sample, sampled scene by scene.

Each batch slot follows one scene in time order (``SequenceSampler``), as StreamPETR's temporal
training needs. Steps: decode the six images; one random affine augmentation per sample shared
by its cameras (mirror, scaling, bottom-aligned crop into the output size; the projection
matrices, 2-D boxes and projected centres follow); pad to a multiple of 32; normalise with
mean and standard deviation; mark the 2-D boxes left visible (not covered by nearer ones, large
enough), the 3-D objects inside the range and seen by lidar; drop the others; clamp the 2-D
coordinates into the image; a random rotation, scaling and shift of the bird's-eye view (the 3-D
boxes and projection matrices follow); pad the per-object fields so they batch.

Usage: ``python -m structured_pipeline_setup.stream_petr DATASET_DIR`` from ``examples/``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from feedline.structured.inputs import SamplerInputCallable, SequenceSampler
from feedline.structured.pipeline import DALIStructuredOutputIterator
from feedline.structured.processing_steps import (
    AffineTransformer,
    AnnotationElementConditionEval,
    ConditionalElementRemover,
    CoordinateCropper,
    DataGroupArrayWithNameElementsAppliedStep,
    ImageDecoder,
    ImageMeanStdDevNormalizer,
    ImageToTileSizePadder,
    PaddingToUniform,
    PipelineStepBase,
    PointsInRangeCheck,
    UnneededFieldRemover,
)

from .loading import structured_loader
from .providers import StreamPETRProvider
from .synthetic_nuscenes import Dataset

TILE = 32


@dataclass
class StreamPETRConfig:
    """The settings of the StreamPETR pipeline."""

    output_hw: tuple[int, int] = (80, 144)
    flip_probability: float = 0.5
    scaling_range: tuple[float, float] = (0.9, 1.1)
    mean: tuple[float, float, float] = (103.5, 116.3, 123.7)
    std: tuple[float, float, float] = (57.4, 57.1, 58.4)
    range_min: tuple[float, float, float] = (-40.0, -40.0, -5.0)
    range_max: tuple[float, float, float] = (40.0, 40.0, 5.0)
    #: Radians.
    bev_rotation_range: tuple[float, float] = (-0.3925, 0.3925)
    bev_scaling_range: tuple[float, float] = (0.95, 1.05)
    bev_translation_range: tuple[float, float, float] = (0.5, 0.5, 0.0)


def visibility_step() -> PipelineStepBase:
    """Per camera: which 2-D boxes nearer ones leave visible and are at least 2 pixels wide."""
    from feedline.structured.processing_steps import VisibleBboxSelector

    per_camera = VisibleBboxSelector(
        "bboxes",
        resulting_mask_field_path=("gt_boxes_2d", "is_visible"),
        image_field_name="image",
        check_for_bbox_occlusion=True,
        check_for_minimum_size=True,
        depths_field_name="depths",
        minimum_bbox_size=2.0,
    )
    return DataGroupArrayWithNameElementsAppliedStep(per_camera, "cams")


def bev_augmentation_step(config: StreamPETRConfig) -> PipelineStepBase:
    """A random rotation, scaling and shift of the 3-D boxes and the projection matrices."""
    from feedline.structured.processing_steps import BEVBBoxesTransformer3D

    return BEVBBoxesTransformer3D(
        "translations",
        "velocities",
        "sizes",
        "rotations",
        ["lidar2img"],
        "ego_pose",
        None,
        list(config.bev_rotation_range),
        2,
        list(config.bev_scaling_range),
        list(config.bev_translation_range),
    )


def _tiled(size: int) -> int:
    return (size + TILE - 1) // TILE * TILE


def build_stream_petr_loader(
    dataset_dir: str,
    batch_size: int,
    config: StreamPETRConfig | None = None,
    with_visibility_and_bev: bool = True,
    seed: int = 0,
) -> DALIStructuredOutputIterator:
    """The iterator of the StreamPETR pipeline over a synthetic NuScenes-shaped data set.

    Args:
        dataset_dir: the data set's folder.
        batch_size: sequences per batch.
        config: the settings (defaults when None).
        with_visibility_and_bev: check 2-D box visibility and augment the bird's-eye view
            (needs ``VisibleBboxSelector`` and ``BEVBBoxesTransformer3D``).
        seed: the seed of the sequence order and of the augmentations.
    """
    config = config or StreamPETRConfig()
    dataset = Dataset(dataset_dir)
    provider = StreamPETRProvider(dataset)
    sampler = SequenceSampler(batch_size, dataset.sequence_lengths(), seed, randomize=True)
    iterations = len(dataset.samples) // batch_size
    source = SamplerInputCallable(provider, sampler, iterations, pre_fetch_queue_length=1)
    out_hw = (_tiled(config.output_hw[0]), _tiled(config.output_hw[1]))
    bottom = AffineTransformer.ShiftToAlignWithOriginalImageBorder.Border.BOTTOM
    image_steps = [
        AffineTransformer.NonUniformScaling(config.flip_probability, [-1.0, 1.0]),
        AffineTransformer.UniformScaling(1.0, *config.scaling_range),
        AffineTransformer.ShiftToAlignWithOriginalImageBorder(1.0, bottom),
    ]
    visible = " and is_visible" if with_visibility_and_bev else ""
    steps = [
        ImageDecoder("image"),
        AffineTransformer(
            output_hw=config.output_hw,
            resizing_mode=AffineTransformer.ResizingMode.CROP,
            resizing_anchor=AffineTransformer.ResizingAnchor.BOTTOM_OR_RIGHT,
            image_field_names="image",
            projection_matrix_field_names="lidar2img",
            point_field_names=["centers", "bboxes"],
            transformation_steps=image_steps,
            transform_image_on_gpu=True,
        ),
        ImageToTileSizePadder("image", TILE),
        ImageMeanStdDevNormalizer("image", list(config.mean), list(config.std)),
        visibility_step() if with_visibility_and_bev else None,
        PointsInRangeCheck(
            "translations", "is_in_range", list(config.range_min), list(config.range_max)
        ),
        AnnotationElementConditionEval(
            "gt_boxes", "is_active = num_lidar_points >= 1 and categories >= 0 and is_in_range"
        ),
        AnnotationElementConditionEval("gt_boxes_2d", f"is_active = categories >= 0{visible}"),
        ConditionalElementRemover(
            "gt_boxes",
            "is_active",
            ["categories", "sizes", "rotations", "translations", "velocities"],
            [0, 0, 0, 0, 0],
            [1, 2, 2, 2, 2],
            True,
        ),
        ConditionalElementRemover(
            "gt_boxes_2d",
            "is_active",
            ["bboxes", "centers", "depths", "categories"],
            [0, 0, 0, 0],
            [2, 2, 1, 1],
            True,
        ),
        UnneededFieldRemover(["num_lidar_points", "is_visible", "is_in_range"]),
        CoordinateCropper("centers", [0.0, 0.0], [out_hw[1], out_hw[0]]),
        CoordinateCropper("bboxes", [0.0] * 4, [out_hw[1], out_hw[0]] * 2),
        bev_augmentation_step(config) if with_visibility_and_bev else None,
        PaddingToUniform(),
    ]
    return structured_loader(source, steps, batch_size, seed, iterations)


def main() -> None:
    """Run one epoch and report the batch shapes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset_dir")
    parser.add_argument("--batch-size", type=int, default=2)
    args = parser.parse_args()
    for index, batch in enumerate(build_stream_petr_loader(args.dataset_dir, args.batch_size)):
        cams = batch["cams"]
        print(index, tuple(cams[0]["image"].shape), tuple(batch["gt_boxes"]["sizes"].shape))


if __name__ == "__main__":
    main()
