"""Automatic augmentations: AutoAugment, RandAugment and TrivialAugment, in DALI's layout.

A user-level library built on ``fn`` and conditionals: ``import feedline`` does not import it.
Use it in a pipeline defined with ``@pipeline_def(enable_conditionals=True)``::

    from feedline.auto_aug import auto_augment, rand_augment, trivial_augment
"""
