"""A 2-D object detection input pipeline (one camera image per sample), CenterNet style.

Steps: decode; one random affine augmentation per image (a mirror with some probability, then
one of two scale-and-shift options), fitted into the output size with padding; scale to
``[0, 1]``; mark the objects worth learning (seen by lidar or radar and visible); draw the
class heatmaps with their box targets; drop helper fields; pad the per-object fields so they
batch.

Usage: ``python -m structured_pipeline_setup.object_detection_2d DATASET_DIR`` from
``examples/`` (a data set from :func:`~structured_pipeline_setup.synthetic_nuscenes.write_dataset`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from feedline.structured.inputs import ShuffledShardedInputCallable
from feedline.structured.pipeline import DALIStructuredOutputIterator
from feedline.structured.processing_steps import (
    AffineTransformer,
    AnnotationElementConditionEval,
    ImageDecoder,
    ImageRange01Normalizer,
    PaddingToUniform,
    PipelineStepBase,
    UnneededFieldRemover,
)

from .loading import structured_loader
from .providers import CATEGORY_IDS, Detection2DProvider
from .synthetic_nuscenes import Dataset


@dataclass
class Detection2DConfig:
    """The settings of the 2-D detection pipeline."""

    output_hw: tuple[int, int] = (96, 160)
    flip_probability: float = 0.5
    #: Probabilities of the two augmentation options (they sum to 1).
    option_probabilities: tuple[float, float] = (0.7, 0.3)
    #: Per option: the scaling range.
    scaling_ranges: tuple = ((0.8, 1.2), (1.5, 1.5))
    #: Per option: the translation range in pixels, ``(min_x, min_y, max_x, max_y)``.
    translation_ranges: tuple = ((-10, -10, 10, 10), (-30, -20, 30, 20))
    heatmap_hw: tuple[int, int] = (24, 40)
    max_radius: int = 8
    num_categories: int = field(default=len(CATEGORY_IDS) - 1)


def augmentation_steps(config: Detection2DConfig) -> list:
    """The affine chain: a possible mirror, then one of the scale-and-shift options."""
    options = [
        [
            AffineTransformer.UniformScaling(1.0, *scaling),
            AffineTransformer.Translation(1.0, list(shift[:2]), list(shift[2:])),
        ]
        for scaling, shift in zip(config.scaling_ranges, config.translation_ranges, strict=True)
    ]
    return [
        AffineTransformer.NonUniformScaling(config.flip_probability, [-1.0, 1.0]),
        AffineTransformer.Selection(1.0, list(config.option_probabilities), options),
    ]


def heatmap_step(config: Detection2DConfig) -> PipelineStepBase:
    """Class heatmaps (a Gaussian per valid object) with per-object centre and size targets."""
    from feedline.structured.processing_steps import BoundingBoxToHeatmapConverter

    return BoundingBoxToHeatmapConverter(
        image_field_name="image",
        annotation_field_name="annotation",
        bboxes_in_name="bboxes",
        categories_in_name="categories",
        heatmap_out_name="heatmap",
        num_categories=config.num_categories,
        heatmap_hw=config.heatmap_hw,
        is_valid_opt_in_name="is_valid",
        center_opt_in_name=None,
        is_active_opt_out_name="is_active",
        center_opt_out_name="center",
        center_offset_opt_out_name="center_offset",
        height_width_bboxes_heatmap_opt_out_name="height_width_bboxes_heatmap",
        bboxes_heatmap_opt_out_name="bboxes_heatmap",
        max_radius=config.max_radius,
    )


def build_2d_detection_loader(
    dataset_dir: str,
    batch_size: int,
    config: Detection2DConfig | None = None,
    with_heatmaps: bool = True,
    seed: int = 0,
) -> DALIStructuredOutputIterator:
    """The iterator of the 2-D detection pipeline over a synthetic NuScenes-shaped data set.

    Args:
        dataset_dir: the data set's folder.
        batch_size: samples per batch.
        config: the settings (defaults when None).
        with_heatmaps: draw the heatmaps (needs ``BoundingBoxToHeatmapConverter``).
        seed: the seed of the sample order and of the augmentations.
    """
    config = config or Detection2DConfig()
    provider = Detection2DProvider(Dataset(dataset_dir))
    source = ShuffledShardedInputCallable(provider, batch_size, shuffle=True, seed=seed)
    steps = [
        ImageDecoder("image"),
        AffineTransformer(
            output_hw=config.output_hw,
            resizing_mode=AffineTransformer.ResizingMode.PAD,
            resizing_anchor=AffineTransformer.ResizingAnchor.CENTER,
            image_field_names="image",
            point_field_names="bboxes",
            transformation_steps=augmentation_steps(config),
            transform_image_on_gpu=False,
        ),
        ImageRange01Normalizer("image"),
        AnnotationElementConditionEval(
            annotation_field_name="annotation",
            condition="is_valid = (num_lidar_points >= 1 or num_radar_points >= 1) "
            "and visibility_levels > 0",
            remove_data_fields_used_in_condition=True,
        ),
        heatmap_step(config) if with_heatmaps else None,
        UnneededFieldRemover(["is_valid"]) if with_heatmaps else None,
        PaddingToUniform(field_names="annotation", fill_value=0.0),
    ]
    return structured_loader(source, steps, batch_size, seed)


def main() -> None:
    """Run one epoch and report the batch shapes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset_dir")
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    for index, batch in enumerate(build_2d_detection_loader(args.dataset_dir, args.batch_size)):
        shapes = {name: tuple(batch["annotation"][name].shape) for name in batch["annotation"]}
        print(index, tuple(batch["image"].shape), shapes)


if __name__ == "__main__":
    main()
