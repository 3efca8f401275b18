"""A multi-camera pipeline written only against ``feedline.structured`` (ACCV-Lab's layout).

Our own small data set: per camera an image and labelled objects, per sample a scene label that
is mapped to a number and also kept as a string. The steps are the ones a ported ACCV-Lab
pipeline uses: independent photometric jitter per camera, [0, 1] normalisation and a condition
mask over the annotations.
"""

from __future__ import annotations

import numpy as np

from feedline.structured.inputs import DataProvider, ShuffledShardedInputCallable
from feedline.structured.pipeline import (
    DALIStructuredOutputIterator,
    PipelineDefinition,
    SampleDataGroup,
)
from feedline.structured.processing_steps import (
    AnnotationElementConditionEval,
    DataGroupArrayInPathElementsAppliedStep,
    ImageRange01Normalizer,
    PhotoMetricDistorter,
)
from feedline.types import DALIDataType

SCENES = {"city": 1, "road": 2, None: 0}
NAMES = ["city", "road", "field"]


class Scenes(DataProvider):
    """Sample ``i``: two grey cameras of value ``10 i``, labels 3 and 9, scene ``NAMES[i % 3]``."""

    def __init__(self) -> None:
        annotation = SampleDataGroup()
        annotation.add_data_field("label", DALIDataType.INT32)
        camera = SampleDataGroup()
        camera.add_data_field("image", DALIDataType.UINT8)
        camera.add_data_group_field("annotation", annotation)
        blueprint = SampleDataGroup()
        blueprint.add_data_group_field_array("cameras", camera, 2)
        blueprint.add_data_field("scene", DALIDataType.INT32, mapping=SCENES)
        blueprint.add_data_field("scene_name", DALIDataType.STRING)
        self._blueprint = blueprint

    def get_number_of_samples(self) -> int:
        return 6

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        return self._blueprint.get_empty_like_self()

    def get_data(self, sample_index: int) -> SampleDataGroup:
        sample = self.sample_data_structure
        for cam in range(2):
            sample["cameras"][cam]["image"] = np.full((4, 6, 3), 10 * sample_index, np.uint8)
            sample["cameras"][cam]["annotation"]["label"] = [3, 9]
        sample["scene"] = NAMES[sample_index % 3]
        sample["scene_name"] = NAMES[sample_index % 3]
        return sample


def test_a_ported_multi_camera_pipeline_runs_with_upstream_arguments() -> None:
    source = ShuffledShardedInputCallable(Scenes(), batch_size=2, shuffle=False)
    jitter = PhotoMetricDistorter(
        "image",
        [-0.1, 0.1],
        [-10.0, 10.0],
        [0.9, 1.1],
        [0.9, 1.1],
        prob_brightness_aug=0.5,
        prob_hue_aug=0.5,
        prob_contrast_aug=0.5,
        prob_saturation_aug=0.5,
        prob_swap_channels=0.0,
        enforce_process_on_gpu=False,
    )
    steps = [
        DataGroupArrayInPathElementsAppliedStep(jitter, path_to_array_to_apply_to="cameras"),
        ImageRange01Normalizer("image"),
        AnnotationElementConditionEval("annotation", "is_active = label >= 3 and label < 8", False),
    ]
    definition = PipelineDefinition(
        source,
        preprocess_functors=steps,
        check_data_format=False,
        copy_external_source_passthrough_outputs=False,
    )
    output_format = definition.check_and_get_output_data_structure()
    pipe = definition.get_dali_pipeline(
        enable_conditionals=True, batch_size=2, num_threads=1, device_id=None, seed=5
    )
    pipe.build()
    loader = DALIStructuredOutputIterator.CreateAsDataLoaderObject(
        source.length, pipe, output_format
    )
    batches = list(loader)
    assert len(batches) == len(loader) == 3
    first = batches[0]
    image = first["cameras"][1]["image"]
    assert tuple(image.shape) == (2, 4, 6, 3) and str(image.dtype) == "torch.float32"
    assert float(image.min()) >= 0.0 and float(image.max()) <= 1.0
    assert first["cameras"][0]["annotation"]["is_active"].tolist() == [[True, False]] * 2
    assert first["scene"].flatten().tolist() == [1, 2]
    assert first["scene_name"] == ["city", "road"]
    assert batches[1]["scene"].flatten().tolist() == [0, 1]
