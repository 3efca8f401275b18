"""The transformation steps of :class:`AffineTransformer`: a chain of random affine changes.

Each step changes the image content inside a fixed viewport (the input image's size): it takes
the 3x3 matrix of the steps before it and returns that matrix with its own change applied after
them. A step happens with its probability; :class:`Selection` picks one of several sequences.
Scaling, rotation and shearing turn about the viewport centre.

The steps are plain Python: the chain is evaluated per sample on NumPy matrices, fed with
uniform numbers in ``[0, 1)`` drawn in the graph. Every step reads a fixed number of them
(:attr:`TransformationStep.num_draws`), whether it happens or not, so the numbers are drawn
once per sample as one vector. A custom step subclasses :class:`TransformationStep` and
implements ``num_own_draws``, ``_apply`` and ``check_prev_types_compatible_and_add_current_type``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from enum import Enum

import numpy as np

__all__ = [
    "NonUniformScaling",
    "Rotation",
    "Selection",
    "Shearing",
    "ShiftInsideOriginalImage",
    "ShiftToAlignWithOriginalImageBorder",
    "TransformationStep",
    "Translation",
    "UniformScaling",
]

_SUM_TOLERANCE = 1e-6


def translation_matrix(dx: float, dy: float) -> np.ndarray:
    """The 3x3 matrix moving points by ``(dx, dy)``."""
    return np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])


def about_point(linear: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """The 3x3 matrix applying the 2x2 ``linear`` map with ``centre`` held in place."""
    matrix = np.eye(3)
    matrix[:2, :2] = linear
    matrix[:2, 2] = centre - linear @ centre
    return matrix


def viewport_centre(image_hw: Sequence[float]) -> np.ndarray:
    """The centre ``(x, y)`` of an image of size ``(height, width)``."""
    return np.array([image_hw[1] * 0.5, image_hw[0] * 0.5])


def in_range(draw: float, low: float, high: float | None) -> float:
    """``low`` when ``high`` is None, else the point ``draw`` (in ``[0, 1)``) of ``[low, high]``."""
    return float(low) if high is None else float(low) + float(draw) * (float(high) - float(low))


def image_extent(matrix: np.ndarray, image_hw: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest ``(x, y)`` of the image's corners after ``matrix``."""
    corners = np.array([[0.0, 0.0, 1.0], [image_hw[1], image_hw[0], 1.0]])
    moved = (matrix @ corners.T)[:2]
    return moved.min(axis=1), moved.max(axis=1)


def _check_prob(prob: float, who: str) -> float:
    if not 0.0 <= float(prob) <= 1.0:
        raise ValueError(f"AffineTransformer.{who}: prob must be in [0, 1], got {prob}")
    return float(prob)


def _pair(value: Sequence[float] | None, who: str, what: str) -> tuple[float, float] | None:
    if value is None:
        return None
    pair = tuple(float(v) for v in value)
    if len(pair) != 2:
        raise ValueError(f"AffineTransformer.{who}: {what} must hold two values (x, y)")
    return pair


class TransformationStep(ABC):
    """One step of the affine chain, applied with probability ``prob``.

    Args:
        prob: the probability that the step happens.
    """

    def __init__(self, prob: float) -> None:
        self.prob = _check_prob(prob, type(self).__name__)

    @property
    def num_own_draws(self) -> int:
        """How many uniform numbers the step itself reads (its probability draw aside)."""
        return 0

    @property
    def num_draws(self) -> int:
        """How many uniform numbers the step reads in all, its probability draw included."""
        return 1 + self.num_own_draws

    def __call__(
        self, prior_trafo: np.ndarray, image_hw: Sequence[float], draws: np.ndarray
    ) -> np.ndarray:
        """``prior_trafo`` followed by this step (when ``draws[0] < prob``).

        Args:
            prior_trafo: the 3x3 matrix of the steps before.
            image_hw: the viewport size ``(height, width)``.
            draws: ``num_draws`` uniform numbers in ``[0, 1)``.
        """
        if float(draws[0]) < self.prob:
            return self._apply(prior_trafo, image_hw, draws[1:])
        return prior_trafo

    @abstractmethod
    def _apply(
        self, prior_trafo: np.ndarray, image_hw: Sequence[float], draws: np.ndarray
    ) -> np.ndarray:
        """``prior_trafo`` followed by this step, reading ``num_own_draws`` numbers."""

    def check_prev_types_compatible_and_add_current_type(self, prev_types: set[type]) -> set[type]:
        """The step types that may have happened up to this one.

        Raises:
            ValueError: a step that may happen before makes this one impossible.
        """
        return {*prev_types, type(self)}


class Translation(TransformationStep):
    """A shift by ``min_xy``, or by a random amount between ``min_xy`` and ``max_xy``.

    Args:
        prob: the probability of the step.
        min_xy: the (smallest) shift in pixels, ``(x, y)``.
        max_xy: the largest shift; None shifts by exactly ``min_xy``.
    """

    def __init__(
        self, prob: float, min_xy: Sequence[float], max_xy: Sequence[float] | None = None
    ) -> None:
        super().__init__(prob)
        self.min_xy = _pair(min_xy, "Translation", "min_xy")
        self.max_xy = _pair(max_xy, "Translation", "max_xy")

    @property
    def num_own_draws(self) -> int:
        return 2

    def _apply(self, prior_trafo, image_hw, draws):
        high = self.max_xy or (None, None)
        dx = in_range(draws[0], self.min_xy[0], high[0])
        dy = in_range(draws[1], self.min_xy[1], high[1])
        return translation_matrix(dx, dy) @ prior_trafo


class Rotation(TransformationStep):
    """A rotation about the centre by ``min_rot`` degrees, or a random angle up to ``max_rot``.

    Positive angles turn the image content anti-clockwise as seen on screen.

    Args:
        prob: the probability of the step.
        min_rot: the (smallest) angle in degrees.
        max_rot: the largest angle; None turns by exactly ``min_rot``.
    """

    def __init__(self, prob: float, min_rot: float, max_rot: float | None = None) -> None:
        super().__init__(prob)
        self.min_rot = float(min_rot)
        self.max_rot = None if max_rot is None else float(max_rot)

    @property
    def num_own_draws(self) -> int:
        return 1

    def _apply(self, prior_trafo, image_hw, draws):
        # y points down in images, so turning anti-clockwise on screen is a negative angle
        angle = -np.deg2rad(in_range(draws[0], self.min_rot, self.max_rot))
        cos, sin = np.cos(angle), np.sin(angle)
        linear = np.array([[cos, -sin], [sin, cos]])
        return about_point(linear, viewport_centre(image_hw)) @ prior_trafo


class UniformScaling(TransformationStep):
    """Scaling about the centre by one factor for both axes.

    Args:
        prob: the probability of the step.
        min_scaling: the (smallest) factor.
        max_scaling: the largest factor; None scales by exactly ``min_scaling``.
    """

    def __init__(self, prob: float, min_scaling: float, max_scaling: float | None = None) -> None:
        super().__init__(prob)
        self.min_scaling = float(min_scaling)
        self.max_scaling = None if max_scaling is None else float(max_scaling)

    @property
    def num_own_draws(self) -> int:
        return 1

    def _apply(self, prior_trafo, image_hw, draws):
        factor = in_range(draws[0], self.min_scaling, self.max_scaling)
        return about_point(np.diag([factor, factor]), viewport_centre(image_hw)) @ prior_trafo


class NonUniformScaling(TransformationStep):
    """Scaling about the centre with a factor per axis (``[-1, 1]`` mirrors horizontally).

    Args:
        prob: the probability of the step.
        min_scaling_xy: the (smallest) factors ``(x, y)``.
        max_scaling_xy: the largest factors; None scales by exactly ``min_scaling_xy``.
    """

    def __init__(
        self,
        prob: float,
        min_scaling_xy: Sequence[float],
        max_scaling_xy: Sequence[float] | None = None,
    ) -> None:
        super().__init__(prob)
        self.min_scaling_xy = _pair(min_scaling_xy, "NonUniformScaling", "min_scaling_xy")
        self.max_scaling_xy = _pair(max_scaling_xy, "NonUniformScaling", "max_scaling_xy")

    @property
    def num_own_draws(self) -> int:
        return 2

    def _apply(self, prior_trafo, image_hw, draws):
        high = self.max_scaling_xy or (None, None)
        sx = in_range(draws[0], self.min_scaling_xy[0], high[0])
        sy = in_range(draws[1], self.min_scaling_xy[1], high[1])
        return about_point(np.diag([sx, sy]), viewport_centre(image_hw)) @ prior_trafo


class Shearing(TransformationStep):
    """Shearing about the centre by angles ``(x, y)`` in degrees.

    Args:
        prob: the probability of the step.
        min_shearing_xy: the (smallest) angles ``(x, y)``.
        max_shearing_xy: the largest angles; None shears by exactly ``min_shearing_xy``.
    """

    def __init__(
        self,
        prob: float,
        min_shearing_xy: Sequence[float],
        max_shearing_xy: Sequence[float] | None = None,
    ) -> None:
        super().__init__(prob)
        self.min_shearing_xy = _pair(min_shearing_xy, "Shearing", "min_shearing_xy")
        self.max_shearing_xy = _pair(max_shearing_xy, "Shearing", "max_shearing_xy")

    @property
    def num_own_draws(self) -> int:
        return 2

    def _apply(self, prior_trafo, image_hw, draws):
        high = self.max_shearing_xy or (None, None)
        ax = np.deg2rad(in_range(draws[0], self.min_shearing_xy[0], high[0]))
        ay = np.deg2rad(in_range(draws[1], self.min_shearing_xy[1], high[1]))
        linear = np.array([[1.0, np.tan(ax)], [np.tan(ay), 1.0]])
        return about_point(linear, viewport_centre(image_hw)) @ prior_trafo


def _refuse_after_turning(step: TransformationStep, prev_types: set[type]) -> set[type]:
    if Rotation in prev_types or Shearing in prev_types:
        raise ValueError(
            f"Cannot perform `{type(step).__name__}` if rotation or shearing are (potentially) "
            "performed before."
        )
    return {*prev_types, type(step)}


class ShiftInsideOriginalImage(TransformationStep):
    """A random shift that keeps the viewport covered by the image, per enabled axis.

    On an axis where the (scaled) image is at least as large as the viewport, the shift is drawn
    so that the image covers the viewport (bringing it back if it was moved out); where it is
    smaller, so that the image stays inside the viewport. Not allowed after a possible rotation
    or shearing.

    Args:
        prob: the probability of the step.
        shift_x: shift along x.
        shift_y: shift along y.
    """

    def __init__(self, prob: float, shift_x: bool, shift_y: bool) -> None:
        super().__init__(prob)
        self.shift_x = bool(shift_x)
        self.shift_y = bool(shift_y)

    @property
    def num_own_draws(self) -> int:
        return 2

    def _apply(self, prior_trafo, image_hw, draws):
        low, high = image_extent(prior_trafo, image_hw)
        size = np.array([image_hw[1], image_hw[0]], dtype=np.float64)
        min_shift = np.minimum(-low, size - high)
        max_shift = np.maximum(-low, size - high)
        shift = [0.0, 0.0]
        for axis, enabled in enumerate((self.shift_x, self.shift_y)):
            if enabled and min_shift[axis] <= max_shift[axis]:
                shift[axis] = in_range(draws[axis], min_shift[axis], max_shift[axis])
        return translation_matrix(*shift) @ prior_trafo

    def check_prev_types_compatible_and_add_current_type(self, prev_types: set[type]) -> set[type]:
        return _refuse_after_turning(self, prev_types)


class ShiftToAlignWithOriginalImageBorder(TransformationStep):
    """A shift that puts one edge of the image on the same edge of the viewport.

    Not allowed after a possible rotation or shearing.

    Args:
        prob: the probability of the step.
        border: the viewport edge to align with.
    """

    class Border(Enum):
        """The viewport edges."""

        TOP = 0
        LEFT = 1
        BOTTOM = 2
        RIGHT = 3

    def __init__(self, prob: float, border: ShiftToAlignWithOriginalImageBorder.Border) -> None:
        super().__init__(prob)
        if not isinstance(border, self.Border):
            raise TypeError(
                "AffineTransformer.ShiftToAlignWithOriginalImageBorder: border must be a "
                f"ShiftToAlignWithOriginalImageBorder.Border, got {border!r}"
            )
        self._border = border

    def _apply(self, prior_trafo, image_hw, draws):
        low, high = image_extent(prior_trafo, image_hw)
        shifts = {
            self.Border.TOP: (0.0, -low[1]),
            self.Border.LEFT: (-low[0], 0.0),
            self.Border.BOTTOM: (0.0, image_hw[0] - high[1]),
            self.Border.RIGHT: (image_hw[1] - high[0], 0.0),
        }
        return translation_matrix(*shifts[self._border]) @ prior_trafo

    def check_prev_types_compatible_and_add_current_type(self, prev_types: set[type]) -> set[type]:
        return _refuse_after_turning(self, prev_types)


class Selection(TransformationStep):
    """One of several step sequences, chosen with the given probabilities.

    Args:
        prob: the probability that any option happens.
        option_probs: the probability of each option (they sum to 1).
        options: per option, a step or a sequence of steps.
    """

    def __init__(
        self,
        prob: float,
        option_probs: Sequence[float],
        options: Sequence[TransformationStep | Sequence[TransformationStep]],
    ) -> None:
        super().__init__(prob)
        if len(options) != len(option_probs):
            raise ValueError(
                "AffineTransformer.Selection: Number of per-option probabilities and options "
                f"does not match ({len(option_probs)} and {len(options)})"
            )
        cumulative = np.cumsum([float(p) for p in option_probs])
        if not len(cumulative) or abs(cumulative[-1] - 1.0) > _SUM_TOLERANCE:
            raise ValueError(
                "AffineTransformer.Selection: Probabilities for options do not sum up to 1"
            )
        self._options = [
            [option] if isinstance(option, TransformationStep) else list(option)
            for option in options
        ]
        self._options_accum_prob = cumulative.tolist()

    @property
    def num_own_draws(self) -> int:
        return 1 + sum(step.num_draws for option in self._options for step in option)

    def _apply(self, prior_trafo, image_hw, draws):
        chosen = next(
            (i for i, bound in enumerate(self._options_accum_prob) if draws[0] <= bound),
            len(self._options) - 1,
        )
        offset = 1
        for index, option in enumerate(self._options):
            for step in option:
                own = draws[offset : offset + step.num_draws]
                offset += step.num_draws
                if index == chosen:
                    prior_trafo = step(prior_trafo, image_hw, own)
        return prior_trafo

    def check_prev_types_compatible_and_add_current_type(self, prev_types: set[type]) -> set[type]:
        reached = set(prev_types)
        for option in self._options:
            types = set(prev_types)
            for step in option:
                types = step.check_prev_types_compatible_and_add_current_type(types)
            reached |= types
        return reached
